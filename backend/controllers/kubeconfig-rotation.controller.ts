/** Token rotation, wired: keys are kubeconfig Secrets `<cluster ns>/kubeconfig` (the leader's Secret informer). */
import { byRef, Controller, objectKey } from '../../controller';
import { ensureKubeconfig, KUBECONFIG_SECRET } from '../provision/kubeconfig';
import { ours, type ControllerDeps } from './deps';
import { reconcileKubeconfig, type KubeconfigRotationDeps } from './kubeconfig-rotation.reconcile';

export function kubeconfigRotationController(d: ControllerDeps): Controller {
  const deps: KubeconfigRotationDeps = {
    target: d.target,
    tokens: d.tokens,
    ours: (namespace) => ours(d, namespace),
    getSecret: (ref) => d.leader.kubeconfigs.get(ref.name, ref.namespace),
    rotate: (namespace) => ensureKubeconfig(d.clients, namespace, d.target, d.tokens, { create: false }),
  };
  const c = new Controller({
    name: 'kubeconfigs',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileKubeconfig(deps, ref, ctx)),
  });
  c.watch(d.leader.kubeconfigs, (s) => (s.metadata?.name === KUBECONFIG_SECRET && ours(d, s.metadata.namespace) ? [objectKey(s)] : []));
  return c;
}
