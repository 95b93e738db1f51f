/**
 * What every part of a running konnector shares: the app-cluster clients, logs, metrics, the warning recorder, the
 * settings, and the informers over app-cluster objects that more than one part reads.
 */
import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import type { KeepAliveOptions, Warn, WatchInformer } from '../controller';
import type { KubeClients } from './kube/client';
import type { KonnectorMetrics } from './metrics';

export interface Runtime {
  /** The app cluster. */
  readonly consumer: KubeClients;
  /**
   * Where the APIServiceBindings and their kubeconfig Secrets live: the app cluster, or in control-plane mode the
   * control plane (the binding root namespace).
   */
  readonly home: KubeClients;
  /** Running on the control plane for an AppClusterBinding (`--control-plane-mode`): messages name that setup's fixes. */
  readonly controlPlaneMode: boolean;
  readonly log: Logger;
  readonly registry: Registry;
  readonly metrics: KonnectorMetrics;
  readonly warn: Warn;
  readonly version: string;
  /** Workers per sync controller. */
  readonly workers: number;
  readonly heartbeatIntervalMs: number;
  /** How clients of a provider connection talk to its API server (connections, rate limit): one pool per cluster. */
  readonly clientOptions: KeepAliveOptions;
  /** App-cluster namespaces. */
  readonly namespaces: WatchInformer<V1Namespace>;
  /** The bindings' kubeconfig Secrets (in `home`), by namespace/name (the namespaces bindings refer to). */
  kubeconfigSecret(namespace: string, name: string): V1Secret | undefined;
}

export { BindResources } from '../exports/bind-api';
