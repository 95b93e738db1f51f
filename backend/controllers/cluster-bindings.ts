/**
 * ClusterBinding `Healthy` from the konnector's heartbeats (status.lastHeartbeatTime every heartbeatInterval, "5m0s"):
 * FirstHeartbeatPending until the first, HeartbeatIntervalMissing without an interval, HeartbeatTimeout when the last
 * is older than twice the interval, HeartbeatTimeDrift when it lies more than 10 s in the future (the konnector's
 * clock is ahead). Klutch gets the drift check backwards and reports every binding unhealthy. `Ready` follows.
 *
 * Abandoned consumers lose their credentials: when neither a heartbeat nor a bind (annotation
 * `klutch-kit.anynines.com/last-bind`) happened for `--abandoned-consumer-after`, the kubeconfig Secret is deleted —
 * every token bound to it dies — and condition `CredentialsRevoked` says so and how to get back (bind again). No data
 * is deleted: the claims (databases) stay, and a new bind makes a new kubeconfig Secret.
 */
import { Controller, objectKey, splitKey, type ReconcileResult } from '../../controller';
import { ClusterBindingConditions, HealthyReasons, READY_CONDITION, type ClusterBinding, type Condition } from '../../exports/bind-api';
import { BindResources, isNotFound, MERGE_PATCH } from '../kube';
import { BackendAnnotations } from '../labels';
import { duration } from '../options';
import { KUBECONFIG_SECRET } from '../provision/kubeconfig';
import { sameConditions, setCondition } from './conditions';
import { ours, type ControllerDeps } from './deps';

export const MAX_DRIFT_MS = 10_000;
export const ABANDONED_AFTER_MS = 720 * 3_600_000;
/** Ours, not Klutch's: True once an abandoned consumer's credentials were revoked. */
export const CREDENTIALS_REVOKED = 'CredentialsRevoked';

export function clusterBindingsController(d: ControllerDeps): Controller {
  const c = new Controller({
    name: 'clusterbindings',
    log: d.log,
    registry: d.registry,
    reconcile: (key) => reconcileClusterBinding(d, key),
  });
  c.watch(d.leader.clusterBindings, (b) => (ours(d, b.metadata.namespace) ? [objectKey(b)] : []));
  // A bind after a revocation makes the Secret again: the condition goes.
  c.watch(d.leader.kubeconfigs, (s) => (ours(d, s.metadata?.namespace) ? [`${s.metadata!.namespace}/cluster`] : []));
  return c;
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
  let interval: number;
  try {
    interval = duration('heartbeatInterval', status.heartbeatInterval ?? '');
  } catch {
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

export async function reconcileClusterBinding(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const { namespace, name } = splitKey(key);
  const b = d.leader.clusterBindings.get(name, namespace);
  if (!b || b.metadata.deletionTimestamp) return;
  const h = health(b.status);
  const healthy: Omit<Condition, 'lastTransitionTime'> = {
    type: ClusterBindingConditions.Healthy,
    status: h.status,
    reason: h.reason,
    message: h.message,
  };
  let conditions = setCondition(b.status?.conditions, healthy);
  conditions = setCondition(conditions, { ...healthy, type: READY_CONDITION });
  const abandonedAfter = d.abandonedConsumerAfterMs ?? ABANDONED_AFTER_MS;
  const secret = d.leader.kubeconfigs.get(KUBECONFIG_SECRET, namespace);
  // A kubeconfig Secret made anew is a bind too (the ClusterBinding's annotation may reach us later than the Secret).
  const made = Date.parse((secret?.metadata?.creationTimestamp as unknown as string | undefined) ?? '');
  const last = Math.max(lastActivity(b), Number.isNaN(made) ? 0 : made);
  const idle = Date.now() - last;
  let recheck = h.recheckInMs;
  if (idle > abandonedAfter) {
    if (secret) {
      await d.clients.core
        .deleteNamespacedSecret({ name: KUBECONFIG_SECRET, namespace: namespace!, body: { preconditions: { uid: secret.metadata?.uid } } })
        .catch((e: unknown) => {
          if (!isNotFound(e)) throw e;
        });
      d.log.warn({ namespace, lastActivity: new Date(last).toISOString() }, 'revoked the credentials of an abandoned consumer');
    }
    const since = new Date(last).toISOString();
    conditions = setCondition(conditions, {
      type: CREDENTIALS_REVOKED,
      status: 'True',
      reason: 'Abandoned',
      message: `no konnector heartbeat or bind since ${since} (longer than the provider's --abandoned-consumer-after): the kubeconfig Secret was deleted, so this cluster's provider tokens no longer work. No data was deleted. Run kubectl bind again from the app cluster to get new credentials.`,
    });
  } else {
    conditions = conditions.filter((c) => c.type !== CREDENTIALS_REVOKED);
    recheck = Math.min(recheck ?? Infinity, abandonedAfter - idle + 1000);
  }
  if (!sameConditions(conditions, b.status?.conditions)) {
    const r = BindResources.clusterBindings;
    await d.clients.custom.patchNamespacedCustomObjectStatus(
      { group: r.group, version: r.version, plural: r.plural, namespace: namespace!, name, body: { status: { conditions } } },
      MERGE_PATCH,
    );
  }
  // Timers beyond ~24 days overflow setTimeout: look again daily at the latest.
  return recheck !== undefined ? { requeueAfterMs: Math.min(86_400_000, Math.max(1000, recheck)) } : undefined;
}

/** The last sign of life of a consumer: its last heartbeat, its last bind, or the ClusterBinding's creation. */
export function lastActivity(b: Pick<ClusterBinding, 'metadata' | 'status'>): number {
  const times = [
    b.status?.lastHeartbeatTime,
    b.metadata.annotations?.[BackendAnnotations.lastBind],
    b.metadata.creationTimestamp as unknown as string,
  ]
    .map((t) => (t ? Date.parse(t) : NaN))
    .filter((t) => !Number.isNaN(t));
  return times.length ? Math.max(...times) : Date.now();
}
