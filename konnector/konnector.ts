/**
 * A running konnector (the leader's part): installs the APIServiceBinding CRD, watches bindings, CRDs, namespaces and
 * kubeconfig Secrets in the app cluster, and runs the binding controller, which opens provider connections and
 * syncers as bindings need them. `run(signal)` returns after a graceful stop: reconciles in flight finish, syncers
 * and connections stop, informers close.
 */
import type { KubeConfig, V1CustomResourceDefinition, V1Namespace, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Registry } from 'prom-client';
import { backoffDelay, eventRecorder, type RateLimit, runWithInformers, watchInformer, type WatchInformer } from '../controller';
import { sleep } from '../lib/abort';
import { apiServiceBindingCrd, APPLY_PATCH, bindPath, SYNCER_FIELD_MANAGER, type APIServiceBinding } from '../exports/bind-api';
import { bindingController, type BindingController } from './binding/binding.controller';
import { kubeClients, type KubeClients } from './kube/client';
import { isNotFound } from '../lib/kube-errors';
import { jsonSubset } from './kube/objects';
import { trimForCache } from './kube/trim';
import { konnectorMetrics, type KonnectorMetrics } from './metrics';
import { ProviderConnection } from './provider/connection';
import { Connections } from './provider/connections';
import { BindResources, type Runtime } from './runtime';
import { crdEstablished } from './schema/schema';

export interface KonnectorOptions {
  /** The app cluster. */
  readonly kc: KubeConfig;
  /**
   * Control-plane mode (an AppClusterBinding's konnector): the control plane, where the APIServiceBindings (in
   * `bindingNamespace`, the binding root namespace), their kubeconfig Secrets and the APIServiceBinding CRD live.
   * @default the app cluster (`kc`)
   */
  readonly home?: KubeConfig;
  readonly log: Logger;
  readonly registry: Registry;
  readonly version: string;
  /** Only bindings of this namespace. @default all namespaces */
  readonly bindingNamespace?: string;
  /** @default 16 */
  readonly workers?: number;
  /** @default 150_000 */
  readonly heartbeatIntervalMs?: number;
  /** Connections per cluster. @default 32 */
  readonly connections?: number;
  /** A client-side rate limit per cluster. @default none (the API servers' priority and fairness limits) */
  readonly rateLimit?: RateLimit;
}

const metricsByRegistry = new WeakMap<Registry, KonnectorMetrics>();

export class KonnectorRuntime {
  private readonly consumer: KubeClients;
  private readonly home: KubeClients;
  private readonly bindings: WatchInformer<APIServiceBinding>;
  private readonly crds: WatchInformer<V1CustomResourceDefinition>;
  private readonly namespaces: WatchInformer<V1Namespace>;
  private readonly secrets = new Map<string, WatchInformer<V1Secret>>();
  private readonly log: Logger;

  constructor(private readonly o: KonnectorOptions) {
    this.log = o.log;
    this.consumer = kubeClients(o.kc, { maxSockets: o.connections, ...(o.rateLimit ? { rateLimit: o.rateLimit } : {}) });
    this.home = o.home ? kubeClients(o.home) : this.consumer;
    const ns = o.bindingNamespace;
    const b = BindResources.bindings;
    this.bindings = watchInformer<APIServiceBinding>({
      kc: o.home ?? o.kc,
      path: bindPath(b, ns),
      log: this.log,
      transform: trimForCache(),
    });
    this.crds = watchInformer<V1CustomResourceDefinition>({
      kc: o.kc,
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      log: this.log,
      transform: trimForCache(),
    });
    this.namespaces = watchInformer<V1Namespace>({
      kc: o.kc,
      path: '/api/v1/namespaces',
      log: this.log,
      transform: trimForCache(),
    });
  }

  /** Whether the informers have listed once (readiness). */
  hasSynced(): boolean {
    return this.bindings.hasSynced() && this.crds.hasSynced() && this.namespaces.hasSynced();
  }

