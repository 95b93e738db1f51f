/**
 * What the controllers of one bound API share: the resource, the app-cluster informer over its objects, the
 * provider informers over its copies (one per assigned provider namespace), and typed clients for both sides.
 */
import type { Logger } from 'pino';
import { Controller, type ReconcileResult, type WatchInformer } from '../../../controller';
import { APPLY_PATCH, JSON_PATCH, SYNCER_FIELD_MANAGER } from '../../../exports/bind-api';
import type { KubeClients } from '../../kube/client';
import { isConflict, isNotFound, messageOf } from '../../../lib/kube-errors';
import type { Direction, Stopwatch } from '../../metrics';
import type { NamespacedInformers } from '../../kube/namespaced-informers';
import type { Obj, ResourceRef } from '../../kube/objects';
import type { Runtime } from '../../runtime';
import type { ProviderConnection } from '../connection';
import type { Sides } from './conversion';
import type { Hold } from '../../../lib/claim-hold';

export interface ExportContext {
  readonly rt: Runtime;
  readonly conn: ProviderConnection;
  /** The resource in the app cluster (its version there). */
  readonly resource: ResourceRef;
  /** The resource on the control plane, and how objects cross between the two versions (conversion.ts). */
  readonly sides: Sides;
  /** Whether the CRD has the status subresource (writes go to /status then). */
  readonly statusSubresource: boolean;
  /** Whether its status has conditions (a claim's): its Ready condition then names what holds it (lib/claim-hold.ts). */
  readonly statusConditions: boolean;
  /** Names controllers and metrics: the binding's `namespace/name`. */
  readonly name: string;
  readonly log: Logger;
  /** App-cluster objects of the resource, all namespaces. */
  readonly consumer: WatchInformer<Obj>;
  /** Provider copies, per assigned provider namespace. */
  readonly provider: NamespacedInformers;
  /** What holds the binding, while it is not Ready (lib/claim-hold.ts bindingHold). */
  readonly bindingHold?: () => Hold | undefined;
}

export const consumerObj = (x: ExportContext, namespace: string, name: string): Obj | undefined => x.consumer.get(name, namespace);
export const providerObj = (x: ExportContext, namespace: string, name: string): Obj | undefined => x.provider.get(namespace, name);

/** Typed calls for the resource on one side. */
export function resourceClient(clients: KubeClients, r: ResourceRef) {
  const base = { group: r.group, version: r.version, plural: r.resource };
  return {
    async read(namespace: string, name: string): Promise<Obj | undefined> {
      try {
        return (await clients.custom.getNamespacedCustomObject({ ...base, namespace, name })) as Obj;
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw e;
      }
    },
    async apply(o: Obj): Promise<Obj> {
      return (await clients.custom.patchNamespacedCustomObject(
        { ...base, namespace: o.metadata.namespace!, name: o.metadata.name, body: o, fieldManager: SYNCER_FIELD_MANAGER, force: true },
        APPLY_PATCH,
      )) as Obj;
    },
    /** Deletes the object with this uid; gone already, or replaced by another of the same name, is fine. */
    async delete(namespace: string, name: string, uid: string): Promise<void> {
      try {
        await clients.custom.deleteNamespacedCustomObject({ ...base, namespace, name, body: uid ? { preconditions: { uid } } : {} });
      } catch (e) {
        if (!isNotFound(e) && !isConflict(e)) throw e;
      }
    },
    async patch(namespace: string, name: string, ops: unknown[], status = false): Promise<Obj> {
      const call = status ? clients.custom.patchNamespacedCustomObjectStatus : clients.custom.patchNamespacedCustomObject;
      return (await call.call(clients.custom, { ...base, namespace, name, body: ops }, JSON_PATCH)) as Obj;
    },
  };
}

/** JSON-patch path segment escaping (RFC 6901). */
export const pointer = (s: string): string => s.replaceAll('~', '~0').replaceAll('/', '~1');

/**
 * A controller of one bound API over `namespace/name` keys, the one way all three are built: errors are counted per
 * direction and name the object; the stopwatch that times writes from their announcing event is cleared after each
 * reconcile, so it never outgrows the queue.
 */
export function syncController(
  x: ExportContext,
  o: {
    readonly name: string;
    readonly direction: Direction;
    readonly failure: (key: string) => string;
    readonly reconcile: (namespace: string, name: string, key: string) => Promise<ReconcileResult>;
  },
  watch: Stopwatch,
): Controller {
  return new Controller({
    name: `${o.name}/${x.name}`,
    workers: x.rt.workers,
    log: x.log,
    registry: x.rt.registry,
    reconcile: async (key) => {
      const [namespace, name] = key.split('/') as [string, string];
      try {
        return await o.reconcile(namespace, name, key);
      } catch (e) {
        x.rt.metrics.syncErrors.inc({ direction: o.direction });
        throw new Error(`${o.failure(key)}: ${messageOf(e)}`, { cause: e });
      } finally {
        watch.clear(key);
      }
    },
  });
}
