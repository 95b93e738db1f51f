import { ApiException } from '@kubernetes/client-node';
import { Counter, Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { parseAddress, serveProbes } from './probes';

describe('serveProbes', () => {
  it('serves /healthz, /readyz with named checks, and /metrics', async () => {
    const registry = new Registry();
    new Counter({ name: 'demo_total', help: 'demo', registers: [registry] }).inc(3);
    let synced = false;
    const p = await serveProbes({
      address: '127.0.0.1:0',
      registry,
      ready: { informers: () => synced || 'caches not synced yet', issuer: async () => true },
    });
    try {
      const get = async (path: string) => {
        const r = await fetch(`http://127.0.0.1:${p.port}${path}`);
        return { code: r.status, body: await r.text() };
      };
      expect(await get('/healthz')).toEqual({ code: 200, body: 'ok\n' });
      expect(await get('/readyz')).toEqual({ code: 503, body: '[-]informers failed: caches not synced yet\n[+]issuer ok\nnot ok\n' });
      synced = true;
      expect((await get('/readyz')).code).toBe(200);
      expect((await get('/metrics')).body).toContain('demo_total 3');
      expect((await get('/nope')).code).toBe(404);
    } finally {
      await p.close();
    }
  });

  it("says the API server's message when a check fails with an API error (lib/kube-errors.ts messageOf)", async () => {
    const forbidden = JSON.stringify({ kind: 'Status', code: 403, message: 'leases.coordination.k8s.io is forbidden' });
    const p = await serveProbes({
      address: '127.0.0.1:0',
      registry: new Registry(),
      ready: {
        lease: async () => {
          throw new ApiException(403, 'HTTP-Code: 403 Message: Unknown API Status Code!', forbidden, {});
        },
      },
    });
    try {
      const r = await fetch(`http://127.0.0.1:${p.port}/readyz`);
      expect({ code: r.status, body: await r.text() }).toEqual({
        code: 503,
        body: '[-]lease failed: leases.coordination.k8s.io is forbidden\nnot ok\n',
      });
    } finally {
      await p.close();
    }
  });

  it.each([
    ['0.0.0.0:8080', { host: '0.0.0.0', port: 8080 }],
    [':9443', { host: '0.0.0.0', port: 9443 }],
    ['[::1]:0', { host: '::1', port: 0 }],
  ])('parses %s', (a, want) => expect(parseAddress(a)).toEqual(want));

  it('names a bad address', () => expect(() => parseAddress('localhost')).toThrow('"localhost" is not host:port'));
});
