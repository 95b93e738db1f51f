import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { watchInformer } from '../controller/informer';
import { startLoopbackApi } from '../harness/cluster/loopback-api';
import { sleep } from '../lib/abort';
import { BindBackend } from './deploy/bind-backend';
import { LEADER_WATCHED, metadataOnly, SERVING_WATCHED, type Watched } from './informers';

type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };

/** The ClusterRole the install bundle gives the backend. */
function clusterRoleRules(): Rule[] {
  const chart = new Chart(new App(), 'test');
  new BindBackend(chart, 'backend', {
    issuerUrl: 'https://issuer.example.com',
    clientId: 'klutch-bind',
    publicUrl: 'https://bind.example.com',
    externalAddress: 'https://api.example.com:6443',
  });
  return (Testing.synth(chart) as { kind: string; rules?: Rule[] }[]).find((o) => o.kind === 'ClusterRole')!.rules!;
}

/** `/api/v1/secrets` → ['', 'secrets']; `/apis/g/v1/widgets` → ['g', 'widgets']. */
function groupResource(w: Watched): [string, string] {
  const m = /^\/(?:api\/v1|apis\/([^/]+)\/[^/]+)\/([^/]+)$/.exec(w.path);
  if (!m) throw new Error(`${w.path} is not a cluster-wide collection`);
  return [m[1] ?? '', m[2]!];
}

describe("the backend's informers", () => {
  const rules = clusterRoleRules();
  const table = Object.entries<Watched>({ ...SERVING_WATCHED }).concat(
    Object.entries<Watched>(LEADER_WATCHED).map(([k, w]) => [`leader ${k}`, w]),
  );

  it.each(table)('%s: watches a collection its ClusterRole may list and watch cluster-wide', (_name, w) => {
    const [group, resource] = groupResource(w);
    const held = new Set(rules.filter((r) => r.apiGroups.includes(group) && r.resources.includes(resource)).flatMap((r) => r.verbs));
    expect([...held].filter((v) => v === 'list' || v === 'watch').sort(), `${resource}.${group}`).toEqual(['list', 'watch']);
  });

  it('keeps Secrets narrowed to the kubeconfigs it made: no Secret data of anyone else in its memory', () => {
    const secrets = table.filter(([, w]) => groupResource(w)[1] === 'secrets');
    expect(secrets.map(([name, w]) => [name, w.labelSelector])).toEqual([
      ['leader kubeconfigs', 'klutch-kit.anynines.com/kubeconfig=true'],
    ]);
  });
});

describe('metadataOnly', () => {
  it('asks the API server for metadata only on the list and on the watch: no Secret data crosses the wire', async () => {
    const accepts: string[] = [];
    const api = await startLoopbackApi('metadata-only test CA', (req, res) => {
      const watch = req.url?.includes('watch=true');
      accepts.push(`${watch ? 'watch' : 'list'} ${req.headers.accept}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      if (watch) return void res.write(`${JSON.stringify({ type: 'ADDED', object: { metadata: { name: 's', resourceVersion: '8' } } })}\n`);
      res.end(
        JSON.stringify({ apiVersion: 'meta.k8s.io/v1', kind: 'PartialObjectMetadataList', metadata: { resourceVersion: '7' }, items: [] }),
      );
    });
    const informer = watchInformer({ kc: metadataOnly(api.kubeConfig()), path: '/api/v1/secrets' });
    try {
      await informer.start();
      await informer.synced;
      for (let i = 0; i < 100 && !accepts.some((a) => a.startsWith('watch')); i++) await sleep(50);
      expect(new Set(accepts)).toEqual(
        new Set([
          'list application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1',
          'watch application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1',
        ]),
      );
    } finally {
      await informer.stop();
      await api.close();
    }
  });
});
