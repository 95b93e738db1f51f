/**
 * The backend's Kubernetes clients (@kubernetes/client-node) and the few things every caller asks of an API error
 * (lib/kube-errors.ts, shared with the konnector and the plugin).
 * Bind objects go through exports/bind-api's client (bindObjects); server-side apply under one field manager.
 */
import { keepAliveConfiguration } from '../controller';
import {
  ApiextensionsV1Api,
  AppsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  NetworkingV1Api,
  RbacAuthorizationV1Api,
} from '@kubernetes/client-node';

/** The field manager of everything the backend applies. */
export const FIELD_MANAGER = 'klutch-kit-backend';

export interface BackendClients {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  /** The AppClusterBinding controller's konnector Deployments. */
  readonly apps: AppsV1Api;
  /** The NetworkPolicy of each binding root namespace. */
  readonly networking: NetworkingV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  readonly custom: CustomObjectsApi;
  readonly crds: ApiextensionsV1Api;
  readonly leases: CoordinationV1Api;
}

/** The backend's clients, sharing one keep-alive connection pool (controller/clients.ts). */
export function backendClients(kc: KubeConfig): BackendClients {
  const config = keepAliveConfiguration(kc);
  return {
    kc,
    core: new CoreV1Api(config),
    apps: new AppsV1Api(config),
    networking: new NetworkingV1Api(config),
    rbac: new RbacAuthorizationV1Api(config),
    custom: new CustomObjectsApi(config),
    crds: new ApiextensionsV1Api(config),
    leases: new CoordinationV1Api(config),
  };
}

/** Bind kinds and the patch options: one table and one set for the backend and the konnector (exports/bind-api). */
export { APPLY_PATCH, BindResources, crdName, MERGE_PATCH } from '../exports/bind-api';

/** What every caller asks of an API error: one set for the whole project (lib/kube-errors.ts). */
export { isConflict, isNotFound, messageOf, statusOf } from '../lib/kube-errors';
