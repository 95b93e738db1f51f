/**
 * ClusterBinding `Healthy` from the konnector's heartbeats (status.lastHeartbeatTime every heartbeatInterval, "5m0s"):
 * FirstHeartbeatPending until the first, HeartbeatIntervalMissing without an interval, HeartbeatTimeout when the last
 * is older than twice the interval, HeartbeatTimeDrift when it lies more than 10 s in the future (the konnector's
 * clock is ahead). Klutch gets the drift check backwards and reports every binding unhealthy. `Ready` follows.
 *
 * Abandoned consumers lose their credentials: when neither a heartbeat nor a bind (annotation
 * `klutch-kit.anynines.com/last-bind`) happened for `--abandoned-consumer-after`, the kubeconfig Secret is deleted —
 * every token bound to it dies — and so is the never-expiring legacy token Secret a consumer adopted from Klutch's
 * backend may still have; condition `CredentialsRevoked` says so and how to get back (bind again). No data is
 * deleted: the claims (databases) stay, and a new bind makes a new kubeconfig Secret. The consumer writes its
 * heartbeat's time: one dated in the future counts as sent when the backend first saw it, never later.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileContext, ReconcileResult, Warn } from '../../controller';
import {
  BIND_API_VERSION,
  ClusterBindingConditions,
  HealthyReasons,
  Kinds,
  READY_CONDITION,
  sameConditions,
  setCondition,
  type ClusterBinding,
  type Condition,
  type ConditionInput,
} from '../../exports/bind-api';
import { BackendAnnotations } from '../labels';
import { parseGoDuration } from '../../lib/duration';
import { BACKEND_VERSION_ANNOTATION } from '../../lib/version';

const MAX_DRIFT_MS = 10_000;
export const ABANDONED_AFTER_MS = 720 * 3_600_000;
/** Ours, not Klutch's: True once an abandoned consumer's credentials were revoked. */
export const CREDENTIALS_REVOKED = 'CredentialsRevoked';

export interface ClusterBindingDeps {
  /** A consumer without a heartbeat (or bind) for this long loses its credentials. */
  readonly abandonedAfterMs: number;
  /** The ClusterBinding from the cache. */
  getClusterBinding(ref: ObjectRef): ClusterBinding | undefined;
  /** The cluster namespace's kubeconfig Secret from the cache. */
  getKubeconfigSecret(namespace: string): V1Secret | undefined;
  /** Deletes the kubeconfig Secret with this uid (gone already is fine). */
  deleteKubeconfigSecret(namespace: string, uid: string | undefined): Promise<void>;
  /** Deletes the legacy token Secrets of an adopted Klutch consumer (none elsewhere); their names. */
  deleteLegacyTokens(namespace: string): Promise<readonly string[]>;
  /** A Warning Event on the ClusterBinding, for the provider's operator: credentials revoked. @default none */
  readonly warn?: Warn;
  /** Writes these annotations onto the ClusterBinding (`future-heartbeat`, the backend's version). */
  annotate(ref: ObjectRef, annotations: Readonly<Record<string, string>>): Promise<void>;
  /**
   * This backend's release, stamped on every ClusterBinding (BACKEND_VERSION_ANNOTATION): a konnector newer than it
   * says so on its bindings. @default none: not stamped
   */
  readonly backendVersion?: string;
  /** The one status write of a reconcile. */
  writeConditions(ref: ObjectRef, conditions: Condition[]): Promise<void>;
  /**
   * Whether these conditions were written onto exactly this cached version moments ago: the cache has not shown the
   * write yet (a bind's own events come first), and writing them again would only cost the API server a request.
   * @default never
   */
  justWritten?(b: ClusterBinding, conditions: readonly Condition[]): boolean;
  /** @default Date.now */
  now?(): number;
}

export interface Health {
  readonly status: 'True' | 'False';
  readonly reason?: string;
  readonly message?: string;
  /** When the verdict changes by itself (a timeout falls due), in ms from now. */
  readonly recheckInMs?: number;
}

/** The Healthy verdict of a ClusterBinding's status at `now`. */
export function health(status: ClusterBinding['status'], now = Date.now()): Health {
  if (!status?.lastHeartbeatTime)
    return { status: 'False', reason: HealthyReasons.FirstHeartbeatPending, message: 'waiting for the first heartbeat of the konnector' };
  const interval = parseGoDuration(status.heartbeatInterval ?? '');
  if (interval === undefined) {
    return {
      status: 'False',
      reason: HealthyReasons.HeartbeatIntervalMissing,
      message: `status.heartbeatInterval "${status.heartbeatInterval ?? ''}" is not a duration`,
    };
  }
  const last = Date.parse(status.lastHeartbeatTime);
  if (last - now > MAX_DRIFT_MS) {
    return {
      status: 'False',
      reason: HealthyReasons.HeartbeatTimeDrift,
      message: `the last heartbeat is ${Math.round((last - now) / 1000)}s in the future: the konnector's clock is ahead`,
      recheckInMs: last - now - MAX_DRIFT_MS,
    };
  }
  const age = now - last;
  if (age > 2 * interval) {
    return {
      status: 'False',
      reason: HealthyReasons.HeartbeatTimeout,
      message: `no heartbeat for ${Math.round(age / 1000)}s (more than twice the interval ${status.heartbeatInterval})`,
    };
  }
  return { status: 'True', recheckInMs: 2 * interval - age + 1 };
}

