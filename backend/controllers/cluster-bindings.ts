/**
 * ClusterBinding `Healthy` from the konnector's heartbeats (status.lastHeartbeatTime every heartbeatInterval, "5m0s"):
 * FirstHeartbeatPending until the first, HeartbeatIntervalMissing without an interval, HeartbeatTimeout when the last
 * is older than twice the interval, HeartbeatTimeDrift when it lies more than 10 s in the future (the konnector's
 * clock is ahead). Klutch gets the drift check backwards and reports every binding unhealthy. `Ready` follows.
 */
import { Controller, objectKey, splitKey, type ReconcileResult } from '../../controller';
import { ClusterBindingConditions, HealthyReasons, READY_CONDITION, type ClusterBinding, type Condition } from '../../exports/bind-api';
import { BindResources, MERGE_PATCH } from '../kube';
import { duration } from '../options';
import { sameConditions, setCondition } from './conditions';
import type { ControllerDeps } from './deps';

export const MAX_DRIFT_MS = 10_000;

export function clusterBindingsController(d: ControllerDeps): Controller {
  const c = new Controller({
    name: 'clusterbindings',
    log: d.log,
    registry: d.registry,
    reconcile: (key) => reconcileClusterBinding(d, key),
  });
  c.watch(d.leader.clusterBindings, (b) => [objectKey(b)]);
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
  if (!sameConditions(conditions, b.status?.conditions)) {
    const r = BindResources.clusterBindings;
    await d.clients.custom.patchNamespacedCustomObjectStatus(
      { group: r.group, version: r.version, plural: r.plural, namespace: namespace!, name, body: { status: { conditions } } },
      MERGE_PATCH,
    );
  }
  return h.recheckInMs !== undefined ? { requeueAfterMs: Math.max(1000, h.recheckInMs) } : undefined;
}
