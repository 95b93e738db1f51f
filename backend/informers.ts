/**
 * The backend's informers (controller/'s watchInformer). Four run on every replica and feed the HTTP side: CRDs and
 * APIServiceExportTemplates (what can be exported), and two of namespaces (where a consumer's cluster namespace is,
 * and Klutch's not yet adopted, so a bind reads no list from the API server). The rest run on the leader only, for
 * its controllers.
 */
import type {
  KubeConfig,
  V1ClusterRole,
  V1ClusterRoleBinding,
  KubernetesObject,
  V1CustomResourceDefinition,
  V1Namespace,
  V1Role,
  V1RoleBinding,
  V1Secret,
} from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { watchInformer, type WatchInformer } from '../controller';
import { untilAborted } from '../lib/abort';
import {
  CLAIMED_ROLE,
  type APIServiceExport,
  type APIServiceExportRequest,
  type APIServiceExportTemplate,
  type APIServiceNamespace,
  type ClusterBinding,
} from '../exports/bind-api';
import type { ExportableSource } from './exportable';
import type { NamespaceCache } from './provision/cluster-namespace';
import { type BindResource, BindResources, type Clients } from './kube';
import { Labels, MANAGED_BY } from './labels';

/** A bind object as an informer holds it (client-node's KubernetesObject, with our wire types). */
export type Informed<T> = T & KubernetesObject;

function customInformer<T>(c: Clients, r: BindResource, log: Logger): WatchInformer<Informed<T>> {
  return watchInformer<Informed<T>>({
    kc: c.kc,
    path: `/apis/${r.group}/${r.version}/${r.plural}`,
    log,
  });
}

export interface ServingInformers {
  readonly crds: WatchInformer<V1CustomResourceDefinition>;
  readonly templates: WatchInformer<Informed<APIServiceExportTemplate>>;
  /** Cluster namespaces (label identity-hash): this backend's, adopted ones, and other klutch-kit backends'. */
  readonly clusterNamespaces: WatchInformer<V1Namespace>;
  /**
   * Namespaces of neither kind a klutch-kit backend labels (no identity-hash, no cluster-namespace label), metadata
   * only: Klutch's cluster namespaces not adopted yet are among them, and leave it when adopted.
   */
  readonly foreignNamespaces: WatchInformer<V1Namespace>;
}

export function servingInformers(c: Clients, log: Logger): ServingInformers {
  return {
    crds: watchInformer<V1CustomResourceDefinition>({
      kc: c.kc,
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      log,
    }),
    templates: customInformer<APIServiceExportTemplate>(c, BindResources.templates, log),
    clusterNamespaces: watchInformer<V1Namespace>({ kc: c.kc, path: '/api/v1/namespaces', labelSelector: Labels.identityHash, log }),
    foreignNamespaces: watchInformer<V1Namespace>({
      kc: metadataOnly(c.kc),
      path: '/api/v1/namespaces',
      labelSelector: `!${Labels.identityHash},!${Labels.clusterNamespace}`,
      log,
    }),
  };
}

/** Where bind requests find cluster namespaces: the serving informers' caches. */
export function cachedNamespaces(i: ServingInformers): NamespaceCache {
  return { clusterNamespaces: () => i.clusterNamespaces.list(), foreignNamespaces: () => i.foreignNamespaces.list() };
}

/** What can be exported, from the serving informers' caches. */
export function cachedExportables(i: ServingInformers): ExportableSource {
  return {
    templates: async () => i.templates.list() as APIServiceExportTemplate[],
    crd: async (name) => i.crds.get(name),
  };
}

export interface LeaderInformers {
  readonly exportRequests: WatchInformer<Informed<APIServiceExportRequest>>;
  readonly exports: WatchInformer<Informed<APIServiceExport>>;
  readonly serviceNamespaces: WatchInformer<Informed<APIServiceNamespace>>;
  readonly clusterBindings: WatchInformer<Informed<ClusterBinding>>;
  /** Namespaces the backend made: cluster namespaces and those made for APIServiceNamespaces. */
  readonly namespaces: WatchInformer<V1Namespace>;
  /** The provider-side kubeconfig Secrets. */
  readonly kubeconfigs: WatchInformer<V1Secret>;
  /** The backend's ClusterRoles and ClusterRoleBindings (its managed-by label): the consumers' `klutch-binder-<ns>`. */
  readonly clusterRoles: WatchInformer<V1ClusterRole>;
  readonly clusterRoleBindings: WatchInformer<V1ClusterRoleBinding>;
  /** Roles and RoleBindings `klutch-binder-claimed` (provider namespaces). */
  readonly claimedRoles: WatchInformer<V1Role>;
  readonly claimedRoleBindings: WatchInformer<V1RoleBinding>;
}

