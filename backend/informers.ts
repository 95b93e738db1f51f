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
import { startInformers, stopInformers, watchInformer, type WatchInformer } from '../controller';
import {
  bindPath,
  CLAIMED_ROLE,
  type APIServiceExport,
  type APIServiceExportRequest,
  type APIServiceExportTemplate,
  type APIServiceNamespace,
  type ClusterBinding,
} from '../exports/bind-api';
import type { ExportableSource } from './exportable';
import type { NamespaceCache } from './provision/cluster-namespace';
import { BindResources, type BackendClients } from './kube';
import { Labels, MANAGED_BY } from './labels';

/** A bind object as an informer holds it (client-node's KubernetesObject, with our wire types). */
export type Informed<T> = T & KubernetesObject;

/** What one informer watches: a collection, narrowed by label or field, whole objects or their metadata only. */
export interface Watched {
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** PartialObjectMetadata only (metadataOnly below). */
  readonly metadataOnly?: boolean;
}

/** One informer per entry of `objects`, each holding that entry's type. */
export type InformersOf<Objects> = { readonly [K in keyof Objects]: WatchInformer<Objects[K] & KubernetesObject> };

/** The informers of a table (name → what it watches), made but not started. */
function informersOf<Objects>(c: BackendClients, log: Logger, table: { readonly [K in keyof Objects]: Watched }): InformersOf<Objects> {
  return Object.fromEntries(
    Object.entries<Watched>(table).map(([name, w]) => [
      name,
      watchInformer({
        kc: w.metadataOnly ? metadataOnly(c.kc) : c.kc,
        path: w.path,
        ...(w.labelSelector ? { labelSelector: w.labelSelector } : {}),
        ...(w.fieldSelector ? { fieldSelector: w.fieldSelector } : {}),
        log,
      }),
    ]),
  ) as InformersOf<Objects>;
}

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

interface ServingObjects {
  crds: V1CustomResourceDefinition;
  templates: APIServiceExportTemplate;
  /** Cluster namespaces (label identity-hash): this backend's, adopted ones, and other klutch-kit backends'. */
  clusterNamespaces: V1Namespace;
  /**
   * Namespaces of neither kind a klutch-kit backend labels (no identity-hash, no cluster-namespace label), metadata
   * only: Klutch's cluster namespaces not adopted yet are among them, and leave it when adopted.
   */
  foreignNamespaces: V1Namespace;
}
export type ServingInformers = InformersOf<ServingObjects>;

/** What the serving informers watch. */
export const SERVING_WATCHED: { readonly [K in keyof ServingObjects]: Watched } = {
  crds: { path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions' },
  templates: { path: bindPath(BindResources.templates) },
  clusterNamespaces: { path: '/api/v1/namespaces', labelSelector: Labels.identityHash },
  foreignNamespaces: {
    path: '/api/v1/namespaces',
    labelSelector: `!${Labels.identityHash},!${Labels.clusterNamespace}`,
    metadataOnly: true,
  },
};

export function servingInformers(c: BackendClients, log: Logger): ServingInformers {
  return informersOf<ServingObjects>(c, log, SERVING_WATCHED);
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

interface LeaderObjects {
  exportRequests: APIServiceExportRequest;
  exports: APIServiceExport;
  serviceNamespaces: APIServiceNamespace;
  clusterBindings: ClusterBinding;
  /** Namespaces the backend made: cluster namespaces and those made for APIServiceNamespaces. */
  namespaces: V1Namespace;
  /** The provider-side kubeconfig Secrets. */
  kubeconfigs: V1Secret;
  /** The backend's ClusterRoles and ClusterRoleBindings (its managed-by label): the consumers' `klutch-binder-<ns>`. */
  clusterRoles: V1ClusterRole;
  clusterRoleBindings: V1ClusterRoleBinding;
  /** Roles and RoleBindings `klutch-binder-claimed` (provider namespaces). */
  claimedRoles: V1Role;
  claimedRoleBindings: V1RoleBinding;
}
export type LeaderInformers = InformersOf<LeaderObjects>;

const managed = `${Labels.managedBy}=${MANAGED_BY}`;
const claimed = `metadata.name=${CLAIMED_ROLE}`;

/** What the leader's informers watch. */
export const LEADER_WATCHED: { readonly [K in keyof LeaderObjects]: Watched } = {
  exportRequests: { path: bindPath(BindResources.exportRequests) },
  exports: { path: bindPath(BindResources.exports) },
  serviceNamespaces: { path: bindPath(BindResources.serviceNamespaces) },
  clusterBindings: { path: bindPath(BindResources.clusterBindings) },
  namespaces: { path: '/api/v1/namespaces', labelSelector: managed },
  kubeconfigs: { path: '/api/v1/secrets', labelSelector: `${Labels.kubeconfig}=true` },
  clusterRoles: { path: `${RBAC}/clusterroles`, labelSelector: managed },
  clusterRoleBindings: { path: `${RBAC}/clusterrolebindings`, labelSelector: managed },
  claimedRoles: { path: `${RBAC}/roles`, fieldSelector: claimed },
  claimedRoleBindings: { path: `${RBAC}/rolebindings`, fieldSelector: claimed },
};

export function leaderInformers(c: BackendClients, log: Logger): LeaderInformers {
  return informersOf<LeaderObjects>(c, log, LEADER_WATCHED);
}

const LIST_METADATA = 'application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1';
const WATCH_METADATA = 'application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1';

/**
 * `kc`, asking the API server for metadata only (PartialObjectMetadata, as client-go's metadata informers): a Secret's
 * data never reaches the backend's memory. A list goes through `applyToHTTPSOptions` (controller/informer.ts
 * listWire), client-node's Watch through `applySecurityAuthentication`: each gets its Accept header there.
 */
export function metadataOnly(kc: KubeConfig): KubeConfig {
  const m = Object.create(kc) as KubeConfig;
  m.applyToHTTPSOptions = async (opts) => {
    await kc.applyToHTTPSOptions(opts);
    opts.headers = { ...opts.headers, Accept: LIST_METADATA };
  };
  m.applySecurityAuthentication = async (context) => {
    await kc.applySecurityAuthentication(context);
    context.setHeaderParam('Accept', WATCH_METADATA);
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
    private readonly c: BackendClients,
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

/** Starts a table's informers and resolves when all have listed once, or when `signal` aborts (controller/runner.ts). */
export async function startAll(informers: ServingInformers | LeaderInformers, signal?: AbortSignal): Promise<void> {
  await startInformers(Object.values(informers) as WatchInformer<KubernetesObject>[], signal);
}

export async function stopAll(informers: ServingInformers | LeaderInformers): Promise<void> {
  await stopInformers(Object.values(informers) as WatchInformer<KubernetesObject>[]);
}
