/**
 * API clients for one cluster, from one KubeConfig, on @kubernetes/client-node.
 *
 * The library makes a new https.Agent for every request (client-node 1.4, `applySecurityAuthentication`), so every
 * call would pay a TCP and TLS handshake. These clients keep the library's authentication (it still reads the
 * KubeConfig's current user on every request, which is how a rotated token takes effect at once) and only swap in
 * one keep-alive agent per cluster, rebuilt when the TLS material changes.
 */
import https from 'node:https';
import {
  ApiextensionsV1Api,
  AuthorizationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  ServerConfiguration,
  createConfiguration,
  setHeaderOptions,
  type RequestContext,
  type SecurityAuthentication,
} from '@kubernetes/client-node';

export interface Clients {
  readonly kc: KubeConfig;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly crds: ApiextensionsV1Api;
  readonly authz: AuthorizationV1Api;
}

export interface ClientOptions {
  /** Concurrent connections to the API server. @default 32 */
  readonly maxSockets?: number;
}

/** Clients that share one keep-alive connection pool and follow credential changes in `kc`. */
export function clientsFor(kc: KubeConfig, o: ClientOptions = {}): Clients {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster with a server');
  let agent: https.Agent | undefined;
  let tlsKey = '';
  const auth: SecurityAuthentication = {
    getName: () => 'kubeconfig with a keep-alive agent',
    async applySecurityAuthentication(context: RequestContext) {
      await kc.applySecurityAuthentication(context);
      const opts: https.AgentOptions = {};
      await kc.applyToHTTPSOptions(opts as never);
      const key = `${String(opts.ca)}|${String(opts.cert)}|${String(opts.key)}|${String(opts.rejectUnauthorized)}|${String(opts.servername)}`;
      if (!agent || key !== tlsKey) {
        agent?.destroy();
        tlsKey = key;
        agent = new https.Agent({
          keepAlive: true,
          maxSockets: o.maxSockets ?? 32,
          ca: opts.ca,
          cert: opts.cert,
          key: opts.key,
          rejectUnauthorized: opts.rejectUnauthorized,
          servername: opts.servername,
        });
      }
      context.setAgent(agent);
    },
  };
  const config = createConfiguration({ baseServer: new ServerConfiguration(server, {}), authMethods: { default: auth } });
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
