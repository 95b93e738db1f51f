/**
 * ClusterRole `klutch-binder-<cluster ns>` follows the exports of a cluster namespace (provision/rbac.ts says what
 * it holds). With consumer scope Cluster it is also bound cluster-wide; with Namespaced a cluster-wide binding is
 * never made, and one left from a scope change is deleted.
 */
import { Controller, type ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { APPLY, FIELD_MANAGER, isNotFound } from '../kube';
import { consumerClusterRole, consumerClusterRoleBinding, consumerRoleName } from '../provision/rbac';
import type { ControllerDeps } from './deps';

export function consumerRbacController(d: ControllerDeps): Controller {
  const c = new Controller({ name: 'consumerrbac', log: d.log, registry: d.registry, reconcile: (key) => reconcileConsumerRbac(d, key) });
  c.watch(d.leader.exports, (e) => [e.metadata.namespace!]);
  c.watch(d.leader.namespaces, (ns) => (ns.metadata?.annotations?.[Annotations.identity] ? [ns.metadata.name!] : []));
  return c;
}

/** `key` is a cluster namespace's name. */
export async function reconcileConsumerRbac(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const ns = d.leader.namespaces.get(key);
  if (!ns?.metadata?.annotations?.[Annotations.identity] || ns.metadata.deletionTimestamp) return; // the owner reference removes the rest
  const exports = d.leader.exports.list(key);
  const role = consumerClusterRole(ns, exports);
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
