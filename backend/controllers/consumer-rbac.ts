/**
 * ClusterRole `klutch-binder-<cluster ns>` follows the consumer's exports and the templates (controllers/grants.ts):
 * every verb on the exported resources, nothing else (provision/rbac.ts). With consumer scope Cluster it is also
 * bound cluster-wide — the exported resources only, never a claimed one; with Namespaced a cluster-wide binding is
 * never made, and one left from a scope change is deleted.
 */
import { Controller, type ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { APPLY, FIELD_MANAGER, isNotFound } from '../kube';
import { consumerClusterRole, consumerClusterRoleBinding, consumerRoleName } from '../provision/rbac';
import { ours, type ControllerDeps } from './deps';
import { consumerGrants } from './grants';

export function consumerRbacController(d: ControllerDeps): Controller {
  const c = new Controller({ name: 'consumerrbac', log: d.log, registry: d.registry, reconcile: (key) => reconcileConsumerRbac(d, key) });
  const clusterNamespaces = () =>
    d.leader.namespaces
      .list()
      .filter((ns) => ns.metadata?.annotations?.[Annotations.identity] && ours(d, ns.metadata.name))
      .map((ns) => ns.metadata!.name!);
  c.watch(d.leader.exports, (e) => (ours(d, e.metadata.namespace) ? [e.metadata.namespace!] : []));
  c.watch(d.leader.namespaces, (ns) =>
    ns.metadata?.annotations?.[Annotations.identity] && ours(d, ns.metadata.name) ? [ns.metadata.name!] : [],
  );
  // A template that goes or changes changes what is granted.
  c.watch(d.serving.templates, clusterNamespaces);
  return c;
}

/** `key` is a cluster namespace's name. */
export async function reconcileConsumerRbac(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const ns = d.leader.namespaces.get(key);
  if (!ns?.metadata?.annotations?.[Annotations.identity] || ns.metadata.deletionTimestamp) return; // the owner reference removes the rest
  const role = consumerClusterRole(ns, consumerGrants(d, key));
  await d.clients.rbac.patchClusterRole({ name: role.metadata!.name!, body: role, fieldManager: FIELD_MANAGER, force: true }, APPLY);
  const name = consumerRoleName(key);
  if (d.consumerScope === 'Cluster') {
    const binding = consumerClusterRoleBinding(ns);
    await d.clients.rbac.patchClusterRoleBinding({ name, body: binding, fieldManager: FIELD_MANAGER, force: true }, APPLY);
  } else {
    await d.clients.rbac.deleteClusterRoleBinding({ name }).catch((e: unknown) => {
      if (!isNotFound(e)) throw e;
    });
  }
  return;
}
