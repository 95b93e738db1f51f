/**
 * The backend's Kubernetes clients (@kubernetes/client-node) and the few things every caller asks of an API error.
 * Bind objects go through CustomObjectsApi with their plurals from here; server-side apply under one field manager.
 */
import { keepAliveConfiguration } from '../controller';
import {
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  RbacAuthorizationV1Api,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { BIND_GROUP, BIND_VERSION, Kinds, TEMPLATE_GROUP, TEMPLATE_VERSION } from '../exports/bind-api';

/** The field manager of everything the backend applies. */
export const FIELD_MANAGER = 'klutch-kit-backend';

export interface Clients {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  readonly custom: CustomObjectsApi;
  readonly crds: ApiextensionsV1Api;
  readonly leases: CoordinationV1Api;
}

/** The backend's clients, sharing one keep-alive connection pool (controller/clients.ts). */
export function clientsFor(kc: KubeConfig): Clients {
  const config = keepAliveConfiguration(kc);
  return {
    kc,
    core: new CoreV1Api(config),
    rbac: new RbacAuthorizationV1Api(config),
    custom: new CustomObjectsApi(config),
    crds: new ApiextensionsV1Api(config),
    leases: new CoordinationV1Api(config),
  };
}

/** Group, version and plural of each bind kind the backend reads or writes. */
export const BindResources = {
  exports: { group: BIND_GROUP, version: BIND_VERSION, plural: 'apiserviceexports', kind: Kinds.APIServiceExport },
  exportRequests: { group: BIND_GROUP, version: BIND_VERSION, plural: 'apiserviceexportrequests', kind: Kinds.APIServiceExportRequest },
  namespaces: { group: BIND_GROUP, version: BIND_VERSION, plural: 'apiservicenamespaces', kind: Kinds.APIServiceNamespace },
  clusterBindings: { group: BIND_GROUP, version: BIND_VERSION, plural: 'clusterbindings', kind: Kinds.ClusterBinding },
  templates: {
    group: TEMPLATE_GROUP,
    version: TEMPLATE_VERSION,
    plural: 'apiserviceexporttemplates',
    kind: Kinds.APIServiceExportTemplate,
  },
} as const;
export type BindResource = (typeof BindResources)[keyof typeof BindResources];

/** The CRD each bind resource needs, by name (for "install it" messages). */
export function crdName(r: BindResource): string {
  return `${r.plural}.${r.group}`;
}

/** Options that make a patch call a server-side apply. */
export const APPLY = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
export const MERGE_PATCH = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

export function statusCode(e: unknown): number | undefined {
  const code = (e as { code?: unknown }).code;
  return typeof code === 'number' ? code : undefined;
}
export const isNotFound = (e: unknown): boolean => statusCode(e) === 404;
export const isConflict = (e: unknown): boolean => statusCode(e) === 409;

/** The API server's message of an error, for logs and conditions. */
export function apiMessage(e: unknown): string {
  const body = (e as { body?: unknown }).body;
  if (typeof body === 'string') {
    try {
      return (JSON.parse(body) as { message?: string }).message ?? body;
    } catch {
      return body;
    }
  }
  if (body && typeof body === 'object' && 'message' in body) return String((body as { message: unknown }).message);
  return e instanceof Error ? e.message : String(e);
}