export async function reconcileClusterBinding(
  d: ClusterBindingDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const b = d.getClusterBinding(ref);
  if (!b || b.metadata.deletionTimestamp || !ref.namespace) return;
  const now = d.now?.() ?? Date.now();
  const h = health(b.status, now);
  const healthy: ConditionInput = {
    type: ClusterBindingConditions.Healthy,
    status: h.status,
    reason: h.reason,
    message: h.message,
  };
  const at = new Date(now);
  let conditions = setCondition(b.status?.conditions, healthy, at);
  conditions = setCondition(conditions, { ...healthy, type: READY_CONDITION }, at);
  const annotations: Record<string, string> = {};
  const future = heartbeatTime(b, now).record;
  if (future !== undefined) annotations[BackendAnnotations.futureHeartbeat] = future;
  if (d.backendVersion && b.metadata.annotations?.[BACKEND_VERSION_ANNOTATION] !== d.backendVersion)
    annotations[BACKEND_VERSION_ANNOTATION] = d.backendVersion;
  if (Object.keys(annotations).length) await d.annotate(ref, annotations);
  const secret = d.getKubeconfigSecret(ref.namespace);
  // A kubeconfig Secret made anew is a bind too (the ClusterBinding's annotation may reach us later than the Secret).
  const made = Date.parse((secret?.metadata?.creationTimestamp as unknown as string | undefined) ?? '');
  const last = Math.max(lastActivity(b, now), Number.isNaN(made) ? 0 : made);
  const idle = now - last;
  let recheck = h.recheckInMs;
  if (idle > d.abandonedAfterMs) {
    const since = new Date(last).toISOString();
    if (secret) {
      await d.deleteKubeconfigSecret(ref.namespace, secret.metadata?.uid);
      ctx.log.warn({ namespace: ref.namespace, lastActivity: since }, 'revoked the credentials of an abandoned consumer');
    }
    // Never expiring, it would outlive every other credential (a Klutch consumer adopted and then abandoned).
    const legacy = await d.deleteLegacyTokens(ref.namespace);
    if (legacy.length)
      ctx.log.warn(
        { namespace: ref.namespace, lastActivity: since, secrets: legacy },
        "revoked Klutch's legacy ServiceAccount token of an abandoned consumer",
      );
    const message = `no konnector heartbeat or bind since ${since} (longer than the provider's --abandoned-consumer-after): the kubeconfig Secret (and a legacy token Secret of Klutch's backend) was deleted, so this cluster's provider tokens no longer work. No data was deleted. Run kubectl bind again from the app cluster to get new credentials.`;
    conditions = setCondition(conditions, { type: CREDENTIALS_REVOKED, status: 'True', reason: 'Abandoned', message }, at);
    // Once, when something was revoked: later reconciles of the abandoned consumer find nothing left to revoke.
    if (secret || legacy.length)
      d.warn?.({ apiVersion: BIND_API_VERSION, kind: Kinds.ClusterBinding, metadata: b.metadata }, CREDENTIALS_REVOKED, message);
  } else {
    conditions = conditions.filter((c) => c.type !== CREDENTIALS_REVOKED);
    recheck = Math.min(recheck ?? Infinity, d.abandonedAfterMs - idle + 1000);
  }
  if (!sameConditions(conditions, b.status?.conditions) && !d.justWritten?.(b, conditions)) await d.writeConditions(ref, conditions);
  // Timers beyond ~24 days overflow setTimeout: look again daily at the latest.
  return recheck !== undefined ? { requeueAfterMs: Math.min(86_400_000, Math.max(1000, recheck)) } : undefined;
}

/** The last sign of life of a consumer: its last heartbeat, its last bind, or the ClusterBinding's creation. */
export function lastActivity(b: Pick<ClusterBinding, 'metadata' | 'status'>, now = Date.now()): number {
  const times = [b.metadata.annotations?.[BackendAnnotations.lastBind], b.metadata.creationTimestamp as unknown as string]
    .map((t) => (t ? Date.parse(t) : NaN))
    .concat(heartbeatTime(b, now).at ?? NaN)
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : now;
}

/**
 * When the last heartbeat counts as sent: its time, never later than `now`. The consumer writes that time, so one
 * dated beyond the drift counts as sent when first seen (annotation `future-heartbeat`): else a single heartbeat
 * dated in the year 9999 would keep the consumer from ever counting as abandoned. `record` is the annotation to
 * write when it was not seen before.
 */
function heartbeatTime(b: Pick<ClusterBinding, 'metadata' | 'status'>, now: number): { at?: number; record?: string } {
  const hb = b.status?.lastHeartbeatTime;
  const t = Date.parse(hb ?? '');
  if (!hb || Number.isNaN(t)) return {};
  if (t - now <= MAX_DRIFT_MS) return { at: Math.min(t, now) };
  const seen = b.metadata.annotations?.[BackendAnnotations.futureHeartbeat] ?? '';
  const space = seen.lastIndexOf(' ');
  const seenAt = Date.parse(seen.slice(space + 1));
  if (space > 0 && seen.slice(0, space) === hb && !Number.isNaN(seenAt)) return { at: Math.min(seenAt, now) };
  return { at: now, record: `${hb} ${new Date(now).toISOString()}` };
}
