import { createServer, type Server } from 'node:https';
import type { AddressInfo } from 'node:net';
import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Ca, createCa } from '../harness/pki';
import { keepAliveClient, keepAliveConfiguration } from './clients';

/**
 * An API server stand-in on loopback TLS whose namespace list is a chunked response (as kube-apiserver sends any body
 * over 2 KiB), answering after a little work so requests queue for the pooled sockets.
 */
let server: Server;
let kc: KubeConfig;
let ca: Ca;
beforeAll(async () => {
  ca = await createCa('clients test CA');
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

  it('checks the server against the kubeconfig CA and presents its client certificate on every connection', async () => {
    // One TLS context serves all connections (clients.ts): it must carry the CA and the client key pair both.
    const clientCa = await createCa('clients test client CA');
    const client = await clientCa.issue({ commonName: 'alice', usages: ['client'] });
    const pair = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
    const mtls = createServer(
      { cert: pair.cert, key: pair.key, ca: clientCa.cert, requestCert: true, rejectUnauthorized: true },
      (req, res) => {
        const cn = (req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN;
        res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }); // each request a new connection
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: String(cn) } }));
      },
    );
    await new Promise<void>((r) => mtls.listen(0, '127.0.0.1', r));
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const configFor = (caPem: string) => {
      const c = new KubeConfig();
      c.loadFromOptions({
        clusters: [{ name: 'c', server: `https://127.0.0.1:${(mtls.address() as AddressInfo).port}`, caData: b64(caPem) }],
        users: [{ name: 'u', certData: b64(client.cert), keyData: b64(client.key) }],
        contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
        currentContext: 'x',
      });
      return keepAliveClient(c, CoreV1Api);
    };
    try {
      const core = configFor(ca.cert);
      const names = await Promise.all(Array.from({ length: 3 }, () => core.readNamespace({ name: 'x' })));
      expect(names.map((n) => n.metadata?.name)).toEqual(['alice', 'alice', 'alice']);
      await expect(configFor(clientCa.cert).readNamespace({ name: 'x' })).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    } finally {
      mtls.closeAllConnections();
      await new Promise((r) => mtls.close(r));
    }
  });
});
