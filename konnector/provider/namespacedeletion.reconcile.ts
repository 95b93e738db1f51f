/**
 * Namespace deletion: when an app namespace is gone, its APIServiceNamespace on the provider goes too, and the
 * backend removes the provider namespace it made for it. Only once the API server confirms the namespace is gone —
 * it outlives its objects, so by then every claim in it has been deleted upstream through its finalizer.
 */
import type { APIServiceNamespace } from '../../exports/bind-api';
import type { Result } from './export/spec/spec.reconcile';

export interface NamespaceDeletionDeps {
  getServiceNamespace(name: string): APIServiceNamespace | undefined;
  /** Whether the app namespace exists: the cache first, then the API server. */
  consumerNamespaceExists(name: string): Promise<boolean>;
  deleteServiceNamespace(name: string, uid: string): Promise<void>;
}

export async function reconcileNamespaceDeletion(d: NamespaceDeletionDeps, name: string): Promise<Result> {
  const sn = d.getServiceNamespace(name);
  if (!sn || sn.metadata.deletionTimestamp) return undefined;
  if (await d.consumerNamespaceExists(name)) return undefined;
  await d.deleteServiceNamespace(name, sn.metadata.uid ?? '');
  return undefined;
}
