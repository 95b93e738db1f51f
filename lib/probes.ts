/**
 * The probe and metrics endpoints every process we ship serves on one HTTP listener (the bind backend, the konnector
 * and the composition function): `/healthz` (the process is alive and its loops run), `/readyz` (named checks:
 * informers synced, issuer discovered, ...; 503 with the failing names until all pass) and Prometheus `/metrics`.
 */
import { createRequire } from 'node:module';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Registry } from 'prom-client';
import { parseAddress } from './address';
import { messageOf } from './kube-errors';

// node:http by require, not import: an ES module import of it reads every export, and Node 24's lazy WebSocket,
// CloseEvent and MessageEvent then load undici (about 2 MiB of heap; docs/decisions/function-performance.md).
const { createServer } = createRequire(import.meta.url)('node:http') as typeof import('node:http');

export { parseAddress };

/**
 * How long the kubelet waits for a probe's answer, in every Deployment we ship (Kubernetes' default is 1 s). A busy
 * node answers late, not never: on the test nodes' two cores the backend's /healthz and /readyz and the object store's
 * /health missed 1 s often enough that the store, one replica, left its Service for seconds at a time.
 */
export const PROBE_TIMEOUT_SECONDS = 5;

/** A check passes when it returns true (or resolves to true); a string or false fails, a string says why. */
export type Check = () => boolean | string | Promise<boolean | string>;

export interface ProbesOptions {
  /** `host:port`; port 0 picks a free one. */
  readonly address: string;
  readonly registry: Registry;
  /** Checks for `/healthz`. @default none (alive while it answers) */
  readonly live?: Readonly<Record<string, Check>>;
  /** Checks for `/readyz`. */
  readonly ready?: Readonly<Record<string, Check>>;
}

export interface Probes {
  /** The bound port. */
  readonly port: number;
  close(): Promise<void>;
}

async function evaluate(checks: Readonly<Record<string, Check>>): Promise<{ ok: boolean; lines: string[] }> {
  const lines: string[] = [];
  let ok = true;
  for (const [name, check] of Object.entries(checks)) {
    let r: boolean | string;
    try {
      r = await check();
    } catch (e) {
      r = messageOf(e);
    }
    if (r === true) lines.push(`[+]${name} ok`);
    else {
      ok = false;
      lines.push(`[-]${name} failed${typeof r === 'string' && r ? `: ${r}` : ''}`);
    }
  }
  return { ok, lines };
}

export async function serveProbes(o: ProbesOptions): Promise<Probes> {
  const { host, port } = parseAddress(o.address);
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0];
    const respond = (code: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(code, { 'Content-Type': type, 'Cache-Control': 'no-store' });
      res.end(body);
    };
    if (req.method !== 'GET' && req.method !== 'HEAD') return respond(405, 'method not allowed\n');
    const probe = path === '/healthz' || path === '/livez' ? (o.live ?? {}) : path === '/readyz' ? (o.ready ?? {}) : undefined;
    if (probe) {
      void evaluate(probe).then(({ ok, lines }) => respond(ok ? 200 : 503, `${[...lines, ok ? 'ok' : 'not ok'].join('\n')}\n`));
      return;
    }
    if (path === '/metrics') {
      void o.registry.metrics().then(
        (text) => respond(200, text, o.registry.contentType),
        (e: unknown) => respond(500, `cannot collect metrics: ${messageOf(e)}\n`),
      );
      return;
    }
    respond(404, 'not found: use /healthz, /readyz or /metrics\n');
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