export function leaderInformers(c: Clients, log: Logger): LeaderInformers {
  const managed = `${Labels.managedBy}=${MANAGED_BY}`;
  const kubeconfigs = `${Labels.kubeconfig}=true`;
  return {
    exportRequests: customInformer<APIServiceExportRequest>(c, BindResources.exportRequests, log),
    exports: customInformer<APIServiceExport>(c, BindResources.exports, log),
    serviceNamespaces: customInformer<APIServiceNamespace>(c, BindResources.serviceNamespaces, log),
    clusterBindings: customInformer<ClusterBinding>(c, BindResources.clusterBindings, log),
    namespaces: watchInformer<V1Namespace>({
      kc: c.kc,
      path: '/api/v1/namespaces',
      labelSelector: managed,
      log,
    }),
    kubeconfigs: watchInformer<V1Secret>({
      kc: c.kc,
      path: '/api/v1/secrets',
      labelSelector: kubeconfigs,
      log,
    }),
    clusterRoles: watchInformer<V1ClusterRole>({
      kc: c.kc,
      path: '/apis/rbac.authorization.k8s.io/v1/clusterroles',
      labelSelector: managed,
      log,
    }),
    clusterRoleBindings: watchInformer<V1ClusterRoleBinding>({
      kc: c.kc,
      path: '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings',
      labelSelector: managed,
      log,
    }),
    claimedRoles: watchInformer<V1Role>({
      kc: c.kc,
      path: '/apis/rbac.authorization.k8s.io/v1/roles',
      fieldSelector: `metadata.name=${CLAIMED_ROLE}`,
      log,
    }),
    claimedRoleBindings: watchInformer<V1RoleBinding>({
      kc: c.kc,
      path: '/apis/rbac.authorization.k8s.io/v1/rolebindings',
      fieldSelector: `metadata.name=${CLAIMED_ROLE}`,
      log,
    }),
  };
}

const LIST_METADATA = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const WATCH_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/**
 * `kc`, asking the API server for metadata only (PartialObjectMetadata, as client-go's metadata informers): a Secret's
 * data never reaches the backend's memory. A list sets an Accept header of its own (controller/informer.ts listWire),
 * a watch none: that tells them apart.
 */
export function metadataOnly(kc: KubeConfig): KubeConfig {
  const m = Object.create(kc) as KubeConfig;
  m.applyToHTTPSOptions = async (opts) => {
    const list = Boolean((opts.headers as Record<string, unknown> | undefined)?.Accept);
    await kc.applyToHTTPSOptions(opts);
    opts.headers = { ...opts.headers, Accept: list ? LIST_METADATA : WATCH_METADATA };
  };
  return m;
}

/** Metadata of an object as the metadata-only informers hold it. */
export type ObjectMetadata = KubernetesObject;

/**
 * Metadata-only informers over the resources that claimed access depends on (the exported resources and the claimed
 * ones), made on first use: one per resource, cluster-wide, each event is one object's metadata. Their number is
 * bounded by the templates' resources.
 */
export class ObjectInformers {
  private readonly informers = new Map<string, WatchInformer<ObjectMetadata>>();
  private readonly listeners: ((i: WatchInformer<ObjectMetadata>) => void)[] = [];
  private stopped = false;

  constructor(
    private readonly c: Clients,
    private readonly log: Logger,
  ) {}

  /** The informer of `group`/`resource` (started at the first call, with `version`). */
  ensure(group: string, version: string, resource: string): WatchInformer<ObjectMetadata> {
    const key = `${resource}.${group}`;
    let i = this.informers.get(key);
    if (i) return i;
    const path = group ? `/apis/${group}/${version}/${resource}` : `/api/${version}/${resource}`;
    i = watchInformer<ObjectMetadata>({ kc: metadataOnly(this.c.kc), path, log: this.log });
    this.informers.set(key, i);
    for (const l of this.listeners) l(i);
    if (!this.stopped) void i.start();
    return i;
  }

  get(group: string, resource: string): WatchInformer<ObjectMetadata> | undefined {
    return this.informers.get(`${resource}.${group}`);
  }

  /** Calls `cb` with every informer made from now on. */
  onNew(cb: (i: WatchInformer<ObjectMetadata>) => void): void {
    this.listeners.push(cb);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all([...this.informers.values()].map((i) => i.stop()));
  }
}

/**
 * Starts informers and resolves when all have listed once, or when `signal` aborts: a list that keeps failing (the
 * backend's RBAC cut, its CRDs gone) must not hold a shutdown.
 */
export async function startAll(informers: ServingInformers | LeaderInformers, signal?: AbortSignal): Promise<void> {
  const all = Object.values(informers) as WatchInformer<KubernetesObject>[];
  await Promise.all(all.map((i) => i.start()));
  await untilAborted(Promise.all(all.map((i) => i.synced)), signal);
}

export async function stopAll(informers: ServingInformers | LeaderInformers): Promise<void> {
  await Promise.all((Object.values(informers) as WatchInformer<KubernetesObject>[]).map((i) => i.stop()));
}
