/**
 * What a consumer may do on the provider, exactly as wide as Klutch's and no wider:
 *
 * - ClusterRole `klutch-binder` (the backend applies it at start), bound by RoleBinding `klutch-binder` in the
 *   consumer's cluster namespace only: export requests, its ClusterBinding, exports, APIServiceNamespaces, reading
 *   its own namespace and the Secrets in it (the konnector copies the kubeconfig Secret from there).
 * - ClusterRole `klutch-binder-<cluster ns>` (owned by the cluster Namespace, so it goes with it): the exported
 *   resources and the resources their permission claims name. Bound by RoleBinding `klutch-binder` in each namespace
 *   made for an APIServiceNamespace; with consumer scope Cluster also by ClusterRoleBinding `klutch-binder-<cluster
 *   ns>`. With consumer scope Namespaced there is never a cluster-wide binding (Klutch makes one, which lets a
 *   consumer list Secrets in every namespace).
 */
import type { V1ClusterRole, V1ClusterRoleBinding, V1Namespace, V1PolicyRule, V1RoleBinding } from '@kubernetes/client-node';
import { BIND_GROUP, type APIServiceExport } from '../../exports/bind-api';
import { Labels, MANAGED_BY } from '../labels';

export const BINDER = 'klutch-binder';
const CRUD = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const labels = { [Labels.managedBy]: MANAGED_BY };

/** ClusterRole `klutch-binder`. */
export function binderClusterRole(): V1ClusterRole {
  const rules: V1PolicyRule[] = [
    { apiGroups: [BIND_GROUP], resources: ['apiserviceexportrequests'], verbs: CRUD },
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get'] },
    { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'watch', 'list'] },
    {
      apiGroups: [BIND_GROUP],
      resources: ['clusterbindings', 'clusterbindings/status'],
      verbs: ['get', 'list', 'watch', 'update', 'patch'],
    },
    {
      apiGroups: [BIND_GROUP],
      resources: ['apiserviceexports', 'apiserviceexports/status'],
      verbs: ['get', 'list', 'watch', 'update', 'patch'],
    },
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

/** ClusterRole `klutch-binder-<cluster ns>`: every verb the konnector uses on the exported and claimed resources. */
export function consumerClusterRole(ns: V1Namespace, exports: readonly APIServiceExport[]): V1ClusterRole {
  const seen = new Set<string>();
  const rules: V1PolicyRule[] = [];
  const add = (group: string, resource: string) => {
    const k = `${group}/${resource}`;
    if (seen.has(k)) return;
    seen.add(k);
    rules.push({ apiGroups: [group], resources: [resource], verbs: CRUD });
  };
  for (const e of [...exports].sort((a, b) => (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''))) {
    add(e.spec.group, e.spec.names.plural);
    for (const c of e.spec.permissionClaims ?? []) add(c.group ?? '', c.resource);
  }
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: {
      name: consumerRoleName(ns.metadata!.name!),
      labels: { ...labels, [Labels.clusterNamespace]: ns.metadata!.name! },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata!.name!, uid: ns.metadata!.uid!, blockOwnerDeletion: true },
      ],
    },
    rules,
  };
}

/** ClusterRoleBinding `klutch-binder-<cluster ns>` (consumer scope Cluster only), owned by the cluster Namespace. */
export function consumerClusterRoleBinding(ns: V1Namespace): V1ClusterRoleBinding {
  const name = consumerRoleName(ns.metadata!.name!);
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: {
      name,
      labels: { ...labels, [Labels.clusterNamespace]: ns.metadata!.name! },
      ownerReferences: [
        { apiVersion: 'v1', kind: 'Namespace', name: ns.metadata!.name!, uid: ns.metadata!.uid!, blockOwnerDeletion: true },
      ],
    },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: ns.metadata!.name! }],
  };
}
