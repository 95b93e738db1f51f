/**
 * ClusterRole `klutch-binder-<cluster ns>` follows the consumer's exports and the templates (controllers/grants.ts):
 * every verb on the exported resources, nothing else (provision/rbac.ts). With consumer scope Cluster it is also
 * bound cluster-wide — the exported resources only, never a claimed one; with Namespaced a cluster-wide binding is
 * never made, and one left from a scope change is deleted. The ref is a cluster namespace (`{ name }`).
 */
import type { V1ClusterRole, V1ClusterRoleBinding, V1Namespace } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import type { ConsumerScope } from '../options';
import type { ExportGrant } from '../provision/claimed';
import { consumerClusterRole, consumerClusterRoleBinding, consumerRoleName } from '../provision/rbac';

export interface ConsumerRbacDeps {
  readonly consumerScope: ConsumerScope;
  /** The cluster namespace from the cache. */
  getNamespace(name: string): V1Namespace | undefined;
  /** What the consumer was granted (controllers/grants.ts). */
  grants(clusterNamespace: string): readonly ExportGrant[];
  /** Server-side applies. */
  applyClusterRole(role: V1ClusterRole): Promise<void>;
  applyClusterRoleBinding(binding: V1ClusterRoleBinding): Promise<void>;
  /** Deletes a ClusterRoleBinding (gone already is fine). */
  deleteClusterRoleBinding(name: string): Promise<void>;
}

export async function reconcileConsumerRbac(d: ConsumerRbacDeps, ref: ObjectRef): Promise<ReconcileResult> {
  const ns = d.getNamespace(ref.name);
  if (!ns?.metadata?.annotations?.[Annotations.identity] || ns.metadata.deletionTimestamp) return; // the owner reference removes the rest
  await d.applyClusterRole(consumerClusterRole(ns, d.grants(ref.name)));
  if (d.consumerScope === 'Cluster') await d.applyClusterRoleBinding(consumerClusterRoleBinding(ns));
  else await d.deleteClusterRoleBinding(consumerRoleName(ref.name));
  return;
}
