/**
 * API clients that keep their connections: @kubernetes/client-node makes a new undici Agent for every request
 * (`KubeConfig.applySecurityAuthentication`, 2.0.1), so every call would pay a TCP and TLS handshake and a new TLS
 * context — most of a controller's CPU under load. A configuration made here keeps the library's authentication (it
 * reads the KubeConfig's current user on every request, so a rotated token takes effect at once) and swaps in one
 * keep-alive dispatcher per configuration, rebuilt when the TLS material changes.
 */
import https from 'node:https';
import tls from 'node:tls';
import { Agent as UndiciAgent, type Dispatcher } from 'undici';
import {
  type Configuration,
  createConfiguration,
  type KubeConfig,
  type RequestContext,
  type SecurityAuthentication,
  ServerConfiguration,
  wrapHttpLibrary,
} from '@kubernetes/client-node';
import { userAgent } from '../lib/user-agent';
import { restClientRequests } from './metrics';
import { type RateLimit, TokenBucket } from './rate-limit';

export interface KeepAliveOptions {
  /** Concurrent connections to the API server. @default 32 */
  readonly maxSockets?: number;
  /** How long a connection may sit idle in the pool before the client closes it. @default IDLE_SOCKET_MS */
  readonly idleMs?: number;
  /**
   * A client-side rate limit for this configuration's requests (one bucket per configuration, as client-go). Informers
   * list and watch through the KubeConfig itself and are not counted.
   */
  readonly rateLimit?: RateLimit;
}

/**
 * kube-apiserver closes a connection idle for 90 s (k8s.io/apiserver secure_serving.go). A request written on such a
 * connection as the server closes it fails with "socket hang up" though the server never saw it; closing idle
 * connections on our side well before then keeps the pool free of connections the server is about to drop.
 */
const IDLE_SOCKET_MS = 30_000;

/** What of a request's HTTPS options decides its connection's TLS. */
type TlsOptions = Pick<https.AgentOptions, 'ca' | 'cert' | 'key' | 'rejectUnauthorized' | 'servername'>;

/**
 * One keep-alive agent for the TLS material of the HTTPS options it is handed (`KubeConfig.applyToHTTPSOptions`),
 * made anew only when that material changes: for callers that send their own requests (harness/cluster/kube.ts `request`),
 * since `applyToHTTPSOptions` puts a new agent, and so a new connection, into every request's options.
 */
export function keepAliveAgent(maxSockets = 32, idleMs = IDLE_SOCKET_MS): (opts: TlsOptions) => https.Agent {
  let agent: https.Agent | undefined;
  let tlsKey = '';
  return (opts) => {
    const key = tlsKeyOf(opts);
    if (!agent || key !== tlsKey) {
      agent?.destroy();
      tlsKey = key;
      agent = new https.Agent({
        keepAlive: true,
        maxSockets,
        // A pooled socket times out after this long idle and the agent destroys it. A socket in use only makes its
        // request emit 'timeout', which nothing here listens to: long reads are not cut.
        timeout: idleMs,
        // One TLS context for all connections: given as ca/cert/key, Node parses them anew for every new socket,
        // which a burst opens by the dozen (measured: about 1 ms of CPU each, docs/decisions/bind-flow-cost.md).
        secureContext: tls.createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key }),
        rejectUnauthorized: opts.rejectUnauthorized,
        servername: opts.servername,
      });
    }
    return agent;
  };
}

/** The cache key of a request's TLS material: a new pool only when it changes (a rotated client certificate). */
function tlsKeyOf(opts: TlsOptions): string {
  return `${String(opts.ca)}|${String(opts.cert)}|${String(opts.key)}|${String(opts.rejectUnauthorized)}|${String(opts.servername)}`;
}

/**
 * One keep-alive undici dispatcher for the TLS material of the HTTPS options it is handed, as `keepAliveAgent` for
 * https.request: what client-node 2's fetch sends through (`RequestContext.setDispatcher`). Its pool closes a
 * connection idle for `idleMs` (kube-apiserver sends no Keep-Alive hint, so undici's own 4 s would apply). undici
 * speaks HTTP/2 where the server offers it (kube-apiserver does), and then its requests share one connection up to
 * the streams the server allows. `maxSockets` null: no limit on connections.
 */
function keepAliveDispatcher(maxSockets: number | null = 32, idleMs = IDLE_SOCKET_MS): (opts: TlsOptions) => Dispatcher {
  let dispatcher: UndiciAgent | undefined;
  let tlsKey = '';
  return (opts) => {
    const key = tlsKeyOf(opts);
    if (!dispatcher || key !== tlsKey) {
      // The old pool finishes what it carries, then closes.
      void dispatcher?.close();
      tlsKey = key;
      dispatcher = new UndiciAgent({
        connections: maxSockets,
        keepAliveTimeout: idleMs,
        keepAliveMaxTimeout: idleMs,
        connect: {
          // One TLS context for all connections, as keepAliveAgent's.
          secureContext: tls.createSecureContext({ ca: opts.ca, cert: opts.cert, key: opts.key }),
          ...(opts.rejectUnauthorized !== undefined ? { rejectUnauthorized: opts.rejectUnauthorized } : {}),
          ...(opts.servername ? { servername: opts.servername } : {}),
        },
      });
    }
    return dispatcher;
  };
}

