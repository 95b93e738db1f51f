/**
 * The backend's informers (controller/'s watchInformer). Two run on every replica and feed the HTTP side (what can
 * be exported): CRDs and APIServiceExportTemplates. The rest run on the leader only, for its controllers.
 */
import type { KubernetesObject, V1CustomResourceDefinition, V1Namespace, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { watchInformer, type WatchInformer } from '../controller';
import type {
  APIServiceExport,
  APIServiceExportRequest,
  APIServiceExportTemplate,
  APIServiceNamespace,
  ClusterBinding,
} from '../exports/bind-api';
import type { ExportableSource } from './exportable';
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
}

export function servingInformers(c: Clients, log: Logger): ServingInformers {
  return {
    crds: watchInformer<V1CustomResourceDefinition>({
      kc: c.kc,
      path: '/apis/apiextensions.k8s.io/v1/customresourcedefinitions',
      log,
    }),
    templates: customInformer<APIServiceExportTemplate>(c, BindResources.templates, log),
  };
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
}

export function leaderInformers(c: Clients, log: Logger): LeaderInformers {
  const managed = `${Labels.managedBy}=${MANAGED_BY}`;
  const kubeconfigs = `${Labels.kubeconfig}=true`;
  return {
    exportRequests: customInformer<APIServiceExportRequest>(c, BindResources.exportRequests, log),
    exports: customInformer<APIServiceExport>(c, BindResources.exports, log),
    serviceNamespaces: customInformer<APIServiceNamespace>(c, BindResources.namespaces, log),
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
  };
}

/** Starts informers and resolves when all have listed once. */
export async function startAll(informers: ServingInformers | LeaderInformers): Promise<void> {
  const all = Object.values(informers) as WatchInformer<KubernetesObject>[];
  await Promise.all(all.map((i) => i.start()));
  await Promise.all(all.map((i) => i.synced));
}

export async function stopAll(informers: ServingInformers | LeaderInformers): Promise<void> {
  await Promise.all((Object.values(informers) as WatchInformer<KubernetesObject>[]).map((i) => i.stop()));
}
