/**
 * The bind endpoints on one HTTP(S) server: routing, per-request metrics and logs, and errors as pages. Stateless:
 * everything a request needs is in its sealed cookies and state, so any replica can answer any request.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import { handleAuthorize } from './authorize';
import { handleBind } from './bind';
import { handleCallback } from './callback';
import type { HttpDeps } from './deps';
import { handleExport } from './export';
import { isMachineRequest, sendMachineError } from './machine';
import { handleResources } from './resources';
import { clientKey } from './rate-limit';
import { HttpError, sendError, setSecurityHeaders } from './respond';

interface Route {
  readonly handle: (req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps) => Promise<void> | void;
  /** HEAD is answered only where a GET has no side effect (a HEAD /bind must not provision). */
  readonly head?: boolean;
  /** Counts against the client's rate limit: each costs the backend a sealed state, a token exchange or a provisioning. */
  readonly limited?: boolean;
}

const ROUTES: Record<string, Route> = {
  '/export': { handle: (req, res, _url, d) => handleExport(req, res, d), head: true },
  '/authorize': { handle: handleAuthorize, limited: true },
  '/callback': { handle: handleCallback, limited: true },
  '/resources': { handle: handleResources },
  '/bind': { handle: handleBind, limited: true },
};

export function bindHandler(d: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    // HSTS when browsers come over https: to this server, or to a TLS proxy in front (an https external URL).
    setSecurityHeaders(res, d.secureCookies || (req.socket as TLSSocket).encrypted === true);
    const url = new URL(req.url ?? '/', 'http://backend');
    const route = ROUTES[url.pathname];
    const end = d.metrics.requests.startTimer({ route: route ? url.pathname : 'other' });
    res.once('finish', () => end({ code: String(res.statusCode) }));
    if (!route) return sendError(res, new HttpError(404, 'Not found', `${url.pathname} is not a bind endpoint; start with /export.`));
    if (req.method !== 'GET' && !(req.method === 'HEAD' && route.head)) {
      const allow = route.head ? 'GET, HEAD' : 'GET';
      res.setHeader('Allow', allow);
      return sendError(res, new HttpError(405, 'Method not allowed', `${url.pathname} answers ${allow.replace(', ', ' and ')} only.`));
    }
    if (route.limited && d.limiter) {
      const waitMs = d.limiter.take(clientKey(req, d.trustedProxies));
      if (waitMs > 0) {
        const seconds = Math.ceil(waitMs / 1000);
        d.metrics.rateLimited.inc({ route: url.pathname });
        res.setHeader('Retry-After', String(seconds));
        return sendError(
          res,
          new HttpError(429, 'Too many requests', `Too many logins from your address. Wait ${seconds} s, then run kubectl bind again.`),
        );
      }
    }
    // A program with an access token reads JSON; a browser reads pages.
    const fail = (e: HttpError) => (isMachineRequest(req) ? sendMachineError(res, e) : sendError(res, e));
    Promise.resolve(route.handle(req, res, url, d)).catch((e: unknown) => {
      if (e instanceof HttpError) {
        if (e.authReason) d.metrics.authFailures.inc({ reason: e.authReason });
        d.log.info({ route: url.pathname, status: e.status, reason: e.authReason, detail: e.message }, 'refused');
        return fail(e);
      }
      if (url.pathname === '/bind') d.metrics.binds.inc({ result: 'error' });
      // The detail (an API server's refusal names our ServiceAccount and its rights) stays in the log; the page
      // carries only the id to find it by.
      const id = randomBytes(6).toString('hex');
      d.log.error({ route: url.pathname, err: e instanceof Error ? e : new Error(String(e)), errorId: id }, 'request failed');
      fail(
        new HttpError(
          500,
          'Something went wrong',
          `The backend could not complete this request (error id ${id}). Try again; if it keeps failing, tell the platform operator the error id: the backend's log has the details under it.`,
        ),
      );
    });
  };
}

/** Limits of the bind endpoints' server; Node's defaults allow slow and endless clients. */
export interface ServerLimits {
  /** Whole request received within this. */
  readonly requestTimeoutMs: number;
  /** Request headers received within this. */
  readonly headersTimeoutMs: number;
  /** An idle keep-alive connection is closed after this. */
  readonly keepAliveTimeoutMs: number;
  /** Open connections at most; more are refused. */
  readonly maxConnections: number;
}

export const DEFAULT_LIMITS: ServerLimits = {
  requestTimeoutMs: 30_000,
  headersTimeoutMs: 10_000,
  keepAliveTimeoutMs: 5_000,
  maxConnections: 1_000,
};

/** Headers per request at most (a browser sends about 20, proxies add a few); Node's default is 2000. */
const MAX_HEADERS = 100;

export interface ListeningServer {
  readonly port: number;
  /**
   * Drains: stops accepting connections, closes idle keep-alive connections, answers requests still arriving on open
   * ones with `Connection: close` (so keep-alive clients reconnect, through the Service, to a replica that stays), and
   * resolves once every request in flight has finished.
   */
  close(): Promise<void>;
}

/** Listens on `host:port`, over HTTPS when a certificate and key are given. */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  o: { host: string; port: number; tlsCertFile?: string; tlsKeyFile?: string; limits?: ServerLimits },
): Promise<ListeningServer> {
  const l = o.limits ?? DEFAULT_LIMITS;
  const options = {
    requestTimeout: l.requestTimeoutMs,
    headersTimeout: l.headersTimeoutMs,
    keepAliveTimeout: l.keepAliveTimeoutMs,
  };
  // Node's server.close() closes only the connections idle at that moment: one with a request in flight stays open
  // and keeps serving as keep-alive until it idles out, so a client could keep talking to a terminating replica.
  // While draining every answer ends its connection, and those begun before are closed once they are answered.
  let draining = false;
  const inFlight = new Set<ServerResponse>();
  const handle = (req: IncomingMessage, res: ServerResponse) => {
    if (draining) res.setHeader('Connection', 'close');
    else {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
    }
    handler(req, res);
  };
  const server =
    o.tlsCertFile && o.tlsKeyFile
      ? https.createServer({ ...options, cert: readFileSync(o.tlsCertFile), key: readFileSync(o.tlsKeyFile) }, handle)
      : http.createServer(options, handle);
  server.maxConnections = l.maxConnections;
  server.maxHeadersCount = MAX_HEADERS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        draining = true;
        for (const res of inFlight) {
          if (!res.headersSent) res.setHeader('Connection', 'close');
          else res.once('finish', () => setImmediate(() => server.closeIdleConnections()));
        }
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
