import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createCa } from '../test/support/pki';
import { keepAliveClient, keepAliveConfiguration } from './clients';

/**
 * An API server stand-in on loopback TLS whose namespace list is a chunked response (as kube-apiserver sends any body
 * over 2 KiB), answering after a little work so requests queue for the pooled sockets.
 */
let server: Server;
let kc: KubeConfig;
beforeAll(async () => {
  const ca = await createCa('clients test CA');
  const pair = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
  const items = Array.from({ length: 40 }, (_, i) => ({ metadata: { name: `ns-${i}`, labels: { team: 'x'.repeat(40) } } }));
  server = createServer({ cert: pair.cert, key: pair.key }, (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items });
      res.write(body.slice(0, 1000)); // two writes: chunked, no Content-Length
      res.end(body.slice(1000));
    }, 1);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [
      { name: 'c', server: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, caData: Buffer.from(ca.cert).toString('base64') },
    ],
    users: [{ name: 'u', token: 't' }],
    contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
    currentContext: 'x',
  });
});
afterAll(async () => {
  server.closeAllConnections();
  await new Promise((r) => server.close(r));
});

describe('keepAliveConfiguration', () => {
  it('reads chunked responses whole while requests queue for its few sockets (no false "Premature close")', async () => {
    const core = keepAliveClient(kc, CoreV1Api, keepAliveConfiguration(kc, { maxSockets: 2 }));
    const lists = await Promise.all(Array.from({ length: 60 }, () => core.listNamespace()));
    expect(lists.map((l) => l.items.length)).toEqual(Array.from({ length: 60 }, () => 40));
  });
});
