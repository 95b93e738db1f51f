/**
 * The backend's Kubernetes clients (@kubernetes/client-node) and the few things every caller asks of an API error.
 * Bind objects go through CustomObjectsApi with their plurals from here; server-side apply under one field manager.
 */
import { createSecureContext } from 'node:tls';
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

/**
 * @kubernetes/client-node 1.x makes a new https.Agent for every request, so every API call pays a fresh TLS handshake
 * and a fresh TLS context (measured: most of the backend's CPU per bind). This gives a KubeConfig one keep-alive
 * agent per cluster, with its TLS context made once. It replaces the private `createAgent`; a client-node upgrade that
 * renames it makes this a no-op, not a failure. Client certificates are read once (the backend uses a token).
 */
export function reuseConnections(kc: KubeConfig): KubeConfig {
  const target = kc as unknown as { createAgent?: (cluster: object | null, options: Record<string, unknown>) => unknown };
  const original = target.createAgent?.bind(kc);
  if (!original) return kc;
  const agents = new WeakMap<object, unknown>();
  let unnamed: unknown;
  target.createAgent = (cluster, options) => {
    const cached = cluster ? agents.get(cluster) : unnamed;
    if (cached) return cached;
    const { ca, cert, key } = options as { ca?: string | Buffer; cert?: string | Buffer; key?: string | Buffer };
    const secureContext = createSecureContext({ ca, cert, key });
    const agent = original(cluster, { ...options, keepAlive: true, secureContext });
    if (cluster) agents.set(cluster, agent);
    else unnamed = agent;
    return agent;
  };
  return kc;
}

export function clientsFor(kc: KubeConfig): Clients {
  reuseConnections(kc);
  return {
    kc,
    core: kc.makeApiClient(CoreV1Api),
    rbac: kc.makeApiClient(RbacAuthorizationV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    crds: kc.makeApiClient(ApiextensionsV1Api),
    leases: kc.makeApiClient(CoordinationV1Api),
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
