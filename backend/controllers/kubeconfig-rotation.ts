/**
 * Token rotation: each provider-side kubeconfig Secret gets a new TokenRequest token `--token-refresh-before` its
 * token's expiry, written into the same Secret (the konnector copies it to the app cluster on every change). A
 * deleted Secret is not made again here: that is an unbind, and its token died with it.
 */
import { Controller, objectKey, splitKey, type ReconcileContext, type ReconcileResult } from '../../controller';
import { ensureKubeconfig, KUBECONFIG_SECRET } from '../provision/kubeconfig';
import type { ControllerDeps } from './deps';

export function kubeconfigRotationController(d: ControllerDeps): Controller {
  const c = new Controller({
    name: 'kubeconfigs',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: (key, ctx) => reconcileKubeconfig(d, key, ctx),
  });
  c.watch(d.leader.kubeconfigs, (s) => (s.metadata?.name === KUBECONFIG_SECRET ? [objectKey(s)] : []));
  return c;
}

export async function reconcileKubeconfig(d: ControllerDeps, key: string, ctx: Pick<ReconcileContext, 'log'>): Promise<ReconcileResult> {
  const { namespace, name } = splitKey(key);
  const secret = d.leader.kubeconfigs.get(name, namespace);
  if (!secret || secret.metadata?.deletionTimestamp || !namespace) return;
  const k = await ensureKubeconfig(d.clients, namespace, d.target, d.tokens, { create: false });
  if (!k) return;
  // Operators audit token issue: say when a new one went out and when the next is due.
  if (k.written)
    ctx.log.info({ namespace, nextRotation: new Date(k.refreshAt).toISOString() }, 'wrote a new token into the kubeconfig Secret');
  return { requeueAfterMs: Math.max(1000, k.refreshAt - Date.now()) };
}
