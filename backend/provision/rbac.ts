/**
 * What a consumer may do on the provider. Everything here is derived from operator-owned inputs only (templates and
 * CRDs, and the objects in the consumer's own provider namespaces), never from an export's spec, which a consumer
 * (or anyone) might have changed:
 *
 * - ClusterRole `klutch-binder` (the backend applies it at start), bound by RoleBinding `klutch-binder` in the
 *   consumer's cluster namespace only: export requests and APIServiceNamespaces; reading its ClusterBinding and
 *   exports and writing only their status (the konnector's heartbeat goes through the status subresource); reading
 *   its own namespace and, of its Secrets, only `kubeconfig` (the konnector gets it by name to copy rotated tokens):
 *   an adopted consumer's legacy token Secret sits beside it, and any token of the consumer would read it
 *   otherwise. `--claimed-access=Namespace` (Klutch's konnector runs an informer over the namespace's Secrets) keeps
 *   the namespace-wide read; the ClusterRole is one per control plane, so backends sharing one must agree on it.
 * - ClusterRole `klutch-binder-<cluster ns>` (owned by the cluster Namespace, so it goes with it): every verb on the
 *   exported resources, and nothing else. Bound only by RoleBinding `klutch-binder` in each namespace made for one of
 *   the consumer's APIServiceNamespaces, so a consumer writes only in its own provider namespaces — never another
 *   consumer's claims, whatever the consumer scope.
 * - ClusterRole and ClusterRoleBinding `klutch-binder-<cluster ns>:list-watch` (consumer scope Cluster only, owned
 *   by the cluster Namespace): list and watch of the exported resources in every namespace, because Klutch's
 *   konnector runs one informer over all namespaces for an export with informerScope Cluster. RBAC cannot narrow a
 *   cluster-wide list to some namespaces, so this reads other consumers' claims too (SECURITY.md, known limits); no
 *   write, and no claimed resource, is ever granted cluster-wide. The `:` keeps the name apart from any
 *   `klutch-binder-<namespace>` (a namespace name has none).
 * - Role `klutch-binder-claimed` (+ RoleBinding) in each namespace made for an APIServiceNamespace: the claimed
 *   objects (provision/claimed.ts), by name.
 */
import type { V1ClusterRole, V1ClusterRoleBinding, V1Namespace, V1PolicyRule, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import { BIND_GROUP, CLAIMED_ROLE, type GroupResource } from '../../exports/bind-api';
import { Labels, MANAGED_BY } from '../labels';
import type { ClaimedAccess } from '../consumer-access';

export const BINDER = 'klutch-binder';
const CRUD = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const LIST_WATCH = ['list', 'watch'];
const labels = { [Labels.managedBy]: MANAGED_BY };

/** The provider-side kubeconfig Secret of a cluster namespace (provision/kubeconfig.ts, which imports this file). */
const KUBECONFIG = 'kubeconfig';

/** ClusterRole `klutch-binder`; `access` is `--claimed-access`. */
export function binderClusterRole(access: ClaimedAccess = 'Object'): V1ClusterRole {
  const secrets: V1PolicyRule =
    access === 'Namespace'
      ? { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'watch', 'list'] }
      : { apiGroups: [''], resources: ['secrets'], resourceNames: [KUBECONFIG], verbs: ['get'] };
  const rules: V1PolicyRule[] = [
    { apiGroups: [BIND_GROUP], resources: ['apiserviceexportrequests'], verbs: CRUD },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    secrets,
    // Read only: a write to an export's spec or the ClusterBinding's spec would be the consumer granting itself.
    { apiGroups: [BIND_GROUP], resources: ['clusterbindings', 'apiserviceexports'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: [BIND_GROUP], resources: ['clusterbindings/status', 'apiserviceexports/status'], verbs: ['get', 'update', 'patch'] },
    { apiGroups: [BIND_GROUP], resources: ['apiservicenamespaces'], verbs: CRUD },
  ];
  return { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: BINDER, labels }, rules };
}

/** RoleBinding `klutch-binder` in `namespace` → ClusterRole `role`, for the consumer's ServiceAccount. */
export function binderRoleBinding(namespace: string, clusterNamespace: string, role: string): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: BINDER, namespace, labels },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: clusterNamespace }],
  };
}

/** The name of the per-consumer ClusterRole. */
export function consumerRoleName(clusterNamespace: string): string {
  return `${BINDER}-${clusterNamespace}`;
}

/** ClusterRole `klutch-binder-<cluster ns>`: every verb the konnector uses on the exported resources, only them. */
export function consumerClusterRole(ns: V1Namespace, exported: readonly Required<GroupResource>[]): V1ClusterRole {
  return ownedClusterRole(ns, consumerRoleName(ns.metadata!.name!), exported, CRUD);
}

/** What ends the name of the one ClusterRole bound cluster-wide (the containment policy allows no other binding). */
export const LIST_WATCH_SUFFIX = ':list-watch';

/** The name of the cluster-wide list/watch ClusterRole and its ClusterRoleBinding (consumer scope Cluster). */
export function consumerListWatchName(clusterNamespace: string): string {
  return `${BINDER}-${clusterNamespace}${LIST_WATCH_SUFFIX}`;
}

/** ClusterRole `klutch-binder-<cluster ns>:list-watch`: list and watch of the exported resources, nothing else. */
export function consumerListWatchClusterRole(ns: V1Namespace, exported: readonly Required<GroupResource>[]): V1ClusterRole {
  return ownedClusterRole(ns, consumerListWatchName(ns.metadata!.name!), exported, LIST_WATCH);
}

/** ClusterRoleBinding `klutch-binder-<cluster ns>:list-watch` (consumer scope Cluster only), owned by the cluster Namespace. */
export function consumerClusterRoleBinding(ns: V1Namespace): V1ClusterRoleBinding {
  const name = consumerListWatchName(ns.metadata!.name!);
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { ...labels, [Labels.clusterNamespace]: ns.metadata!.name! }, ownerReferences: ownedBy(ns) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: ns.metadata!.name! }],
  };
}

const ownedBy = (ns: V1Namespace) => [
  { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata!.name!, uid: ns.metadata!.uid!, blockOwnerDeletion: true },
];

function ownedClusterRole(
  ns: V1Namespace,
  name: string,
  exported: readonly Required<GroupResource>[],
  verbs: readonly string[],
): V1ClusterRole {
  const keys = [...new Set(exported.map((e) => `${e.resource}.${e.group}`))].sort();
  const rules: V1PolicyRule[] = keys.map((k) => {
    const dot = k.indexOf('.');
    return { apiGroups: [k.slice(dot + 1)], resources: [k.slice(0, dot)], verbs: [...verbs] };
  });
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { ...labels, [Labels.clusterNamespace]: ns.metadata!.name! }, ownerReferences: ownedBy(ns) },
    rules,
  };
}

/** Role `klutch-binder-claimed` in provider namespace `namespace` with `rules` (provision/claimed.ts). */
export function claimedRole(namespace: string, clusterNamespace: string, rules: readonly V1PolicyRule[]): V1Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: CLAIMED_ROLE, namespace, labels: { ...labels, [Labels.clusterNamespace]: clusterNamespace } },
    rules: [...rules],
  };
}

/** RoleBinding `klutch-binder-claimed` → Role `klutch-binder-claimed`, for the consumer's ServiceAccount. */
export function claimedRoleBinding(namespace: string, clusterNamespace: string): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: CLAIMED_ROLE, namespace, labels: { ...labels, [Labels.clusterNamespace]: clusterNamespace } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: CLAIMED_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: clusterNamespace }],
  };
}
