/**
 * ClusterRole `klutch-binder-<cluster ns>` follows the consumer's exports and the templates (controllers/grants.ts):
 * every verb on the exported resources, nothing else (provision/rbac.ts). With consumer scope Cluster it is also
 * bound cluster-wide — the exported resources only, never a claimed one; with Namespaced a cluster-wide binding is
 * never made, and one left from a scope change (or by Klutch's backend, in a namespace adopted from it) is deleted.
 * The ref is a cluster namespace (`{ name }`).
 *
 * The caches decide what is due, so a bind's own events cost no requests: each object is written only when the
 * cached one differs. A consumer without exports needs no ClusterRole (none grants exactly what an empty one does),
 * unless one may exist that the cache does not hold: Klutch's backend made its own, unlabelled, in the namespaces
 * this backend adopted (all but those it made itself, annotation `klutch-kit.anynines.com/provisioned`).
 */
import type { V1ClusterRole, V1ClusterRoleBinding, V1Namespace, V1PolicyRule } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { BackendAnnotations } from '../labels';
import type { ConsumerScope } from '../options';
import type { ExportGrant } from '../provision/claimed';
import { consumerClusterRole, consumerClusterRoleBinding, consumerRoleName } from '../provision/rbac';

export interface ConsumerRbacDeps {
  readonly consumerScope: ConsumerScope;
  /** The cluster namespace from the cache. */
  getNamespace(name: string): V1Namespace | undefined;
  /** What the consumer was granted (controllers/grants.ts). */
  grants(clusterNamespace: string): readonly ExportGrant[];
  /** The backend's ClusterRoles and ClusterRoleBindings from the cache (those carrying its managed-by label). */
  getClusterRole(name: string): V1ClusterRole | undefined;
  getClusterRoleBinding(name: string): V1ClusterRoleBinding | undefined;
  /** Server-side applies. */
  applyClusterRole(role: V1ClusterRole): Promise<void>;
  applyClusterRoleBinding(binding: V1ClusterRoleBinding): Promise<void>;
  /** Deletes a ClusterRoleBinding (gone already is fine). */
  deleteClusterRoleBinding(name: string): Promise<void>;
}

/** A rule as a comparable string (the API server writes the fields in its own order). */
const ruleKey = (r: V1PolicyRule) =>
  JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.verbs ?? [], r.nonResourceURLs ?? []]);
const owner = (o: V1ClusterRole | V1ClusterRoleBinding) => o.metadata?.ownerReferences?.map((r) => r.uid).join(',');
const labelsHeld = (have: V1ClusterRole | V1ClusterRoleBinding, want: V1ClusterRole | V1ClusterRoleBinding) =>
  Object.entries(want.metadata?.labels ?? {}).every(([k, v]) => have.metadata?.labels?.[k] === v);

/** Whether the cached ClusterRole says what `want` says (rules, owner, labels). */
export function sameClusterRole(have: V1ClusterRole, want: V1ClusterRole): boolean {
  return (
    JSON.stringify((have.rules ?? []).map(ruleKey)) === JSON.stringify((want.rules ?? []).map(ruleKey)) &&
    owner(have) === owner(want) &&
    labelsHeld(have, want)
  );
}

/** Whether the cached ClusterRoleBinding says what `want` says (role, subjects, owner, labels). */
export function sameClusterRoleBinding(have: V1ClusterRoleBinding, want: V1ClusterRoleBinding): boolean {
  const subjects = (b: V1ClusterRoleBinding) => JSON.stringify((b.subjects ?? []).map((s) => [s.kind, s.name, s.namespace ?? '']));
  return (
    have.roleRef.kind === want.roleRef.kind &&
    have.roleRef.name === want.roleRef.name &&
    subjects(have) === subjects(want) &&
    owner(have) === owner(want) &&
    labelsHeld(have, want)
  );
}

export async function reconcileConsumerRbac(d: ConsumerRbacDeps, ref: ObjectRef): Promise<ReconcileResult> {
  const ns = d.getNamespace(ref.name);
  if (!ns?.metadata?.annotations?.[Annotations.identity] || ns.metadata.deletionTimestamp) return; // the owner reference removes the rest
  // Klutch's backend may have left a ClusterRole and ClusterRoleBinding of this name that the caches do not hold.
  const unseen = ns.metadata.annotations[BackendAnnotations.provisioned] !== 'true';
  const name = consumerRoleName(ref.name);
  const role = consumerClusterRole(ns, d.grants(ref.name));
  const cachedRole = d.getClusterRole(name);
  if (cachedRole ? !sameClusterRole(cachedRole, role) : role.rules!.length > 0 || unseen) await d.applyClusterRole(role);
  const cachedBinding = d.getClusterRoleBinding(name);
  if (d.consumerScope === 'Cluster') {
    const binding = consumerClusterRoleBinding(ns);
    if (!cachedBinding || !sameClusterRoleBinding(cachedBinding, binding)) await d.applyClusterRoleBinding(binding);
  } else if (cachedBinding || unseen) await d.deleteClusterRoleBinding(name);
  return;
}
