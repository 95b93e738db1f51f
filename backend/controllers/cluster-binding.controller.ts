/** The ClusterBinding health controller, wired: keys are ClusterBindings `<cluster ns>/cluster`. */
import { byRef, Controller, objectKey, refKey } from '../../controller';
import { CLUSTER_BINDING_NAME } from '../../exports/bind-api';
import { BindResources, isNotFound, MERGE_PATCH } from '../kube';
import { KUBECONFIG_SECRET } from '../provision/kubeconfig';
import { ABANDONED_AFTER_MS, reconcileClusterBinding, type ClusterBindingDeps } from './cluster-binding.reconcile';
import { ours, type ControllerDeps } from './deps';

export function clusterBindingsController(d: ControllerDeps): Controller {
  const r = BindResources.clusterBindings;
  const deps: ClusterBindingDeps = {
    abandonedAfterMs: d.abandonedConsumerAfterMs ?? ABANDONED_AFTER_MS,
    getClusterBinding: (ref) => d.leader.clusterBindings.get(ref.name, ref.namespace),
    getKubeconfigSecret: (ns) => d.leader.kubeconfigs.get(KUBECONFIG_SECRET, ns),
    deleteKubeconfigSecret: (namespace, uid) =>
      d.clients.core.deleteNamespacedSecret({ name: KUBECONFIG_SECRET, namespace, body: { preconditions: { uid } } }).then(
        () => undefined,
        (e: unknown) => {
          if (!isNotFound(e)) throw e;
        },
      ),
    writeConditions: async (ref, conditions) => {
      await d.clients.custom.patchNamespacedCustomObjectStatus(
        { ...r, namespace: ref.namespace!, name: ref.name, body: { status: { conditions } } },
        MERGE_PATCH,
      );
    },
  };
  const c = new Controller({
    name: 'clusterbindings',
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileClusterBinding(deps, ref, ctx)),
  });
  c.watch(d.leader.clusterBindings, (b) => (ours(d, b.metadata.namespace) ? [objectKey(b)] : []));
  // A bind after a revocation makes the Secret again: the condition goes.
  c.watch(d.leader.kubeconfigs, (s) =>
    ours(d, s.metadata?.namespace) ? [refKey({ namespace: s.metadata!.namespace!, name: CLUSTER_BINDING_NAME })] : [],
  );
  return c;
}
