/** Unbound consumers going, wired: keys are cluster namespaces (namespaces with an identity), from their objects' events. */
import { byRef, Controller } from '../../controller';
import { Annotations, bindObjects, CLUSTER_BINDING_NAME } from '../../exports/bind-api';
import { BindResources, isNotFound } from '../kube';
import { BackendAnnotations } from '../labels';
import { reconcileLifecycle, UNBOUND_TTL_MS, type ConsumerLifecycleDeps } from './consumer-lifecycle.reconcile';
import { ours, type ControllerDeps } from './deps';

export function consumerLifecycleController(d: ControllerDeps): Controller {
  const l = d.leader;
  const clusterBindings = bindObjects(d.clients.custom, BindResources.clusterBindings);
  const deps: ConsumerLifecycleDeps = {
    unboundTtlMs: d.unboundConsumerTtlMs ?? UNBOUND_TTL_MS,
    getNamespace: (name) => l.namespaces.get(name),
    getClusterBinding: (ns) => l.clusterBindings.get(CLUSTER_BINDING_NAME, ns),
    hasServiceNamespaces: (ns) => l.serviceNamespaces.list(ns).length > 0,
    hasExports: (ns) => l.exports.list(ns).length > 0,
    hasPendingRequests: (ns) => l.exportRequests.list(ns).some((r) => !r.status?.phase || r.status.phase === 'Pending'),
    markFirstExport: (namespace, at) =>
      clusterBindings.patch(
        { namespace, name: CLUSTER_BINDING_NAME },
        { metadata: { annotations: { [BackendAnnotations.firstExport]: at } } },
      ),
    deleteNamespace: (name) =>
      d.clients.core.deleteNamespace({ name }).then(
        () => undefined,
        (e: unknown) => {
          if (!isNotFound(e)) throw e;
        },
      ),
  };
  const c = new Controller({
    name: 'consumerlifecycle',
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileLifecycle(deps, ref, ctx)),
  });
  const cluster = (ns: string | undefined) =>
    ns && ours(d, ns) && l.namespaces.get(ns)?.metadata?.annotations?.[Annotations.identity] ? [ns] : [];
  c.watch(l.namespaces, (ns) => cluster(ns.metadata?.name));
  c.watch(l.exports, (e) => cluster(e.metadata.namespace));
  c.watch(l.clusterBindings, (b) => cluster(b.metadata.namespace));
  return c;
}
