/**
 * Spec up: one consumer object (key `namespace/name`) → its provider copy. Level-based: every call re-reads the
 * caches and does the next step, so a missed event or a restart only delays work, never loses it.
 *
 * Order for a new object: APIServiceNamespace for its namespace → wait for the provider namespace → finalizer and
 * `bound` annotation on the consumer object → apply the copy upstream (server-side apply, field manager
 * klutch.anynines.com, force). Deletion: delete the copy upstream, wait until it is gone (confirmed by a live read,
 * not a cache that may lag), then release the finalizer — so a claim never disappears while its twin lives on.
 */
import type { ReconcileResult } from '../../../../controller';
import { Annotations, SYNCER_FINALIZER } from '../../../../exports/bind-api';
import type { Hold } from '../../../../lib/claim-hold';
import { isForbidden, messageOf } from '../../../../lib/kube-errors';
import { hasFinalizer, isDeleting, type Obj } from '../../../kube/objects';
import type { NamespaceMap } from '../../../names';
import { needsApply, upstreamOf } from './upstream';

export interface SpecDeps {
  /** The consumer object from the cache; undefined when it is gone. */
  getConsumer(namespace: string, name: string): Obj | undefined;
  readonly namespaces: NamespaceMap;
  /** Creates the APIServiceNamespace for a consumer namespace (one that exists already is fine). */
  ensureServiceNamespace(consumerNamespace: string): Promise<void>;
  /** The provider copy from the cache. */
  getProvider(namespace: string, name: string): Obj | undefined;
  /** The provider copy read from the API server: the word that counts before a finalizer is released. */
  readProvider(namespace: string, name: string): Promise<Obj | undefined>;
  /** Server-side apply of the provider copy. */
  applyProvider(desired: Obj): Promise<Obj>;
  /** The copy as the control plane stores it (its version, where that is not the app cluster's). @default as it is */
  toProvider?(copy: Obj): Obj;
  /** Deletes the provider copy with this uid (gone already is fine). */
  deleteProvider(namespace: string, name: string, uid: string): Promise<void>;
  /** Replaces the consumer object's finalizers (guarded by the old list) and sets annotations. */
  updateConsumerMeta(consumer: Obj, finalizers: string[], annotations: Record<string, string>): Promise<Obj>;
  /**
   * Whether exactly `desired` was applied moments ago: the provider cache may not show it yet, and applying it again
   * would only cost the API server a write. @default never
   */
  justApplied?(desired: Obj): boolean;
  /** Tells the user something only they can fix (an Event on the object, a log line). */
  warn(consumer: Obj, reason: string, message: string): void;
  /**
   * Says on the object's Ready condition what holds it, where it is a claim and nothing upstream speaks for it yet
   * (its creation refused). @default nothing
   */
  hold?(consumer: Obj, hold: Hold): Promise<void>;
  /** Observes a write, for latency metrics. */
  observe?(what: 'applied' | 'deleted' | 'released', consumer: Obj): void;
}

/** A safety net for waits whose end normally arrives as an event. */
const WAIT_MS = 30_000;

export async function reconcileSpec(deps: SpecDeps, namespace: string, name: string): Promise<ReconcileResult> {
  let consumer = deps.getConsumer(namespace, name);
  if (!consumer) return undefined; // gone: the status syncer deletes a copy left behind
  const mapped = deps.namespaces.providerNamespace(namespace);

  if (isDeleting(consumer)) {
    if (!hasFinalizer(consumer, SYNCER_FINALIZER)) return undefined;
    if (mapped.state === 'assigned') {
      // A live read: a cache that has not seen the copy yet must not release the finalizer.
      const p = await deps.readProvider(mapped.namespace, name);
      if (p && isBound(p)) {
        if (!isDeleting(p)) {
          await deps.deleteProvider(mapped.namespace, name, p.metadata.uid ?? '');
          deps.observe?.('deleted', consumer);
        }
        return { requeueAfterMs: WAIT_MS }; // the copy's deletion event brings us back sooner
      }
    }
    // Without an assigned provider namespace nothing was ever created upstream.
    await deps.updateConsumerMeta(
      consumer,
      (consumer.metadata.finalizers ?? []).filter((f) => f !== SYNCER_FINALIZER),
      {},
    );
    deps.observe?.('released', consumer);
    return undefined;
  }

  if (mapped.state === 'missing') {
    await deps.ensureServiceNamespace(namespace);
    return { requeueAfterMs: WAIT_MS }; // the APIServiceNamespace's status update brings us back sooner
  }
  if (mapped.state === 'pending') return { requeueAfterMs: WAIT_MS };

  if (!hasFinalizer(consumer, SYNCER_FINALIZER) || consumer.metadata.annotations?.[Annotations.bound] !== 'true') {
    consumer = await deps.updateConsumerMeta(
      consumer,
      hasFinalizer(consumer, SYNCER_FINALIZER)
        ? (consumer.metadata.finalizers ?? [])
        : [...(consumer.metadata.finalizers ?? []), SYNCER_FINALIZER],
      { [Annotations.bound]: 'true' },
    );
  }

  const copy = upstreamOf(consumer, mapped.namespace);
  const desired = deps.toProvider ? deps.toProvider(copy) : copy;
  const p = deps.getProvider(mapped.namespace, name);
  if (p && !isBound(p)) {
    deps.warn(
      consumer,
      'UpstreamConflict',
      `${p.kind} ${mapped.namespace}/${name} already exists on the provider and was not created by the konnector (it lacks the ${Annotations.bound} annotation); rename this object or ask the provider to remove theirs`,
    );
    return undefined; // its deletion upstream brings us back
  }
  if (p && isDeleting(p)) return { requeueAfterMs: WAIT_MS }; // recreated once it is gone
  if (!p && deps.justApplied?.(desired)) return undefined; // its add event brings us back
  if (!p || needsApply(desired, p)) {
    try {
      await deps.applyProvider(desired);
    } catch (e) {
      // Refused by the provider's admission (its ResourceQuota on claims, --claim-quota; an admission policy, such as
      // the one that keeps Crossplane's fields of a claim Crossplane's): the app team sees why on its claim, not only
      // in our log, and the konnector tries again later rather than in a tight backoff.
      // A claim refused at its creation also says so on its Ready condition: no status comes from upstream for it.
      const refused = `the provider refused ${consumer.kind} ${consumer.metadata.namespace}/${consumer.metadata.name}: ${messageOf(e)}`;
      const why =
        isForbidden(e) && /exceeded quota/.test(messageOf(e))
          ? { reason: 'QuotaExceeded', todo: 'delete one you no longer need or ask the platform operator for more' }
          : isForbidden(e) && /ValidatingAdmissionPolicy .* denied request/.test(messageOf(e))
            ? { reason: 'UpstreamRefused', todo: 'change the object in this cluster as the message says' }
            : undefined;
      if (!why) throw e;
      deps.warn(consumer, why.reason, `${refused}; ${why.todo}`);
      if (!p) await deps.hold?.(consumer, { hop: 'control plane', reason: why.reason, said: refused, todo: why.todo });
      return { requeueAfterMs: WAIT_MS };
    }
    deps.observe?.('applied', consumer);
  }
  return undefined;
}

const isBound = (o: Obj): boolean => o.metadata.annotations?.[Annotations.bound] === 'true';
