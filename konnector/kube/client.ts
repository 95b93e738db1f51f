/**
 * API clients for one cluster, from one KubeConfig, on @kubernetes/client-node, with kept connections. What a caller
 * asks of their errors is lib/kube-errors.ts.
 */
import { ApiextensionsV1Api, AuthorizationV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { keepAliveConfiguration, type KeepAliveOptions } from '../../controller';

export interface KubeClients {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly crds: ApiextensionsV1Api;
  readonly authz: AuthorizationV1Api;
}

/** Clients that share one keep-alive connection pool and follow credential changes in `kc` (controller/clients.ts). */
export function kubeClients(kc: KubeConfig, o: KeepAliveOptions = {}): KubeClients {
  const config = keepAliveConfiguration(kc, o);
  return {
    kc,
    core: new CoreV1Api(config),
    custom: new CustomObjectsApi(config),
    crds: new ApiextensionsV1Api(config),
    authz: new AuthorizationV1Api(config),
  };
}
