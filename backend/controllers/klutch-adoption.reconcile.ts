/**
 * Taking over from Klutch's backend (provision/klutch-adoption.ts): a sweep, when leading starts and every
 * `SWEEP_EVERY_MS` after, adopts the cluster namespaces Klutch's backend made under this backend's prefix; from then
 * on the other controllers see them as ours (token rotation, consumer RBAC, which deletes Klutch's cluster-wide
 * ClusterRoleBinding in Namespaced scope). Per adopted consumer, each heartbeat checks whether its legacy token can go:
 * once the konnector heartbeats `--legacy-token-grace` after the rotated token was written, the legacy token Secret
 * is deleted, and `--legacy-token-max-age` after the adoption (annotation `klutch-kit.anynines.com/adopted`, written
 * now on one adopted before it existed) whatever the heartbeats say; a cluster namespace this backend made itself
 * (annotation `klutch-kit.anynines.com/provisioned`) is never looked at. Ref `{ name: 'sweep' }` runs the sweep; any other is a cluster namespace (`{ name }`).
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
/** A week: a konnector down longer than that binds again. */
export const LEGACY_TOKEN_MAX_AGE_MS = 168 * 3_600_000;

export interface KlutchAdoptionDeps {
  /** Klutch's cluster namespaces under the prefix not adopted yet (a live list). */
  klutchNamespaces(): Promise<readonly V1Namespace[]>;
  adopt(ns: V1Namespace): Promise<Adopted>;
  /** Brings an adopted namespace to the legacy-token check. */
  enqueue(namespace: string): void;
  /** The cluster namespace from the cache. */
  getNamespace(name: string): V1Namespace | undefined;
  /**
   * Deletes the namespace's legacy token once the grace has passed since a heartbeat, or at the latest the maximum
   * age after `adoptedAt` (ms) (live reads).
   */
  revokeLegacyToken(namespace: string, adoptedAt: number): Promise<LegacyTokenState>;
  /** Writes annotation `adopted` onto a cluster namespace adopted before it existed. */
  markAdopted(namespace: string, at: string): Promise<void>;
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
  const now = d.now?.() ?? Date.now();
  let adoptedAt = Date.parse(ns.metadata?.annotations?.[BackendAnnotations.adopted] ?? '');
  const r = await d.revokeLegacyToken(ref.name, Number.isNaN(adoptedAt) ? now : adoptedAt);
  if (r.state === 'none') d.clean.add(ref.name);
  else if (r.state === 'revoked') {
    d.clean.add(ref.name);
    if (r.reason === 'heartbeat')
      ctx.log.info(
        { namespace: ref.name, secrets: r.secrets },
        "revoked Klutch's legacy ServiceAccount token: the konnector uses its rotated token",
      );
    else
      ctx.log.warn(
        { namespace: ref.name, secrets: r.secrets },
        "revoked Klutch's legacy ServiceAccount token: --legacy-token-max-age passed since the adoption without the konnector heartbeating on its rotated token",
      );
  } else {
    if (Number.isNaN(adoptedAt)) {
      // Adopted by a version that did not record when: the maximum age counts from now.
      adoptedAt = now;
      await d.markAdopted(ref.name, new Date(now).toISOString());
    }
    // Heartbeats bring us back; this is for a konnector that heartbeats rarely, or never again. Timers beyond ~24
    // days overflow setTimeout: look again daily at the latest.
    if (r.after !== undefined) return { requeueAfterMs: Math.min(86_400_000, Math.max(1000, r.after - now + 1000)) };
  }
  return;
}