/** A client-node Configuration for `kc`'s current cluster whose requests share one keep-alive connection pool. */
export function keepAliveConfiguration(kc: KubeConfig, o: KeepAliveOptions = {}): Configuration {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster with a server');
  const dispatcherFor = keepAliveDispatcher(o.maxSockets, o.idleMs);
  const bucket = o.rateLimit ? new TokenBucket(o.rateLimit) : undefined;
  const auth: SecurityAuthentication = {
    getName: () => 'kubeconfig with a keep-alive agent',
    async applySecurityAuthentication(context: RequestContext) {
      // Every request of the configuration passes here first: the one place to wait for the rate limit.
      await bucket?.take();
      await kc.applySecurityAuthentication(context);
      context.setHeaderParam('User-Agent', userAgent());
      const opts: https.RequestOptions = {};
      await kc.applyToHTTPSOptions(opts);
      context.setDispatcher(dispatcherFor(opts));
    },
  };
  const baseServer = new ServerConfiguration(server, {});
  const fetched = createConfiguration({ baseServer, authMethods: { default: auth } }).httpApi;
  const host = new URL(server).host;
  // client-go's rest_client_requests_total: each request's outcome, counted where the response (or its failure) arrives.
  const httpApi = wrapHttpLibrary({
    async send(request) {
      const method = request.getHttpMethod();
      try {
        const response = await fetched.send(request).toPromise();
        restClientRequests.inc({ code: String(response.httpStatusCode), host, method });
        return response;
      } catch (e) {
        restClientRequests.inc({ code: '<error>', host, method });
        throw readableFetchError(e, method, request.getUrl());
      }
    },
  });
  return createConfiguration({ baseServer, authMethods: { default: auth }, httpApi });
}

/**
 * fetch's failure as the reader needs it: undici says only "fetch failed" and keeps why (a refused connection, a
 * certificate it could not verify) in `cause`, so every message built from `e.message` would lose it. The request and
 * the innermost reason, as client-node 1's node-fetch said it; the original stays the cause.
 */
function readableFetchError(e: unknown, method: string, url: string): unknown {
  if (!(e instanceof TypeError) || e.message !== 'fetch failed' || !(e.cause instanceof Error)) return e;
  let reason: Error = e.cause;
  while (reason.cause instanceof Error) reason = reason.cause;
  // A host with several addresses fails with an AggregateError of one error each, and no message of its own.
  if (reason instanceof AggregateError && !reason.message && reason.errors[0] instanceof Error) reason = reason.errors[0];
  const why = reason.message || (reason as { code?: string }).code || String(reason);
  return new Error(`request to ${method} ${url} failed, reason: ${why}`, { cause: e });
}

/** An API client (`CoreV1Api`, ...) on a keep-alive configuration: `keepAliveClient(kc, CoreV1Api)`. */
export function keepAliveClient<T>(kc: KubeConfig, api: new (config: Configuration) => T, config = keepAliveConfiguration(kc)): T {
  return new api(config);
}

/**
 * The connections of each KubeConfig's watches. client-node's Watch makes a new undici Agent, so a new TCP and TLS
 * connection, for every watch: a konnector that may read its shared Secrets only by name watches each on its own,
 * and 1,000 `<binding>-creds` were 1,000 connections to the control plane (issue 40). Through one dispatcher they are
 * streams of one HTTP/2 connection, as client-go's watches are (100 to a connection, then another). No limit on
 * connections: against a server that speaks HTTP/1.1 only, every watch still needs its own, and one made to wait
 * for a free connection would never start.
 */
const watchDispatchers = new WeakMap<KubeConfig, (opts: TlsOptions) => Dispatcher>();

/**
 * `kc` as client-node's Watch reads it: its requests carry this process's User-Agent (the Watch sends the headers
 * `applySecurityAuthentication` puts into its request context, and nothing else of ours passes there) and share the
 * KubeConfig's watch connections.
 */
export function watchConfig(kc: KubeConfig): KubeConfig {
  return new Proxy(kc, {
    get(target, key) {
      if (key === 'applySecurityAuthentication')
        return async (context: RequestContext) => {
          await target.applySecurityAuthentication(context);
          context.setHeaderParam('User-Agent', userAgent());
          const opts: https.RequestOptions = {};
          await target.applyToHTTPSOptions(opts);
          let dispatcherFor = watchDispatchers.get(target);
          if (!dispatcherFor) watchDispatchers.set(target, (dispatcherFor = keepAliveDispatcher(null)));
          context.setDispatcher(dispatcherFor(opts));
        };
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
