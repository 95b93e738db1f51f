/**
 * The consumers' ClusterRoles, wired: keys are cluster namespaces, from their exports, themselves, the templates, and
 * the ClusterRoles and ClusterRoleBindings themselves.
 */
import { byRef, Controller } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { APPLY_PATCH, FIELD_MANAGER, isNotFound } from '../kube';
import { Labels } from '../labels';
import { reconcileConsumerRbac, type ConsumerRbacDeps } from './consumer-rbac.reconcile';
import { ours, type ControllerDeps } from './deps';
import { consumerGrants } from './grants';

export function consumerRbacController(d: ControllerDeps): Controller {
  const rbac = d.clients.rbac;
  const deps: ConsumerRbacDeps = {
    consumerScope: d.consumerScope,
    getNamespace: (name) => d.leader.namespaces.get(name),
    grants: (ns) => consumerGrants(d, ns),
    getClusterRole: (name) => d.leader.clusterRoles.get(name),
    getClusterRoleBinding: (name) => d.leader.clusterRoleBindings.get(name),
    applyClusterRole: async (body) => {
      await rbac.patchClusterRole({ name: body.metadata!.name!, body, fieldManager: FIELD_MANAGER, force: true }, APPLY_PATCH);
    },
    applyClusterRoleBinding: async (body) => {
      await rbac.patchClusterRoleBinding({ name: body.metadata!.name!, body, fieldManager: FIELD_MANAGER, force: true }, APPLY_PATCH);
    },
    deleteClusterRoleBinding: (name) =>
      rbac.deleteClusterRoleBinding({ name }).then(
        () => undefined,
        (e: unknown) => {
          if (!isNotFound(e)) throw e;
        },
      ),
  };
  const c = new Controller({
    name: 'consumerrbac',
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref) => reconcileConsumerRbac(deps, ref)),
  });
  const isCluster = (name: string | undefined, annotations: Record<string, string> | undefined) =>
    Boolean(name && annotations?.[Annotations.identity] && ours(d, name));
  const clusterNamespaces = () =>
    d.leader.namespaces
      .list()
      .filter((ns) => isCluster(ns.metadata?.name, ns.metadata?.annotations))
      .map((ns) => ns.metadata!.name!);
  c.watch(d.leader.exports, (e) => (ours(d, e.metadata.namespace) ? [e.metadata.namespace!] : []));
  c.watch(d.leader.namespaces, (ns) => (isCluster(ns.metadata?.name, ns.metadata?.annotations) ? [ns.metadata!.name!] : []));
  // Someone else's change to a consumer's ClusterRole or ClusterRoleBinding is undone.
  const owned = (o: { metadata?: { labels?: Record<string, string> } }) => {
    const ns = o.metadata?.labels?.[Labels.clusterNamespace];
    return ns && ours(d, ns) ? [ns] : [];
  };
  c.watch(d.leader.clusterRoles, owned);
  c.watch(d.leader.clusterRoleBindings, owned);
  // A template that goes or changes changes what is granted.
  c.watch(d.serving.templates, clusterNamespaces);
  return c;
}
