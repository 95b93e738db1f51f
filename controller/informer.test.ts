import { describe, expect, it } from 'vitest';
import { startLoopbackApi } from '../harness/loopback-api';
import { listWire } from './informer';

describe('listWire', () => {
  it("lists as the kubeconfig's user over kept connections, and names the path and status of a refusal", async () => {
    const api = await startLoopbackApi('informer test CA', (req, res) => {
      const ok = req.headers.authorization === 'Bearer t' && req.url === '/api/v1/configmaps?labelSelector=a%3Db';
      res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? { metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'x' } }] } : { message: 'no' }));
    });
    try {
      const kc = api.kubeConfig();
      for (let i = 0; i < 10; i++) {
        const l = await listWire(kc, '/api/v1/configmaps', { labelSelector: 'a=b' });
        expect([l.metadata?.resourceVersion, l.items.map((o) => o.metadata?.name)]).toEqual(['7', ['x']]);
      }
      // Each new connection is a TLS handshake for the API server. Two, not one: the agent hands a freed socket back a
      // macrotask late (controller/clients.ts), so the next list may start before its predecessor's socket is free.
      expect(api.connections, 'ten lists, kept connections').toBeLessThanOrEqual(2);
      await expect(listWire(kc, '/api/v1/secrets')).rejects.toMatchObject({ message: 'list /api/v1/secrets: 403 no', code: 403 });
    } finally {
      await api.close();
    }
  });
});
