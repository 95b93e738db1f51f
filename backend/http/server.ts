/**
 * The bind endpoints on one HTTP(S) server: routing, per-request metrics and logs, and errors as pages. Stateless:
 * everything a request needs is in its sealed cookies and state, so any replica can answer any request.
 */
import { readFileSync } from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { handleAuthorize } from './authorize';
import { handleBind } from './bind';
import { handleCallback } from './callback';
import type { HttpDeps } from './deps';
import { handleExport } from './export';
import { handleResources } from './resources';
import { HttpError, sendError } from './respond';

type Route = (req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps) => Promise<void> | void;

const ROUTES: Record<string, Route> = {
  '/export': (req, res, _url, d) => handleExport(req, res, d),
  '/authorize': handleAuthorize,
  '/callback': handleCallback,
  '/resources': handleResources,
  '/bind': handleBind,
};

export function bindHandler(d: HttpDeps): (req: IncomingMessage, res: ServerResponse) => void {
  return (req, res) => {
    const url = new URL(req.url ?? '/', 'http://backend');
    const route = ROUTES[url.pathname];
    const end = d.metrics.requests.startTimer({ route: route ? url.pathname : 'other' });
    res.once('finish', () => end({ code: String(res.statusCode) }));
    if (!route) return sendError(res, new HttpError(404, 'Not found', `${url.pathname} is not a bind endpoint; start with /export.`));
    if (req.method !== 'GET' && req.method !== 'HEAD') {
      res.setHeader('Allow', 'GET');
      return sendError(res, new HttpError(405, 'Method not allowed', `${url.pathname} answers GET only.`));
    }
    Promise.resolve(route(req, res, url, d)).catch((e: unknown) => {
      if (e instanceof HttpError) {
        if (e.authReason) d.metrics.authFailures.inc({ reason: e.authReason });
        d.log.info({ route: url.pathname, status: e.status, reason: e.authReason, err: e.message }, 'refused');
        return sendError(res, e);
      }
      if (url.pathname === '/bind') d.metrics.binds.inc({ result: 'error' });
      const id = Math.random().toString(36).slice(2, 10);
      d.log.error({ route: url.pathname, err: e instanceof Error ? e.stack : String(e), errorId: id }, 'request failed');
      sendError(
        res,
        new HttpError(
          500,
          'Something went wrong',
          `The backend could not complete ${url.pathname} (${e instanceof Error ? e.message : String(e)}); error id ${id} in its log. Try again; if it keeps failing, tell the platform operator.`,
        ),
      );
    });
  };
}

export interface ListeningServer {
  readonly port: number;
  /** Stops accepting connections and waits for open requests to finish (closing idle keep-alive connections). */
  close(): Promise<void>;
}

/** Listens on `host:port`, over HTTPS when a certificate and key are given. */
export async function listen(
  handler: (req: IncomingMessage, res: ServerResponse) => void,
  o: { host: string; port: number; tlsCertFile?: string; tlsKeyFile?: string },
): Promise<ListeningServer> {
  const server =
    o.tlsCertFile && o.tlsKeyFile
      ? https.createServer({ cert: readFileSync(o.tlsCertFile), key: readFileSync(o.tlsKeyFile) }, handler)
      : http.createServer(handler);
  server.keepAliveTimeout = 5_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(o.port, o.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
      }),
  };
}
