/** API clients for one cluster, from one KubeConfig, on @kubernetes/client-node, with kept connections. */
import {
  ApiextensionsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
} from '@kubernetes/client-node';
import { keepAliveConfiguration, type KeepAliveOptions } from '../../controller';

export interface Clients {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly crds: ApiextensionsV1Api;
  readonly authz: AuthorizationV1Api;
}

/** Clients that share one keep-alive connection pool and follow credential changes in `kc` (controller/clients.ts). */
export function clientsFor(kc: KubeConfig, o: KeepAliveOptions = {}): Clients {
  const config = keepAliveConfiguration(kc, o);
  return {
    kc,
    core: new CoreV1Api(config),
    custom: new CustomObjectsApi(config),
    crds: new ApiextensionsV1Api(config),
    authz: new AuthorizationV1Api(config),
  };
}

/** Request options for a server-side apply patch. */
export const applyPatch = setHeaderOptions('Content-Type', PatchStrategy.ServerSideApply);
/** Request options for a JSON merge patch. */
export const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
/** Request options for a JSON patch. */
export const jsonPatch = setHeaderOptions('Content-Type', PatchStrategy.JsonPatch);

/** The HTTP status of a failed call, or undefined when the call never got an answer. */
export function statusOf(err: unknown): number | undefined {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'number' ? code : undefined;
}

export const isNotFound = (err: unknown): boolean => statusOf(err) === 404;
export const isConflict = (err: unknown): boolean => statusOf(err) === 409;
export const isForbidden = (err: unknown): boolean => statusOf(err) === 403;
export const isUnauthorized = (err: unknown): boolean => statusOf(err) === 401;

/** The API server's message of a failed call (its Status.message), else the error's own message. */
export function messageOf(err: unknown): string {
  const body = (err as { body?: unknown } | undefined)?.body;
  let parsed: unknown = body;
  if (typeof body === 'string') {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body || String((err as Error)?.message ?? err);
    }
  }
  const msg = (parsed as { message?: unknown } | undefined)?.message;
  if (typeof msg === 'string' && msg) return msg;
  const code = statusOf(err);
  if (code === 401) return 'Unauthorized (401): the credentials were rejected';
  return err instanceof Error ? err.message : String(err);
}
