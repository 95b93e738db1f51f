/**
 * ClusterRole `klutch-binder-<cluster ns>` follows the consumer's exports and the templates (controllers/grants.ts):
 * every verb on the exported resources, nothing else (provision/rbac.ts), bound only in the consumer's own provider
 * namespaces (service-namespace.reconcile.ts). It is never bound cluster-wide: a ClusterRoleBinding of that name —
 * made by an earlier version in Cluster scope, or by Klutch's backend in a namespace adopted from it — let one
 * consumer create, change and delete every other consumer's claims, and is deleted in both scopes. With consumer
 * scope Cluster the consumer gets instead ClusterRole and ClusterRoleBinding `klutch-binder-<cluster ns>:list-watch`
 * (list and watch of the exported resources in every namespace, for Klutch's konnector's cluster-wide informer);
 * with Namespaced that binding is deleted too. The ref is a cluster namespace (`{ name }`).
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
import type { ConsumerScope } from '../consumer-access';
import type { ExportGrant } from '../provision/claimed';
import {
  consumerClusterRole,
  consumerClusterRoleBinding,
  consumerListWatchClusterRole,
  consumerListWatchName,
  consumerRoleName,
} from '../provision/rbac';

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
function sameClusterRole(have: V1ClusterRole, want: V1ClusterRole): boolean {
  return (
    JSON.stringify((have.rules ?? []).map(ruleKey)) === JSON.stringify((want.rules ?? []).map(ruleKey)) &&
    owner(have) === owner(want) &&
    labelsHeld(have, want)
  );
}

/** Whether the cached ClusterRoleBinding says what `want` says (role, subjects, owner, labels). */
function sameClusterRoleBinding(have: V1ClusterRoleBinding, want: V1ClusterRoleBinding): boolean {
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
  const grants = d.grants(ref.name);
  const role = consumerClusterRole(ns, grants);
  const cachedRole = d.getClusterRole(name);
  if (cachedRole ? !sameClusterRole(cachedRole, role) : role.rules!.length > 0 || unseen) await d.applyClusterRole(role);
  const listWatch = consumerListWatchName(ref.name);
  const cachedBinding = d.getClusterRoleBinding(listWatch);
  if (d.consumerScope === 'Cluster') {
    // Role before binding, and both before the wide binding goes: Klutch's konnector's informer never loses its list.
    const reader = consumerListWatchClusterRole(ns, grants);
    const cachedReader = d.getClusterRole(listWatch);
    if (cachedReader ? !sameClusterRole(cachedReader, reader) : reader.rules!.length > 0) await d.applyClusterRole(reader);
    const binding = consumerClusterRoleBinding(ns);
    // roleRef cannot change in place: a binding re-made by someone else to another role is replaced, not patched.
    if (cachedBinding && (cachedBinding.roleRef.kind !== binding.roleRef.kind || cachedBinding.roleRef.name !== binding.roleRef.name))
      await d.deleteClusterRoleBinding(listWatch);
    if (!cachedBinding || !sameClusterRoleBinding(cachedBinding, binding)) await d.applyClusterRoleBinding(binding);
  } else if (cachedBinding) {
    // Its ClusterRole stays: unbound it grants nothing (the backend may not delete ClusterRoles); the Namespace takes it.
    await d.deleteClusterRoleBinding(listWatch);
  }
  // Every verb in every namespace: an earlier version's Cluster-scope binding, or Klutch's (which the cache may not hold).
  if (d.getClusterRoleBinding(name) || unseen) await d.deleteClusterRoleBinding(name);
  return;
}
