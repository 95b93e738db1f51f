import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { KubeConfig } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { createCa } from '../harness/pki';
import { listWire } from './informer';

describe('listWire', () => {
  it("lists as the kubeconfig's user over kept connections, and names the path and status of a refusal", async () => {
    const ca = await createCa('informer test CA');
    const pair = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
    const server = createServer({ cert: pair.cert, key: pair.key }, (req, res) => {
      const ok = req.headers.authorization === 'Bearer t' && req.url === '/api/v1/configmaps?labelSelector=a%3Db';
      res.writeHead(ok ? 200 : 403, { 'content-type': 'application/json' });
      res.end(JSON.stringify(ok ? { metadata: { resourceVersion: '7' }, items: [{ metadata: { name: 'x' } }] } : { message: 'no' }));
    });
    let connections = 0;
    server.on('secureConnection', () => connections++);
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    try {
      const kc = new KubeConfig();
      kc.loadFromOptions({
        clusters: [
          {
            name: 'c',
            server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`,
            caData: Buffer.from(ca.cert).toString('base64'),
          },
        ],
        users: [{ name: 'u', token: 't' }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      for (let i = 0; i < 10; i++) {
        const l = await listWire(kc, '/api/v1/configmaps', { labelSelector: 'a=b' });
        expect([l.metadata?.resourceVersion, l.items.map((o) => o.metadata?.name)]).toEqual(['7', ['x']]);
      }
      // Each new connection is a TLS handshake for the API server. Two, not one: the agent hands a freed socket back a
      // macrotask late (controller/clients.ts), so the next list may start before its predecessor's socket is free.
      expect(connections, 'ten lists, kept connections').toBeLessThanOrEqual(2);
      await expect(listWire(kc, '/api/v1/secrets')).rejects.toMatchObject({ message: 'list /api/v1/secrets: 403 no', code: 403 });
    } finally {
      server.closeAllConnections();
      await new Promise((r) => server.close(r));
    }
  });
});
