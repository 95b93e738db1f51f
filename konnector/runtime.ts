/**
 * What every part of a running konnector shares: the app-cluster clients, logs, metrics, the warning recorder, the
 * settings, and the informers over app-cluster objects that more than one part reads.
 */
import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import {
  apiServiceBindingCrd,
  apiServiceExportCrd,
  apiServiceNamespaceCrd,
  BIND_GROUP,
  BIND_VERSION,
  clusterBindingCrd,
} from '../exports/bind-api';
import type { KeepAliveOptions, WatchInformer } from '../controller';
import type { Warn } from './events';
import type { Clients } from './kube/client';
import type { KonnectorMetrics } from './metrics';

export interface Runtime {
  /** The app cluster. */
  readonly consumer: Clients;
  /**
   * Where the APIServiceBindings and their kubeconfig Secrets live: the app cluster, or in control-plane mode the
   * control plane (the binding root namespace).
   */
  readonly home: Clients;
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

const pluralOf = (crd: Record<string, unknown>): string => (crd.spec as { names: { plural: string } }).names.plural;

/** Where the bind kinds live: group, version and plural, read from their CRDs so no name is spelled twice. */
export const BindResources = {
  bindings: { group: BIND_GROUP, version: BIND_VERSION, plural: pluralOf(apiServiceBindingCrd()) },
  exports: { group: BIND_GROUP, version: BIND_VERSION, plural: pluralOf(apiServiceExportCrd()) },
  serviceNamespaces: { group: BIND_GROUP, version: BIND_VERSION, plural: pluralOf(apiServiceNamespaceCrd()) },
  clusterBindings: { group: BIND_GROUP, version: BIND_VERSION, plural: pluralOf(clusterBindingCrd()) },
} as const;

export const pathOf = (r: { group: string; version: string; plural: string }, namespace?: string): string =>
  `${r.group ? `/apis/${r.group}` : '/api'}/${r.version}${namespace ? `/namespaces/${namespace}` : ''}/${r.plural}`;