  async run(signal: AbortSignal): Promise<void> {
    const { o } = this;
    // On the control plane the operator installs the bind CRDs (dist/control-plane/crds/); the konnector may not.
    if (!o.home) await this.installCrd(signal);
    if (signal.aborted) return;
    let metrics = metricsByRegistry.get(o.registry);
    if (!metrics) metricsByRegistry.set(o.registry, (metrics = konnectorMetrics(o.registry)));
    const rt: Runtime = {
      consumer: this.consumer,
      home: this.home,
      controlPlaneMode: o.home !== undefined,
      log: this.log,
      registry: o.registry,
      metrics,
      warn: eventRecorder({ core: this.consumer.core, log: this.log }),
      version: o.version,
      workers: o.workers ?? 16,
      heartbeatIntervalMs: o.heartbeatIntervalMs ?? 150_000,
      clientOptions: { maxSockets: o.connections ?? 32, ...(o.rateLimit ? { rateLimit: o.rateLimit } : {}) },
      namespaces: this.namespaces,
      kubeconfigSecret: (namespace, name) => this.secrets.get(namespace)?.get(name, namespace),
    };
    let bc: BindingController | undefined;
    const enqueue = (keys: readonly string[] | undefined) => keys?.forEach((k) => bc?.controller.enqueue(k));
    const connections = new Connections<ProviderConnection>((key, source) => {
      const conn = new ProviderConnection(key, source, rt);
      for (const event of ['add', 'update', 'delete'] as const) {
        conn.exports.on(event, (e) => enqueue(bc?.keysNamed(e.metadata!.name!, conn)));
        conn.clusterBindings.on(event, () => enqueue(bc?.keysOf(conn)));
      }
      conn.statusChanged = () => enqueue(bc?.keysOf(conn));
      conn.start();
      void Promise.all([conn.clusterBindings.synced, conn.exports.synced, conn.serviceNamespaces.synced]).then(() =>
        enqueue(bc?.keysOf(conn)),
      );
      return conn;
    });
    bc = bindingController({
      rt,
      bindings: this.bindings,
      crds: this.crds,
      connections,
      watchSecrets: (namespace, onChange) => this.watchSecrets(namespace, onChange),
    });
    const { controller: ctl, stopAll } = bc;

    try {
      await runWithInformers(
        {
          informers: [this.bindings, this.crds, this.namespaces],
          controllers: [ctl],
          onSynced: () =>
            this.log.info({ bindingNamespace: o.bindingNamespace ?? '(all)', controlPlaneMode: o.home !== undefined }, 'konnector running'),
          // The syncers and connections live on the bindings' caches; the kubeconfig Secrets' informers are started on
          // demand (watchSecrets), so they are stopped here, beside the ones the runner started.
          beforeStop: async () => {
            await stopAll();
            await connections.stopAll();
            await Promise.all([...this.secrets.values()].map((i) => i.stop()));
            this.secrets.clear();
          },
        },
        signal,
      );
    } finally {
      this.log.info('konnector stopped');
    }
  }

  private watchSecrets(namespace: string, onChange: (s: V1Secret) => void): void {
    if (this.secrets.has(namespace)) return;
    const inf = watchInformer<V1Secret>({
      kc: this.o.home ?? this.o.kc,
      path: `/api/v1/namespaces/${namespace}/secrets`,
      log: this.log,
    });
    for (const e of ['add', 'update', 'delete'] as const) inf.on(e, onChange);
    this.secrets.set(namespace, inf);
    void inf.start();
  }

  /** Creates or updates the APIServiceBinding CRD (Klutch's konnector installs it itself) and waits until it is served. */
  private async installCrd(signal: AbortSignal): Promise<void> {
    const crd = apiServiceBindingCrd() as { metadata: { name: string }; spec: unknown };
    for (let attempt = 0; !signal.aborted; attempt++) {
      try {
        // Only when it differs: every update of a CRD makes the API server rebuild its storage, closing every watch
        // on bindings and failing requests in flight with "apiserver is shutting down".
        const existing = (await this.consumer.custom
          .getClusterCustomObject({
            group: 'apiextensions.k8s.io',
            version: 'v1',
            plural: 'customresourcedefinitions',
            name: crd.metadata.name,
          })
          .catch((e: unknown) => {
            if (isNotFound(e)) return undefined;
            throw e;
          })) as { spec?: unknown } | undefined;
        if (!existing || !jsonSubset(crd.spec, existing.spec))
          await this.consumer.crds.patchCustomResourceDefinition(
            { name: crd.metadata.name, body: crd, fieldManager: SYNCER_FIELD_MANAGER, force: true },
            APPLY_PATCH,
          );
        for (let i = 0; i < 100 && !signal.aborted; i++) {
          if (crdEstablished(await this.consumer.crds.readCustomResourceDefinition({ name: crd.metadata.name }))) return;
          await sleep(100, signal);
        }
      } catch (e) {
        this.log.error({ err: e, crd: crd.metadata.name, attempt }, 'cannot install the APIServiceBinding CRD; retrying');
      }
      await sleep(backoffDelay(attempt, { baseMs: 500, maxMs: 10_000 }), signal);
    }
  }
}
