/**
 * Namespace deletion of one provider connection, wired: keys are app-namespace names, enqueued by the connection's
 * APIServiceNamespaces and by app namespaces being deleted. The reconcile reads the connection's cache and asks the
 * app cluster's API server only when its namespace cache no longer holds the namespace.
 */
import { byRef, Controller } from '../../controller';
import { bindObjects } from '../../exports/bind-api';
import { isNotFound, messageOf } from '../../lib/kube-errors';
import { BindResources, type Runtime } from '../runtime';
import type { ProviderConnection } from './connection';
import { reconcileNamespaceDeletion, type NamespaceDeletionDeps } from './namespacedeletion.reconcile';

export function namespaceDeletionController(conn: ProviderConnection, rt: Runtime): Controller {
  const ns = conn.namespace;
  const serviceNamespaces = bindObjects(conn.clients.custom, BindResources.serviceNamespaces);
  const deps: NamespaceDeletionDeps = {
    getServiceNamespace: (n) => conn.serviceNamespaces.get(n, ns),
    consumerNamespaceExists: async (n) => {
      if (rt.namespaces.get(n)) return true;
      try {
        await rt.consumer.core.readNamespace({ name: n });
        return true;
      } catch (e) {
        if (isNotFound(e)) return false;
        throw new Error(`cannot read app namespace ${n}: ${messageOf(e)}`, { cause: e });
      }
    },
    deleteServiceNamespace: async (n, uid) => {
      try {
        await serviceNamespaces.delete({ namespace: ns, name: n }, uid);
      } catch (e) {
        throw new Error(`cannot delete APIServiceNamespace ${ns}/${n}: ${messageOf(e)}`, { cause: e });
      }
    },
  };
  const ctl = new Controller({
    name: `namespacedeletion/${ns}`,
    log: conn.log,
    registry: rt.registry,
    reconcile: byRef((ref, ctx) => reconcileNamespaceDeletion(deps, ref, ctx)),
  });
  ctl.watch(conn.serviceNamespaces, (sn) => [sn.metadata!.name!]);
  ctl.watch(rt.namespaces, (n, event) => (event === 'delete' ? [n.metadata!.name!] : []));
  return ctl;
}
