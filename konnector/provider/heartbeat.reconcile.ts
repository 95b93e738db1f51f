/**
 * The heartbeat of one provider connection, and kubeconfig rotation.
 *
 * Every interval (and whenever the ClusterBinding or the provider's kubeconfig Secret changes) it copies the
 * provider-side kubeconfig Secret named by the ClusterBinding into every app-cluster kubeconfig Secret that feeds
 * this connection — that is how a rotated token reaches the konnector — and writes `lastHeartbeatTime`,
 * `heartbeatInterval` (twice the interval: later than that, the backend calls the konnector gone) and
 * `konnectorVersion` into the ClusterBinding's status.
 *
 * The provider's Secret is data from the other side of a trust boundary: it is reduced (`reduceProviderKubeconfig`)
 * with the binding's current server, CA and TLS server name pinned, and its namespace must stay the connection's —
 * only the token may change. An unsafe, broken or moved kubeconfig is never copied: the app cluster keeps the one it
 * has, and the refusal is returned so the binding and a warning Event say why. What is copied is the canonical YAML
 * of the reduced fields, never the provider's text.
 */
import type { V1Secret } from '@kubernetes/client-node';
import { KUBECONFIG_SECRET_KEY, reduceProviderKubeconfig, type ClusterBinding, type ProviderEndpoint } from '../../exports/bind-api';
import { formatGoDuration } from '../../lib/duration';

export interface HeartbeatStatus {
  lastHeartbeatTime: string;
  heartbeatInterval: string;
  konnectorVersion: string;
}

export interface ConsumerKubeconfig {
  readonly namespace: string;
  readonly name: string;
  readonly key: string;
  /** The kubeconfig it holds now. */
  readonly kubeconfig: string | undefined;
}

export interface HeartbeatDeps {
  /** The consumer's cluster namespace on the provider, for messages. */
  readonly providerNamespace: string;
  readonly intervalMs: number;
  /** A number in [0, 1) for the heartbeat's jitter. @default Math.random */
  readonly random?: () => number;
  readonly version: string;
  readonly now: () => Date;
  /** The endpoint the connection uses now: the pin for a target whose own kubeconfig cannot be read. */
  readonly endpoint: ProviderEndpoint;
  getClusterBinding(): ClusterBinding | undefined;
  /** Reads the provider's kubeconfig Secret by name (undefined: not found). */
  readProviderSecret(name: string): Promise<V1Secret | undefined>;
  consumerKubeconfigs(): readonly ConsumerKubeconfig[];
  writeConsumerKubeconfig(target: ConsumerKubeconfig, kubeconfig: string): Promise<void>;
  writeHeartbeat(status: HeartbeatStatus): Promise<void>;
}

/** Why the provider's kubeconfig was not copied to a target. */
export interface RotationRefusal {
  readonly target: ConsumerKubeconfig;
  readonly reason: 'KubeconfigInvalid' | 'KubeconfigUnsafe' | 'KubeconfigMoved';
  readonly message: string;
}

/**
 * What one heartbeat decided, as a value: the controller keeps it on the connection (the bindings' Heartbeating and
 * KubeconfigCurrent conditions read it) and throws `error` for a retry.
 */
export interface HeartbeatOutcome {
  readonly requeueAfterMs: number;
  /** Targets the provider's kubeconfig was refused for (empty: every target is current, or nothing to copy). */
  readonly refused: readonly RotationRefusal[];
  /**
   * The last heartbeat: now when this one wrote it, else the ClusterBinding's (a restarted konnector, a new leader:
   * the last beat is ours as well, so the bindings need not wait a whole interval).
   */
  readonly beatAt?: Date;
  /** Why the rotation failed (the beat was written anyway). */
  readonly error?: Error;
}

/**
 * Rotation first (the app-cluster Secrets are other objects), then the one status write of the ClusterBinding. A
 * provider Secret that cannot be read must not stop the konnector from saying it is alive: its error is returned
 * beside the beat, not thrown before it.
 */
export async function reconcileHeartbeat(d: HeartbeatDeps): Promise<HeartbeatOutcome> {
  const cb = d.getClusterBinding();
  if (!cb)
    throw new Error(
      `no ClusterBinding "cluster" in provider namespace ${d.providerNamespace}: the provider has not finished binding this cluster (or removed it); run kubectl bind again`,
    );
  const interval = formatGoDuration(2 * d.intervalMs);
  const last = cb.status?.lastHeartbeatTime ? Date.parse(cb.status.lastHeartbeatTime) : NaN;
  const now = d.now();
  const age = now.getTime() - last;
  const due = !(age >= 0 && age < d.intervalMs) || cb.status?.heartbeatInterval !== interval || cb.status?.konnectorVersion !== d.version;
  let refused: RotationRefusal[] = [];
  let error: Error | undefined;
  try {
    refused = await rotate(d, cb);
  } catch (e) {
    error = e instanceof Error ? e : new Error(String(e));
  }
  if (due)
    await d.writeHeartbeat({
      lastHeartbeatTime: now.toISOString().replace(/\.\d{3}Z$/, 'Z'),
      heartbeatInterval: interval,
      konnectorVersion: d.version,
    });
  const beatAt = due ? now : Number.isNaN(last) ? undefined : new Date(last);
  return {
    // Up to a tenth later than the interval (the backend waits twice it): konnectors that started together, after a
    // control plane's outage say, drift apart instead of beating at the same moment for ever (client-go's JitterUntil).
    requeueAfterMs: due
      ? d.intervalMs + Math.floor((d.random ?? Math.random)() * (d.intervalMs / 10))
      : Math.max(1_000, d.intervalMs - age),
    refused,
    ...(beatAt ? { beatAt } : {}),
    ...(error ? { error } : {}),
  };
}

/** Copies the provider's kubeconfig, reduced and pinned, into every target that differs; returns the refusals. */
async function rotate(d: HeartbeatDeps, cb: ClusterBinding): Promise<RotationRefusal[]> {
  const ref = cb.spec.kubeconfigSecretRef;
  const key = ref.key || KUBECONFIG_SECRET_KEY;
  const raw = (await d.readProviderSecret(ref.name))?.data?.[key];
  if (!raw) return []; // nothing to copy yet: the app cluster keeps what it has
  const text = Buffer.from(raw, 'base64').toString('utf8');
  const where = `the provider's Secret ${d.providerNamespace}/${ref.name} key "${key}"`;
  const refused: RotationRefusal[] = [];
  for (const target of d.consumerKubeconfigs()) {
    // The pin: what this target holds now, if it is a usable kubeconfig; else what the connection runs with.
    const current = target.kubeconfig === undefined ? undefined : reduceProviderKubeconfig(target.kubeconfig, 'current');
    const pin: ProviderEndpoint = current?.ok ? current : d.endpoint;
    const r = reduceProviderKubeconfig(text, where, pin);
    if (!r.ok) {
      refused.push({ target, reason: r.reason, message: `${r.message}; the app cluster keeps its kubeconfig` });
      continue;
    }
    if (r.namespace !== d.providerNamespace) {
      refused.push({
        target,
        reason: 'KubeconfigMoved',
        message: `${where}: its context names namespace "${r.namespace}", not the binding's cluster namespace "${d.providerNamespace}"; a provider may only rotate the token of a binding, never move it — refused (to move a binding, bind again); the app cluster keeps its kubeconfig`,
      });
      continue;
    }
    if (target.kubeconfig !== r.yaml) await d.writeConsumerKubeconfig(target, r.yaml);
  }
  return refused;
}
