/**
 * One provider connection: clients and informers over the consumer's cluster namespace on the control plane
 * (ClusterBinding, APIServiceExports, APIServiceNamespaces), and the two controllers that belong to the connection
 * rather than to one API: the heartbeat (heartbeat.controller.ts, with kubeconfig rotation: the provider's kubeconfig
 * Secret is read by name on every beat, never listed with the other Secrets of the namespace) and namespace deletion
 * (namespacedeletion.controller.ts). Per-API syncers (export/syncer.ts) borrow its clients and namespace map.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { runWithInformers, watchInformer, type Controller, type WatchInformer } from '../../controller';
import {
  bindPath,
  CLUSTER_BINDING_NAME,
  type APIServiceExport,
  type APIServiceNamespace,
  type ClusterBinding,
  type ProviderEndpoint,
} from '../../exports/bind-api';
import { kubeClients, type KubeClients } from '../kube/client';
import { namespaceMap, type NamespaceMap } from '../names';
import { BindResources, type Runtime } from '../runtime';
import { kubeConfigOf, type Connection, type ConnectionSource } from './connections';
import { HEARTBEAT_KEY, heartbeatController } from './heartbeat.controller';
import type { RotationRefusal } from './heartbeat.reconcile';
import { namespaceDeletionController } from './namespacedeletion.controller';

export class ProviderConnection implements Connection {
  readonly kc: KubeConfig;
  readonly clients: KubeClients;
  /** The consumer's cluster namespace on the provider. */
  readonly namespace: string;
  readonly server: string;
  readonly clusterBindings: WatchInformer<ClusterBinding>;
  readonly exports: WatchInformer<APIServiceExport>;
  readonly serviceNamespaces: WatchInformer<APIServiceNamespace>;
  readonly clusterBinding: () => ClusterBinding | undefined;
  readonly map: NamespaceMap;
  readonly log: Logger;
  /** App-cluster kubeconfig Secrets this connection keeps current, by `namespace/name`. */
  readonly targets = new Map<string, { namespace: string; name: string; key: string }>();
  /** The last heartbeat: when it succeeded, or why it failed. */
  heartbeat: { at?: Date; error?: string } = {};
  /** The provider's kubeconfig refused by the last heartbeat, per app-cluster Secret (`namespace/name`). */
  refusedRotations = new Map<string, RotationRefusal>();
  /**
   * Called when something the bindings' status shows changed outside their own reconcile: a refused rotation, a
   * heartbeat that failed or works again, a watch that failed.
   */
  statusChanged: () => void = () => {};
  /** Server, CA and TLS server name the connection talks to now: what a rotation is pinned to. */
  endpoint: ProviderEndpoint;
  private readonly abort = new AbortController();
  private running: Promise<unknown> | undefined;
  private readonly heartbeatCtl: Controller;
  private readonly nsCtl: Controller;

  constructor(
    readonly key: string,
    source: ConnectionSource,
    private readonly rt: Runtime,
  ) {
    this.kc = kubeConfigOf(source);
    this.endpoint = endpointOf(source);
    this.clients = kubeClients(this.kc, rt.clientOptions);
    this.namespace = source.namespace;
    this.server = source.server;
    this.log = rt.log.child({ provider: source.server, clusterNamespace: source.namespace });
    const ns = this.namespace;
    const inf = <T extends ClusterBinding | APIServiceExport | APIServiceNamespace>(
      r: { group: string; version: string; plural: string },
      fieldSelector?: string,
    ) =>
      watchInformer<T>({
        kc: this.kc,
        path: bindPath(r, ns),
        fieldSelector,
        log: this.log,
        // A listed connection that fails says so on its bindings now, not at their next refresh (a minute).
        onError: () => this.statusChanged(),
      });
    this.clusterBindings = inf<ClusterBinding>(BindResources.clusterBindings, `metadata.name=${CLUSTER_BINDING_NAME}`);
    this.exports = inf<APIServiceExport>(BindResources.exports);
    this.serviceNamespaces = inf<APIServiceNamespace>(BindResources.serviceNamespaces);
    this.clusterBinding = () => this.clusterBindings.get(CLUSTER_BINDING_NAME, ns);
    this.map = namespaceMap({ get: (n) => this.serviceNamespaces.get(n, ns), list: () => this.serviceNamespaces.list(ns) });

    this.heartbeatCtl = heartbeatController(this, rt);
    this.nsCtl = namespaceDeletionController(this, rt);
  }

  /** Starts informers and controllers; returns at once (see `hasSynced`). */
  start(): void {
    this.running = runWithInformers(
      {
        informers: [this.clusterBindings, this.exports, this.serviceNamespaces],
        controllers: [this.heartbeatCtl, this.nsCtl],
        onSynced: () => this.heartbeatCtl.enqueue(HEARTBEAT_KEY),
      },
      this.abort.signal,
    );
    this.rt.metrics.connections.inc();
    this.log.info('provider connection started');
  }

  /** Whether the connection's own informers have listed once. */
  hasSynced(): boolean {
    return [this.clusterBindings, this.exports, this.serviceNamespaces].every((i) => i.hasSynced());
  }

  /** Why the connection is not working, if it is not: the first informer error. */
  lastError(): string | undefined {
    return [this.clusterBindings, this.exports, this.serviceNamespaces].map((i) => i.lastError()).find((e) => e);
  }

  /** Reloads credentials in place (from the reduced kubeconfig only): the next request and the next (re)watch use them. */
  rotate(source: ConnectionSource): void {
    kubeConfigOf(source, this.kc);
    this.endpoint = endpointOf(source);
    this.log.info('provider credentials rotated in place');
    this.heartbeatCtl.enqueue(HEARTBEAT_KEY);
  }

  /** Asks for a heartbeat now (a binding appeared, a target was added). */
  beat(): void {
    this.heartbeatCtl.enqueue(HEARTBEAT_KEY);
  }

  async stop(): Promise<void> {
    if (this.abort.signal.aborted) return;
    this.abort.abort();
    await this.running; // the controllers drained, then the informers stopped
    this.rt.metrics.connections.dec();
    this.log.info('provider connection stopped');
  }
}

const endpointOf = (p: ProviderEndpoint): ProviderEndpoint => ({
  server: p.server,
  ...(p.ca ? { ca: p.ca } : {}),
  ...(p.serverName ? { serverName: p.serverName } : {}),
});
