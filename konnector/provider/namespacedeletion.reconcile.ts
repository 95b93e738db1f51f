/**
 * Namespace deletion: when an app namespace is gone, its APIServiceNamespace on the provider goes too, and the
 * backend removes the provider namespace it made for it. Only once the API server confirms the namespace is gone —
 * it outlives its objects, so by then every claim in it has been deleted upstream through its finalizer.
 */
import type { ObjectRef, ReconcileContext, ReconcileResult } from '../../controller';
import type { APIServiceNamespace } from '../../exports/bind-api';

export interface NamespaceDeletionDeps {
  /** The APIServiceNamespace of an app namespace (same name), from the connection's cache. */
  getServiceNamespace(name: string): APIServiceNamespace | undefined;
  /** Whether the app namespace exists: the cache first, then the API server. */
  consumerNamespaceExists(name: string): Promise<boolean>;
  /** Deletes the APIServiceNamespace with this uid (gone already is done). */
  deleteServiceNamespace(name: string, uid: string): Promise<void>;
}

/** `ref` names an app namespace (the key of its APIServiceNamespace on the provider: the same name). */
export async function reconcileNamespaceDeletion(
  d: NamespaceDeletionDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const sn = d.getServiceNamespace(ref.name);
  if (!sn || sn.metadata.deletionTimestamp) return undefined;
  if (await d.consumerNamespaceExists(ref.name)) return undefined;
  ctx.log.info({ namespace: ref.name }, 'app namespace is gone: deleting its APIServiceNamespace');
  await d.deleteServiceNamespace(ref.name, sn.metadata.uid ?? '');
  return undefined;
}
