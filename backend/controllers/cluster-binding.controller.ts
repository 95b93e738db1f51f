/** The ClusterBinding health controller, wired: keys are ClusterBindings `<cluster ns>/cluster`. */
import { byRef, Controller, objectKey, refKey } from '../../controller';
import { bindObjects, CLUSTER_BINDING_NAME, type Condition } from '../../exports/bind-api';
import { BindResources, isNotFound } from '../kube';
import { VERSION } from '../../lib/version';
import { BackendAnnotations } from '../labels';
import { deleteLegacyTokens } from '../provision/klutch-adoption';
import { KUBECONFIG_SECRET } from '../provision/kubeconfig';
import { ABANDONED_AFTER_MS, reconcileClusterBinding, type ClusterBindingDeps } from './cluster-binding.reconcile';
import { ours, type ControllerDeps } from './deps';

/** Conditions as written, without their times (a transition a second later says the same). */
const said = (conditions: readonly Condition[]) => JSON.stringify(conditions.map(({ lastTransitionTime: _, ...c }) => c));

export function clusterBindingsController(d: ControllerDeps): Controller {
  const clusterBindings = bindObjects(d.clients.custom, BindResources.clusterBindings);
  /** The last status write per ClusterBinding: the version it was written onto and what it said (bounded below). */
  const written = new Map<string, { resourceVersion: string | undefined; said: string }>();
  const deps: ClusterBindingDeps = {
    abandonedAfterMs: d.abandonedConsumerAfterMs ?? ABANDONED_AFTER_MS,
    warn: d.warn,
    getClusterBinding: (ref) => d.leader.clusterBindings.get(ref.name, ref.namespace),
    getKubeconfigSecret: (ns) => d.leader.kubeconfigs.get(KUBECONFIG_SECRET, ns),
    deleteKubeconfigSecret: (namespace, uid) =>
      d.clients.core.deleteNamespacedSecret({ name: KUBECONFIG_SECRET, namespace, body: { preconditions: { uid } } }).then(
        () => undefined,
        (e: unknown) => {
          if (!isNotFound(e)) throw e;
        },
      ),
    // A namespace this backend made never held one: no list for it.
    deleteLegacyTokens: async (namespace) =>
      d.leader.namespaces.get(namespace)?.metadata?.annotations?.[BackendAnnotations.provisioned] === 'true'
        ? []
        : deleteLegacyTokens(d.clients, namespace),
    annotate: (ref, annotations) => clusterBindings.patch({ namespace: ref.namespace!, name: ref.name }, { metadata: { annotations } }),
    backendVersion: VERSION,
    writeConditions: async (ref, conditions) => {
      const before = d.leader.clusterBindings.get(ref.name, ref.namespace)?.metadata.resourceVersion;
      await clusterBindings.patchStatus({ namespace: ref.namespace!, name: ref.name }, { conditions });
      if (written.size > 10_000) written.clear();
      written.set(refKey(ref), { resourceVersion: before, said: said(conditions) });
    },
    justWritten: (b, conditions) => {
      const w = written.get(objectKey(b));
      return w !== undefined && w.resourceVersion === b.metadata.resourceVersion && w.said === said(conditions);
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
