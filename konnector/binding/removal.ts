/**
 * A deleted APIServiceBinding, in the order that never strands a claim behind its finalizer (kube-bind #352: deleting
 * the binding garbage-collected the CRD, whose objects then waited forever for a syncer that was already gone):
 *   1. the binding keeps its finalizer, its provider connection and its syncer running;
 *   2. every app-cluster object of the API is deleted; the syncer deletes each copy upstream, waits until it is
 *      gone, then releases the object's finalizer (claims are never orphaned upstream);
 *   3. once no object is left, the CRD (only if this binding owns it) is deleted and awaited;
 *   4. the syncer stops, the connection is released, and the binding's finalizer goes.
 * If the provider is unreachable, step 2 waits (the binding says so) instead of skipping the upstream deletion.
 */
import type { ReconcileContext } from '../../controller';
import { BINDING_FINALIZER, type APIServiceBinding } from '../../exports/bind-api';
import { controllerOf, hasFinalizer, isDeleting } from '../kube/objects';
import { deleting } from './binding.conditions';
import { bind } from './bind';
import type { BindingDeps, Outcome } from './binding.deps';

/** How soon a deletion that waits on objects, the syncer or the CRD looks again (their events come sooner). */
const WAIT_MS = 5_000;

export async function removeBinding(
  d: BindingDeps,
  key: string,
  b: APIServiceBinding,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<Outcome> {
  if (!hasFinalizer(b, BINDING_FINALIZER)) {
    await d.release(key);
    return {};
  }
  const crd = d.getCrd(b.metadata.name!);
  if (crd === undefined || controllerOf(crd)?.uid !== b.metadata.uid) {
    await d.release(key);
    await d.setFinalizers(
      b,
      (b.metadata.finalizers ?? []).filter((f) => f !== BINDING_FINALIZER),
    );
    return {};
  }
  const p = await bind(d, key, b, true, ctx);
  if (!p.syncer?.hasSynced() || !p.resource)
    return {
      status: {
        ...p,
        conditions: [
          ...p.conditions,
          deleting('cannot delete the objects of this API yet: the syncer is not running (see the other conditions)'),
        ],
      },
      requeueAfterMs: WAIT_MS,
    };
  const resource = p.resource;
  const objs = p.syncer.consumerObjects();
  if (objs.length) {
    await Promise.all(objs.filter((o) => !isDeleting(o)).map((o) => d.deleteConsumerObject(resource, o)));
    return {
      status: {
        ...p,
        conditions: [
          ...p.conditions,
          deleting(`deleting: ${objs.length} ${resource.kind} object(s) wait for their provider copies to be deleted`),
        ],
      },
      requeueAfterMs: WAIT_MS,
    };
  }
  if (!crd.metadata?.deletionTimestamp) {
    ctx.log.info({ crd: b.metadata.name }, 'binding deleted and its objects gone: deleting its CRD');
    await d.deleteCrd(b.metadata.name!, crd.metadata?.uid);
  }
  return { requeueAfterMs: 2_000 }; // the CRD's deletion event brings us back
}
