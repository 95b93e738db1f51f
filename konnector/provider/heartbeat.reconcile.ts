/**
 * The heartbeat of one provider connection, and kubeconfig rotation.
 *
 * Every interval (and whenever the ClusterBinding or the provider's kubeconfig Secret changes) it copies the
 * provider-side kubeconfig Secret named by the ClusterBinding into every app-cluster kubeconfig Secret that feeds
 * this connection — that is how a rotated token reaches the konnector — and writes `lastHeartbeatTime`,
 * `heartbeatInterval` (twice the interval: later than that, the backend calls the konnector gone) and
 * `konnectorVersion` into the ClusterBinding's status.
 */
import type { V1Secret } from '@kubernetes/client-node';
import type { ClusterBinding } from '../../exports/bind-api';
import { checkKubeconfigSecret } from '../binding/kubeconfig';

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
  readonly version: string;
  readonly now: () => Date;
  getClusterBinding(): ClusterBinding | undefined;
  getProviderSecret(name: string): V1Secret | undefined;
  consumerKubeconfigs(): readonly ConsumerKubeconfig[];
  writeConsumerKubeconfig(target: ConsumerKubeconfig, kubeconfig: string): Promise<void>;
  writeHeartbeat(status: HeartbeatStatus): Promise<void>;
}

export async function reconcileHeartbeat(d: HeartbeatDeps): Promise<{ requeueAfterMs: number }> {
  const cb = d.getClusterBinding();
  if (!cb)
    throw new Error(
      `no ClusterBinding "cluster" in provider namespace ${d.providerNamespace}: the provider has not finished binding this cluster (or removed it); run kubectl bind again`,
    );
  const ref = cb.spec.kubeconfigSecretRef;
  const check = checkKubeconfigSecret({ ...ref, namespace: d.providerNamespace }, d.getProviderSecret(ref.name));
  // A broken provider Secret is never copied over a working one.
  if (check.ok) {
    for (const target of d.consumerKubeconfigs()) {
      if (target.kubeconfig !== check.kubeconfig) await d.writeConsumerKubeconfig(target, check.kubeconfig);
    }
  }
  const interval = goDuration(2 * d.intervalMs);
  const last = cb.status?.lastHeartbeatTime ? Date.parse(cb.status.lastHeartbeatTime) : NaN;
  const age = d.now().getTime() - last;
  const due = !(age >= 0 && age < d.intervalMs) || cb.status?.heartbeatInterval !== interval || cb.status?.konnectorVersion !== d.version;
  if (due) {
    await d.writeHeartbeat({
      lastHeartbeatTime: d
        .now()
        .toISOString()
        .replace(/\.\d{3}Z$/, 'Z'),
      heartbeatInterval: interval,
      konnectorVersion: d.version,
    });
    return { requeueAfterMs: d.intervalMs };
  }
  return { requeueAfterMs: Math.max(1_000, d.intervalMs - age) };
}

/** Go's time.Duration.String() for whole seconds: `5m0s`, `20s`, `1h0m0s`. */
export function goDuration(ms: number): string {
  const total = Math.round(ms / 1000);
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h) return `${h}h${m}m${s}s`;
  if (m) return `${m}m${s}s`;
  return `${s}s`;
}
