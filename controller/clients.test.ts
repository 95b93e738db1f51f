import { CoreV1Api, type KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackApi, startLoopbackApi } from '../harness/cluster/loopback-api';
import { createCa } from '../harness/cluster/pki';
import { sleep } from '../lib/abort';
import { Registry } from 'prom-client';
import { keepAliveClient, keepAliveConfiguration } from './clients';
import { controllerMetrics } from './metrics';

/**
 * An API server stand-in on loopback TLS whose namespace list is a chunked response (as kube-apiserver sends any body
 * over 2 KiB), answering after a little work so requests queue for the pooled sockets.
 */
let api: LoopbackApi;
let kc: KubeConfig;
beforeAll(async () => {
  const items = Array.from({ length: 40 }, (_, i) => ({ metadata: { name: `ns-${i}`, labels: { team: 'x'.repeat(40) } } }));
  api = await startLoopbackApi('clients test CA', (_req, res) => {
    setTimeout(() => {
      res.writeHead(200, { 'content-type': 'application/json' });
      const body = JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items });
      res.write(body.slice(0, 1000)); // two writes: chunked, no Content-Length
      res.end(body.slice(1000));
    }, 1);
  });
  kc = api.kubeConfig();
});
afterAll(() => api.close());

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
    const mtls = await startLoopbackApi(
      'clients test CA',
      (req, res) => {
        const cn = (req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject.CN;
        res.writeHead(200, { 'content-type': 'application/json', connection: 'close' }); // each request a new connection
        res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: String(cn) } }));
      },
      { ca: clientCa.cert, requestCert: true, rejectUnauthorized: true },
    );
    const b64 = (s: string) => Buffer.from(s).toString('base64');
    const configFor = (caPem: string) =>
      keepAliveClient(mtls.kubeConfig({ certData: b64(client.cert), keyData: b64(client.key) }, caPem), CoreV1Api);
    try {
      const core = configFor(mtls.ca.cert);
      const names = await Promise.all(Array.from({ length: 3 }, () => core.readNamespace({ name: 'x' })));
      expect(names.map((n) => n.metadata?.name)).toEqual(['alice', 'alice', 'alice']);
      await expect(configFor(clientCa.cert).readNamespace({ name: 'x' })).rejects.toThrow(/self.signed|unable to verify|certificate/i);
    } finally {
      await mtls.close();
    }
  });

  it('closes an idle connection before the server drops it, so a request is never written to a closing one', async () => {
    // As kube-apiserver does at 90 s idle, this server drops a connection that sat idle 300 ms: and the request that
    // arrives on it just then gets no answer ("socket hang up", as CI saw). The client closes its idle ones at 150 ms.
    const idleSince = new WeakMap<object, number>();
    const dropping = await startLoopbackApi('clients test CA', (req, res) => {
      const since = idleSince.get(req.socket);
      if (since !== undefined && Date.now() - since >= 300) return req.socket.destroy();
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'x' } }));
      res.on('finish', () => idleSince.set(req.socket, Date.now()));
    });
    try {
      const dkc = dropping.kubeConfig();
      const core = keepAliveClient(dkc, CoreV1Api, keepAliveConfiguration(dkc, { idleMs: 150 }));
      await core.readNamespace({ name: 'x' });
      await sleep(20); // the response is read whole and the connection back in the pool
      await core.readNamespace({ name: 'x' }); // soon after: the kept connection serves it
      expect(dropping.connections).toBe(1);
      await sleep(400);
      await expect(core.readNamespace({ name: 'x' })).resolves.toMatchObject({ metadata: { name: 'x' } });
      expect(dropping.connections).toBe(2);
    } finally {
      await dropping.close();
    }
  });
});

describe('rest_client_requests_total', () => {
  it("counts each request by status code, method and host as client-go does, '<error>' where no response came", async () => {
    const counted = await startLoopbackApi('rest client metric test CA', (req, res) => {
      if (req.url?.startsWith('/api/v1/namespaces/gone')) {
        res.writeHead(404, { 'content-type': 'application/json' });
        return void res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', reason: 'NotFound', code: 404 }));
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'NamespaceList', metadata: {}, items: [] }));
    });
    const ckc = counted.kubeConfig();
    const host = new URL(ckc.getCurrentCluster()!.server).host;
    const registry = new Registry();
    controllerMetrics(registry);
    const core = keepAliveClient(ckc, CoreV1Api);
    await core.listNamespace();
    await core.listNamespace();
    await expect(core.readNamespace({ name: 'gone' })).rejects.toThrow();
    await counted.close();
    await expect(core.listNamespace()).rejects.toThrow();
    const values = (await registry.getSingleMetric('rest_client_requests_total')!.get()).values
      .filter((v) => v.labels.host === host)
      .map((v) => `${v.labels.method} ${v.labels.code} ${v.value}`);
    expect(values.sort()).toEqual(['GET 200 2', 'GET 404 1', 'GET <error> 1']);
  });
});
