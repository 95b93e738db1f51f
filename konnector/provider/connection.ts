/**
 * One provider connection: clients and informers over the consumer's cluster namespace on the control plane
 * (ClusterBinding, APIServiceExports, APIServiceNamespaces), and the two controllers that belong to the connection
 * rather than to one API: the heartbeat (with kubeconfig rotation: the provider's kubeconfig Secret is read by name
 * on every beat, never listed with the other Secrets of the namespace) and namespace deletion. Per-API syncers
 * (export/syncer.ts) borrow its clients and namespace map.
 */
import type { KubeConfig, KubernetesObject } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { Controller, watchInformer, type WatchInformer } from '../../controller';
import {
  bindPath,
  CLUSTER_BINDING_NAME,
  type APIServiceExport,
  type APIServiceNamespace,
  type ClusterBinding,
  type ProviderEndpoint,
} from '../../exports/bind-api';
import { viewOf, type View } from '../kube/objects';
import { clientsFor, isNotFound, mergePatch, messageOf, type Clients } from '../kube/client';
import { namespaceMap, type NamespaceMap } from '../names';
import { BindResources, type Runtime } from '../runtime';
import { kubeConfigOf, type Connection, type ConnectionSource } from './connections';
import { reconcileHeartbeat, type ConsumerKubeconfig, type RotationRefusal } from './heartbeat.reconcile';
import { reconcileNamespaceDeletion } from './namespacedeletion.reconcile';

const HEARTBEAT_KEY = 'heartbeat';

export class ProviderConnection implements Connection {
  readonly kc: KubeConfig;
  readonly clients: Clients;
  /** The consumer's cluster namespace on the provider. */
  readonly namespace: string;
  readonly server: string;
  readonly clusterBindings: WatchInformer<KubernetesObject>;
  readonly exports: WatchInformer<KubernetesObject>;
  readonly serviceNamespaces: WatchInformer<KubernetesObject>;
  readonly clusterBinding: () => ClusterBinding | undefined;
  readonly exportView: View<APIServiceExport>;
  readonly serviceNamespaceView: View<APIServiceNamespace>;
  readonly map: NamespaceMap;
  readonly log: Logger;
  /** App-cluster kubeconfig Secrets this connection keeps current, by `namespace/name`. */
  readonly targets = new Map<string, { namespace: string; name: string; key: string }>();
  /** The last heartbeat: when it succeeded, or why it failed. */
  heartbeat: { at?: Date; error?: string } = {};
  /** The provider's kubeconfig refused by the last heartbeat, per app-cluster Secret (`namespace/name`). */
  refusedRotations = new Map<string, RotationRefusal>();
  /** Called when something the bindings' status shows changed outside their own reconcile (a refused rotation). */
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
    this.clients = clientsFor(this.kc, rt.clientOptions);
    this.namespace = source.namespace;
    this.server = source.server;
    this.log = rt.log.child({ provider: source.server, clusterNamespace: source.namespace });
    const ns = this.namespace;
    const custom = this.clients.custom;
    const inf = (r: { group: string; version: string; plural: string }, fieldSelector?: string) =>
      watchInformer<KubernetesObject>({
        kc: this.kc,
        path: bindPath(r, ns),
        fieldSelector,
        log: this.log,
      });
    this.clusterBindings = inf(BindResources.clusterBindings, `metadata.name=${CLUSTER_BINDING_NAME}`);
    this.exports = inf(BindResources.exports);
    this.serviceNamespaces = inf(BindResources.serviceNamespaces);
    this.clusterBinding = () => viewOf<ClusterBinding>(this.clusterBindings).get(CLUSTER_BINDING_NAME, ns);
    this.exportView = viewOf<APIServiceExport>(this.exports);
    this.serviceNamespaceView = viewOf<APIServiceNamespace>(this.serviceNamespaces);
    this.map = namespaceMap({ get: (n) => this.serviceNamespaceView.get(n, ns), list: () => this.serviceNamespaceView.list(ns) });

    this.heartbeatCtl = new Controller({
      name: `heartbeat/${ns}`,
      log: this.log,
      registry: rt.registry,
      reconcile: async () => {
        try {
          const r = await reconcileHeartbeat({
            providerNamespace: ns,
            intervalMs: rt.heartbeatIntervalMs,
            version: rt.version,
            now: () => new Date(),
            endpoint: this.endpoint,
            getClusterBinding: this.clusterBinding,
            readProviderSecret: async (name) => {
              try {
                return await this.clients.core.readNamespacedSecret({ namespace: ns, name });
              } catch (e) {
                if (isNotFound(e)) return undefined;
                throw new Error(`cannot read the provider's kubeconfig Secret ${ns}/${name}: ${messageOf(e)}`, { cause: e });
              }
            },
            consumerKubeconfigs: () => [...this.targets.values()].map((t) => this.consumerKubeconfig(t)),
            writeConsumerKubeconfig: (t, text) => this.writeConsumerKubeconfig(t, text),
            writeHeartbeat: async (status) => {
              await custom.patchNamespacedCustomObjectStatus(
                { ...BindResources.clusterBindings, namespace: ns, name: CLUSTER_BINDING_NAME, body: { status } },
                mergePatch,
              );
              this.heartbeat = { at: new Date() };
              rt.metrics.heartbeats.inc({ result: 'ok' });
            },
          });
          if (this.heartbeat.error) this.heartbeat = { ...this.heartbeat, error: undefined };
          // Not due yet (a restarted konnector, a new leader, a sync restarted for a rotated app cluster kubeconfig):
          // the ClusterBinding's last heartbeat is ours as well, so the bindings need not wait a whole interval.
          const last = Date.parse(this.clusterBinding()?.status?.lastHeartbeatTime ?? '');
          if (!this.heartbeat.at && !Number.isNaN(last)) {
            this.heartbeat = { at: new Date(last) };
            this.statusChanged();
          }
          this.noteRefusals(r.refused);
          return { requeueAfterMs: r.requeueAfterMs };
        } catch (e) {
          this.heartbeat = { ...this.heartbeat, error: messageOf(e) };
          rt.metrics.heartbeats.inc({ result: 'error' });
          throw e;
        }
      },
    });
    this.heartbeatCtl.watch(this.clusterBindings, () => [HEARTBEAT_KEY]);

