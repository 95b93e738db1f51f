/**
 * API clients that keep their connections: @kubernetes/client-node 1.x makes a new https.Agent for every request
 * (`KubeConfig.applySecurityAuthentication`), so every call would pay a TCP and TLS handshake and a new TLS context —
 * most of a controller's CPU under load. A configuration made here keeps the library's authentication (it reads the
 * KubeConfig's current user on every request, so a rotated token takes effect at once) and swaps in one keep-alive
 * agent per configuration, rebuilt when the TLS material changes.
 */
import https from 'node:https';
import tls from 'node:tls';
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
 * A keep-alive agent that hands a freed socket to a waiting request one macrotask later than Node does. client-node's
 * node-fetch 2 reports a chunked response (kube-apiserver sends every body over 2 KiB chunked) as "Premature close"
 * when, as the response closes, its socket already has a data listener: and Node gives a freed socket to the next
 * queued request one tick before the response it served closes. So whenever requests queue for the sockets (more in
 * flight than `maxSockets`: 50 binds at once) reads and writes failed with a response that had arrived whole. Waiting
 * for setImmediate lets the response close first.
 */
class KeepAliveAgent extends https.Agent {
  constructor(o: https.AgentOptions) {
    super(o);
    for (const free of this.listeners('free') as ((...args: unknown[]) => void)[]) {
      this.off('free', free);
      this.on('free', (socket: { destroyed?: boolean }, ...rest: unknown[]) =>
        // A socket closed meanwhile is gone from the pool already (and a waiting request got a new one).
        setImmediate(() => socket.destroyed || free.call(this, socket, ...rest)),
      );
    }
  }
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
    const key = `${String(opts.ca)}|${String(opts.cert)}|${String(opts.key)}|${String(opts.rejectUnauthorized)}|${String(opts.servername)}`;
    if (!agent || key !== tlsKey) {
      agent?.destroy();
      tlsKey = key;
      agent = new KeepAliveAgent({
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

/** A client-node Configuration for `kc`'s current cluster whose requests share one keep-alive connection pool. */
export function keepAliveConfiguration(kc: KubeConfig, o: KeepAliveOptions = {}): Configuration {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster with a server');
  const agentFor = keepAliveAgent(o.maxSockets, o.idleMs);
  const bucket = o.rateLimit ? new TokenBucket(o.rateLimit) : undefined;
  const auth: SecurityAuthentication = {
    getName: () => 'kubeconfig with a keep-alive agent',
    async applySecurityAuthentication(context: RequestContext) {
      // Every request of the configuration passes here first: the one place to wait for the rate limit.
      await bucket?.take();
      await kc.applySecurityAuthentication(context);
      context.setHeaderParam('User-Agent', userAgent());
      const opts: https.AgentOptions = {};
      await kc.applyToHTTPSOptions(opts as never);
      context.setAgent(agentFor(opts));
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
        throw e;
      }
    },
  });
  return createConfiguration({ baseServer, authMethods: { default: auth }, httpApi });
}

/** An API client (`CoreV1Api`, ...) on a keep-alive configuration: `keepAliveClient(kc, CoreV1Api)`. */
export function keepAliveClient<T>(kc: KubeConfig, api: new (config: Configuration) => T, config = keepAliveConfiguration(kc)): T {
  return new api(config);
}

/**
 * `kc` as client-node's Watch reads it, its requests carrying this process's User-Agent (the Watch sends what
 * `applyToFetchOptions` returns, and nothing else of ours passes there).
 */
export function watchConfig(kc: KubeConfig): KubeConfig {
  return new Proxy(kc, {
    get(target, key) {
      if (key === 'applyToFetchOptions')
        return (opts: https.RequestOptions) =>
          target.applyToFetchOptions({ ...opts, headers: { ...opts.headers, 'User-Agent': userAgent() } });
      const v: unknown = Reflect.get(target, key, target);
      return typeof v === 'function' ? (v as (...a: unknown[]) => unknown).bind(target) : v;
    },
  });
}
