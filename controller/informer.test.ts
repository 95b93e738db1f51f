import { CoreV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { startLoopbackApi } from '../harness/cluster/loopback-api';
import { sleep } from '../lib/abort';
import { setUserAgent } from '../lib/user-agent';
import { VERSION } from '../lib/version';
import { keepAliveClient } from './clients';
import { listWire, watchInformer } from './informer';

/** Waits up to 5 s for `ok` to hold. */
async function eventually(ok: () => boolean): Promise<void> {
  for (let i = 0; i < 100 && !ok(); i++) await sleep(50);
}

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
      // Each new connection is a TLS handshake for the API server. Two at most: the next list may start before its
      // predecessor's socket is back in the pool.
      expect(api.connections, 'ten lists, kept connections').toBeLessThanOrEqual(2);
      await expect(listWire(kc, '/api/v1/secrets')).rejects.toMatchObject({ message: 'list /api/v1/secrets: 403 no', code: 403 });
    } finally {
      await api.close();
    }
  });
});

describe('the User-Agent', () => {
  it("names this process on every request to the API server: an API client's, an informer's list and its watch", async () => {
    setUserAgent('klutch-test');
    const seen: string[] = [];
    const api = await startLoopbackApi('user agent test CA', (req, res) => {
      seen.push(`${req.url?.includes('watch=true') ? 'watch' : 'get'} ${req.headers['user-agent']}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      // A watch gets one event and stays open until the informer stops.
      if (req.url?.includes('watch=true'))
        return void res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 'y', resourceVersion: '8' } } })}\n`);
      res.end(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMapList', metadata: { resourceVersion: '7' }, items: [] }));
    });
    const kc = api.kubeConfig();
    const informer = watchInformer({ kc, path: '/api/v1/configmaps' });
    try {
      await keepAliveClient(kc, CoreV1Api).listConfigMapForAllNamespaces();
      await informer.start();
      await informer.synced;
      await eventually(() => seen.some((s) => s.startsWith('watch')));
      const agent = `klutch-test/${VERSION} (${process.platform}/${process.arch}) node/${process.version}`;
      expect(new Set(seen)).toEqual(new Set([`get ${agent}`, `watch ${agent}`]));
    } finally {
      await informer.stop();
      await api.close();
    }
  });
});

describe('watchInformer', () => {
  it('asks the API server to end its watch and send bookmarks, and resumes from the last bookmark without listing again', async () => {
    const requests: string[] = [];
    let watches = 0;
    const api = await startLoopbackApi('watch timeout test CA', (req, res) => {
      const url = new URL(req.url ?? '/', 'https://x');
      res.writeHead(200, { 'content-type': 'application/json' });
      if (url.searchParams.get('watch') !== 'true') {
        requests.push('list');
        return void res.end(JSON.stringify({ metadata: { resourceVersion: '7' }, items: [] }));
      }
      const timeout = Number(url.searchParams.get('timeoutSeconds'));
      requests.push(
        `watch from ${url.searchParams.get('resourceVersion')}, bookmarks ${url.searchParams.get('allowWatchBookmarks')}, ends in 5-10 min ${timeout >= 300 && timeout < 600}`,
      );
      // The first watch: a bookmark, then the server's end of it (as at timeoutSeconds); the next stays open.
      if (watches++ > 0) return;
      res.end(`${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'ConfigMap', metadata: { resourceVersion: '9' } } })}\n`);
    });
    const informer = watchInformer({ kc: api.kubeConfig(), path: '/api/v1/configmaps' });
    try {
      await informer.start();
      await informer.synced;
      await eventually(() => watches >= 2);
      expect(requests).toEqual([
        'list',
        'watch from 7, bookmarks true, ends in 5-10 min true',
        'watch from 9, bookmarks true, ends in 5-10 min true',
      ]);
    } finally {
      await informer.stop();
      await api.close();
    }
  });
});

describe("an informer's watch", () => {
  it('shares one HTTP/2 connection with the KubeConfig’s other watches where the server speaks HTTP/2, as client-go does', async () => {
    // A konnector that may read its shared Secrets only by name watches each on its own (issue 40): a connection per
    // watch was a thousand connections to the control plane for a thousand bindings.
    const watchConnections = new Set<unknown>();
    let watches = 0;
    const api = await startLoopbackApi(
      'h2 watch test CA',
      (req, res) => {
        res.writeHead(200, { 'content-type': 'application/json' });
        if (!req.url?.includes('watch=true')) return void res.end(JSON.stringify({ metadata: { resourceVersion: '7' }, items: [] }));
        watches++;
        const h2 = (req as unknown as { stream?: { session?: unknown } }).stream?.session;
        watchConnections.add(h2 ?? req.socket);
        res.write(''); // held open, as a quiet watch is
      },
      {},
      { http2: true },
    );
    const kc = api.kubeConfig();
    const informers = Array.from({ length: 30 }, (_, i) =>
      watchInformer({ kc, path: '/api/v1/namespaces/p/secrets', fieldSelector: `metadata.name=s-${i}-creds` }),
    );
    try {
      await Promise.all(informers.map((i) => i.start()));
      await eventually(() => watches >= 30);
      expect(watches).toBe(30);
      expect(watchConnections.size, 'connections carrying the 30 watches').toBe(1);
    } finally {
      await Promise.all(informers.map((i) => i.stop()));
      await api.close();
    }
  });
});
