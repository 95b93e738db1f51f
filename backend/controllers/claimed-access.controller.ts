/**
 * Claimed access, wired: keys are provider namespaces, from their exports, the templates, the CRDs, the Role and
 * RoleBinding themselves, and the claimed and exported objects in them (metadata-only informers, made on first use).
 */
import { byRef, Controller } from '../../controller';
import { Annotations, CLAIMED_ROLE } from '../../exports/bind-api';
import { APPLY_PATCH, FIELD_MANAGER } from '../kube';
import { Labels } from '../labels';
import { reconcileClaimedAccess, type ClaimedAccessDeps } from './claimed-access.reconcile';
import { ours, type ControllerDeps } from './deps';
import { consumerGrants, storageVersion } from './grants';

export function claimedAccessController(d: ControllerDeps): Controller {
  const rbac = d.clients.rbac;
  const deps: ClaimedAccessDeps = {
    access: d.claimedAccess ?? 'Object',
    getNamespace: (name) => d.leader.namespaces.get(name),
    grants: (ns) => consumerGrants(d, ns),
    storageVersion: (name) => storageVersion(d, name),
    objectsSynced: (group, version, resource) => d.objects.ensure(group, version, resource).hasSynced(),
    objects: (group, resource, namespace) => d.objects.get(group, resource)?.list(namespace) ?? [],
    getRole: (ns) => d.leader.claimedRoles.get(CLAIMED_ROLE, ns),
    getRoleBinding: (ns) => d.leader.claimedRoleBindings.get(CLAIMED_ROLE, ns),
    applyRole: async (body) => {
      await rbac.patchNamespacedRole(
        { name: CLAIMED_ROLE, namespace: body.metadata!.namespace!, body, fieldManager: FIELD_MANAGER, force: true },
        APPLY_PATCH,
      );
    },
    applyRoleBinding: async (body) => {
      await rbac.patchNamespacedRoleBinding(
        { name: CLAIMED_ROLE, namespace: body.metadata!.namespace!, body, fieldManager: FIELD_MANAGER, force: true },
        APPLY_PATCH,
      );
    },
  };
  const c = new Controller({
    name: 'claimedaccess',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref) => reconcileClaimedAccess(deps, ref)),
  });
  const isProvider = (name: string | undefined): boolean =>
    ours(d, name) && Boolean(name && d.leader.namespaces.get(name)?.metadata?.annotations?.[Annotations.apiServiceNamespace]);
  const providerNamespaces = (clusterNamespace?: string) =>
    d.leader.namespaces
      .list()
      .filter(
        (ns) =>
          ns.metadata?.annotations?.[Annotations.apiServiceNamespace] &&
          ours(d, ns.metadata.name) &&
          (!clusterNamespace || ns.metadata.labels?.[Labels.clusterNamespace] === clusterNamespace),
      )
      .map((ns) => ns.metadata!.name!);
  c.watch(d.leader.namespaces, (ns) => (isProvider(ns.metadata?.name) ? [ns.metadata!.name!] : []));
  c.watch(d.leader.exports, (e) => (ours(d, e.metadata.namespace) ? providerNamespaces(e.metadata.namespace) : []));
  c.watch(d.serving.templates, () => providerNamespaces());
  c.watch(d.serving.crds, () => providerNamespaces());
  c.watch(d.leader.claimedRoles, (r) => (isProvider(r.metadata?.namespace) ? [r.metadata!.namespace!] : []));
  c.watch(d.leader.claimedRoleBindings, (r) => (isProvider(r.metadata?.namespace) ? [r.metadata!.namespace!] : []));
  d.objects.onNew((i) => c.watch(i, (o) => (isProvider(o.metadata?.namespace) ? [o.metadata!.namespace!] : [])));
  return c;
}