    this.nsCtl = new Controller({
      name: `namespacedeletion/${ns}`,
      log: this.log,
      registry: rt.registry,
      reconcile: (name) =>
        reconcileNamespaceDeletion(
          {
            getServiceNamespace: (n) => this.serviceNamespaceView.get(n, ns),
            consumerNamespaceExists: async (n) => {
              if (rt.namespaces.get(n)) return true;
              try {
                await rt.consumer.core.readNamespace({ name: n });
                return true;
              } catch (e) {
                if (isNotFound(e)) return false;
                throw e;
              }
            },
            deleteServiceNamespace: async (n, uid) => {
              this.log.info({ namespace: n }, 'app namespace is gone: deleting its APIServiceNamespace');
              await custom
                .deleteNamespacedCustomObject({
                  ...BindResources.serviceNamespaces,
                  namespace: ns,
                  name: n,
                  body: { preconditions: { uid } },
                })
                .catch((e: unknown) => {
                  if (!isNotFound(e)) throw e;
                });
            },
          },
          name,
        ),
    });
    this.nsCtl.watch(this.serviceNamespaces, (sn) => [sn.metadata!.name!]);
    this.nsCtl.watch(rt.namespaces, (n, event) => (event === 'delete' ? [n.metadata!.name!] : []));
  }

  /** Starts informers and controllers; returns at once (see `synced`). */
  start(): void {
    const informers = [this.clusterBindings, this.exports, this.serviceNamespaces];
    for (const i of informers) void i.start();
    this.running = Promise.all([
      Promise.all(informers.map((i) => i.synced)).then(() => {
        if (this.abort.signal.aborted) return;
        this.heartbeatCtl.enqueue(HEARTBEAT_KEY);
        return Promise.all([this.heartbeatCtl.run(this.abort.signal), this.nsCtl.run(this.abort.signal)]);
      }),
    ]);
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
    await this.running;
    await Promise.all([this.clusterBindings, this.exports, this.serviceNamespaces].map((i) => i.stop()));
    this.rt.metrics.connections.dec();
    this.log.info('provider connection stopped');
  }

  /** Remembers refused rotations for the bindings' status, and warns on the app-cluster Secret that kept its kubeconfig. */
  private noteRefusals(refused: readonly RotationRefusal[]): void {
    const before = JSON.stringify([...this.refusedRotations].map(([k, r]) => [k, r.reason, r.message]));
    this.refusedRotations = new Map(refused.map((r) => [`${r.target.namespace}/${r.target.name}`, r]));
    if (JSON.stringify([...this.refusedRotations].map(([k, r]) => [k, r.reason, r.message])) !== before) this.statusChanged();
    for (const r of refused) {
      const uid = this.rt.kubeconfigSecret(r.target.namespace, r.target.name)?.metadata?.uid;
      this.rt.warn(
        { apiVersion: 'v1', kind: 'Secret', metadata: { name: r.target.name, namespace: r.target.namespace, uid } },
        r.reason,
        r.message,
      );
    }
  }

  private consumerKubeconfig(t: { namespace: string; name: string; key: string }): ConsumerKubeconfig {
    const raw = this.rt.kubeconfigSecret(t.namespace, t.name)?.data?.[t.key];
    return { ...t, kubeconfig: raw ? Buffer.from(raw, 'base64').toString('utf8') : undefined };
  }

  private async writeConsumerKubeconfig(t: ConsumerKubeconfig, text: string): Promise<void> {
    await this.rt.home.core.patchNamespacedSecret(
      { namespace: t.namespace, name: t.name, body: { data: { [t.key]: Buffer.from(text).toString('base64') } } },
      mergePatch,
    );
    this.log.info({ secret: `${t.namespace}/${t.name}` }, "copied the provider's kubeconfig into the binding's Secret (rotation)");
  }
}

const endpointOf = (p: ProviderEndpoint): ProviderEndpoint => ({
  server: p.server,
  ...(p.ca ? { ca: p.ca } : {}),
  ...(p.serverName ? { serverName: p.serverName } : {}),
});
