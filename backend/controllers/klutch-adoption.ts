/**
 * Taking over from Klutch's backend (provision/klutch-adoption.ts): a sweep, when leading starts and every
 * `SWEEP_EVERY_MS` after, adopts the cluster namespaces Klutch's backend made under this backend's prefix; from then
 * on the other controllers see them as ours (token rotation, consumer RBAC, which deletes Klutch's cluster-wide
 * ClusterRoleBinding in Namespaced scope). Per adopted consumer, each heartbeat checks whether its legacy token can go:
 * once the konnector heartbeats `--legacy-token-grace` after the rotated token was written, the legacy token Secret
 * is deleted. Key `sweep` runs the sweep; any other key is a cluster namespace.
 */
import { Controller, type ReconcileContext, type ReconcileResult } from '../../controller';
import { adoptClusterNamespace, klutchClusterNamespaces, revokeLegacyToken } from '../provision/klutch-adoption';
import { ours, type ControllerDeps } from './deps';

const SWEEP = 'sweep';
/** Klutch's backend is gone after the switch; a rollback and a second switch are caught by this. */
const SWEEP_EVERY_MS = 5 * 60_000;
/** Twice Klutch's heartbeat interval (5m): a live konnector has copied the rotated kubeconfig by then. */
export const LEGACY_TOKEN_GRACE_MS = 10 * 60_000;

export function klutchAdoptionController(d: ControllerDeps): Controller {
  /** Cluster namespaces without a legacy token (checked once, so heartbeats of our own consumers cost nothing). */
  const clean = new Set<string>();
  const c: Controller = new Controller({
    name: 'klutchadoption',
    log: d.log,
    registry: d.registry,
    reconcile: (key, ctx): Promise<ReconcileResult> => (key === SWEEP ? sweep(d, c, ctx) : reconcileLegacyToken(d, key, clean, ctx)),
  });
  c.watch(d.leader.clusterBindings, (b) => {
    const ns = b.metadata.namespace;
    return ns && ours(d, ns) && !clean.has(ns) ? [ns] : [];
  });
  c.enqueue(SWEEP);
  return c;
}

async function sweep(d: ControllerDeps, c: Controller, ctx: Pick<ReconcileContext, 'log'>): Promise<ReconcileResult> {
  for (const ns of await klutchClusterNamespaces(d.clients, d.prefix)) {
    const a = await adoptClusterNamespace(d.clients, ns);
    ctx.log.info(a, "adopted a consumer provisioned by Klutch's backend");
    c.enqueue(a.namespace);
  }
  return { requeueAfterMs: SWEEP_EVERY_MS };
}

async function reconcileLegacyToken(
  d: ControllerDeps,
  namespace: string,
  clean: Set<string>,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const ns = d.leader.namespaces.get(namespace);
  if (!ns || ns.metadata?.deletionTimestamp) return; // not adopted (yet) or going
  const r = await revokeLegacyToken(d.clients, namespace, d.legacyTokenGraceMs ?? LEGACY_TOKEN_GRACE_MS);
  if (r.state === 'none') clean.add(namespace);
  else if (r.state === 'revoked') {
    clean.add(namespace);
    ctx.log.info({ namespace, secrets: r.secrets }, "revoked Klutch's legacy ServiceAccount token: the konnector uses its rotated token");
  } else if (r.after !== undefined) {
    // Heartbeats bring us back; this is for a konnector that heartbeats rarely.
    return { requeueAfterMs: Math.max(1000, r.after - Date.now() + 1000) };
  }
  return;
}
