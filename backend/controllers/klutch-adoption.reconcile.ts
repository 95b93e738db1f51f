/**
 * Taking over from Klutch's backend (provision/klutch-adoption.ts): a sweep, when leading starts and every
 * `SWEEP_EVERY_MS` after, adopts the cluster namespaces Klutch's backend made under this backend's prefix; from then
 * on the other controllers see them as ours (token rotation, consumer RBAC, which deletes Klutch's cluster-wide
 * ClusterRoleBinding in Namespaced scope). Per adopted consumer, each heartbeat checks whether its legacy token can go:
 * once the konnector heartbeats `--legacy-token-grace` after the rotated token was written, the legacy token Secret
 * is deleted; a cluster namespace this backend made itself (annotation `klutch-kit.anynines.com/provisioned`) is
 * never looked at. Ref `{ name: 'sweep' }` runs the sweep; any other is a cluster namespace (`{ name }`).
 */
import type { V1Namespace } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileContext, ReconcileResult } from '../../controller';
import { BackendAnnotations } from '../labels';
import type { Adopted, LegacyTokenState } from '../provision/klutch-adoption';

export const SWEEP = 'sweep';
/** Klutch's backend is gone after the switch; a rollback and a second switch are caught by this. */
export const SWEEP_EVERY_MS = 5 * 60_000;
/** Twice Klutch's heartbeat interval (5m): a live konnector has copied the rotated kubeconfig by then. */
export const LEGACY_TOKEN_GRACE_MS = 10 * 60_000;

export interface KlutchAdoptionDeps {
  /** Klutch's cluster namespaces under the prefix not adopted yet (a live list). */
  klutchNamespaces(): Promise<readonly V1Namespace[]>;
  adopt(ns: V1Namespace): Promise<Adopted>;
  /** Brings an adopted namespace to the legacy-token check. */
  enqueue(namespace: string): void;
  /** The cluster namespace from the cache. */
  getNamespace(name: string): V1Namespace | undefined;
  /** Deletes the namespace's legacy token once the grace has passed since a heartbeat (live reads). */
  revokeLegacyToken(namespace: string): Promise<LegacyTokenState>;
  /** Cluster namespaces without a legacy token: checked once, so heartbeats of our own consumers cost nothing. */
  readonly clean: Set<string>;
  /** @default Date.now */
  now?(): number;
}

export async function reconcileKlutchAdoption(
  d: KlutchAdoptionDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  if (ref.name === SWEEP) {
    for (const ns of await d.klutchNamespaces()) {
      const a = await d.adopt(ns);
      ctx.log.info(a, "adopted a consumer provisioned by Klutch's backend");
      d.enqueue(a.namespace);
    }
    return { requeueAfterMs: SWEEP_EVERY_MS };
  }
  const ns = d.getNamespace(ref.name);
  if (!ns || ns.metadata?.deletionTimestamp) return; // not adopted (yet) or going
  // Made by this backend, never by Klutch's: it never held a legacy token, and looking would cost a list.
  if (ns.metadata?.annotations?.[BackendAnnotations.provisioned] === 'true') {
    d.clean.add(ref.name);
    return;
  }
  const r = await d.revokeLegacyToken(ref.name);
  if (r.state === 'none') d.clean.add(ref.name);
  else if (r.state === 'revoked') {
    d.clean.add(ref.name);
    ctx.log.info(
      { namespace: ref.name, secrets: r.secrets },
      "revoked Klutch's legacy ServiceAccount token: the konnector uses its rotated token",
    );
  } else if (r.after !== undefined) {
    // Heartbeats bring us back; this is for a konnector that heartbeats rarely.
    return { requeueAfterMs: Math.max(1000, r.after - (d.now?.() ?? Date.now()) + 1000) };
  }
  return;
}
