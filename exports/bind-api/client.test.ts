import type { ServerResponse } from 'node:http';
import { CustomObjectsApi } from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LoopbackApi, startLoopbackApi } from '../../harness/cluster/loopback-api';
import { bindObjects, bindPath, BindResources, crdName } from './client';

describe('BindResources', () => {
  it("names every bind kind as Klutch's CRDs do (group, version, plural, kind)", () => {
    const names = Object.fromEntries(Object.entries(BindResources).map(([k, r]) => [k, `${r.kind} ${crdName(r)}/${r.version}`]));
    expect(names).toEqual({
      exports: 'APIServiceExport apiserviceexports.klutch.anynines.com/v1alpha1',
      exportRequests: 'APIServiceExportRequest apiserviceexportrequests.klutch.anynines.com/v1alpha1',
      serviceNamespaces: 'APIServiceNamespace apiservicenamespaces.klutch.anynines.com/v1alpha1',
      bindings: 'APIServiceBinding apiservicebindings.klutch.anynines.com/v1alpha1',
      clusterBindings: 'ClusterBinding clusterbindings.klutch.anynines.com/v1alpha1',
      appClusterBindings: 'AppClusterBinding appclusterbindings.klutch.anynines.com/v1alpha1',
      templates: 'APIServiceExportTemplate apiserviceexporttemplates.example-backend.klutch.anynines.com/v1alpha1',
    });
  });

  it('makes the collection path of a resource, in a namespace or across all', () => {
    expect(bindPath(BindResources.bindings)).toBe('/apis/klutch.anynines.com/v1alpha1/apiservicebindings');
    expect(bindPath(BindResources.exports, 'cluster-x')).toBe('/apis/klutch.anynines.com/v1alpha1/namespaces/cluster-x/apiserviceexports');
    expect(bindPath({ group: '', version: 'v1', plural: 'secrets' }, 'a')).toBe('/api/v1/namespaces/a/secrets');
  });
});

/**
 * bindObjects through client-node's real CustomObjectsApi, against a loopback stand-in that answers as kube-apiserver
 * does for the few calls made here (a store of objects by namespace and name: 201 with a generated name for
 * `generateName`, 409 AlreadyExists for a taken name, lists per namespace and across all). Each request is recorded,
 * so the tests also see which URL a call went to (the URLs and answers are kube-apiserver's, as client-node builds and
 * reads them).
 */
describe('bindObjects', () => {
  type Obj = { apiVersion: string; kind: string; metadata: { name?: string; generateName?: string; namespace?: string } };
  const requests: string[] = [];
  const store = new Map<string, Obj>();
  let api: LoopbackApi;
  let custom: CustomObjectsApi;
  let generated = 0;
  const status = (res: ServerResponse, code: number, reason: string, message: string) => {
    res.writeHead(code, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kind: 'Status', apiVersion: 'v1', status: 'Failure', code, reason, message }));
  };

  beforeAll(async () => {
    api = await startLoopbackApi('bindObjects test CA', (req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        requests.push(`${req.method} ${req.url}`);
        const m = /^\/apis\/klutch\.anynines\.com\/v1alpha1(?:\/namespaces\/([^/]+))?\/apiservicebindings$/.exec(req.url ?? '');
        if (!m) return status(res, 404, 'NotFound', `the server could not find the requested resource (${req.url})`);
        const namespace = m[1];
        if (req.method === 'GET') {
          const items = [...store.values()].filter((o) => namespace === undefined || o.metadata.namespace === namespace);
          res.writeHead(200, { 'content-type': 'application/json' });
          return res.end(JSON.stringify({ apiVersion: 'klutch.anynines.com/v1alpha1', kind: 'APIServiceBindingList', items }));
        }
        const o = JSON.parse(body) as Obj;
        const name = o.metadata.name ?? `${o.metadata.generateName}${(++generated).toString(36).padStart(5, 'x')}`;
        const key = `${namespace}/${name}`;
        if (store.has(key)) return status(res, 409, 'AlreadyExists', `apiservicebindings.klutch.anynines.com "${name}" already exists`);
        const created = { ...o, metadata: { ...o.metadata, name, namespace } };
        store.set(key, created);
        res.writeHead(201, { 'content-type': 'application/json' });
        res.end(JSON.stringify(created));
      });
    });
    custom = api.kubeConfig().makeApiClient(CustomObjectsApi);
  });
  afterAll(() => api.close());

  const binding = (metadata: Obj['metadata']): Obj => ({ apiVersion: 'klutch.anynines.com/v1alpha1', kind: 'APIServiceBinding', metadata });

  it('lists one namespace, and every namespace without one (list -A)', async () => {
    const bindings = bindObjects<Obj>(custom, BindResources.bindings);
    await bindings.create(binding({ name: 'postgresqlinstances.anynines.com', namespace: 'team-a' }));
    await bindings.create(binding({ name: 'servicebindings.anynines.com', namespace: 'team-b' }));
    requests.length = 0;
    const names = (os: Obj[]) => os.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort();
    expect(names(await bindings.list('team-a'))).toEqual(['team-a/postgresqlinstances.anynines.com']);
    expect(names(await bindings.list())).toEqual(['team-a/postgresqlinstances.anynines.com', 'team-b/servicebindings.anynines.com']);
    expect(requests).toEqual([
      'GET /apis/klutch.anynines.com/v1alpha1/namespaces/team-a/apiservicebindings',
      'GET /apis/klutch.anynines.com/v1alpha1/apiservicebindings',
    ]);
  });

  it('creates by generateName without a name, and answers undefined for a name that is taken', async () => {
    const bindings = bindObjects<Obj>(custom, BindResources.bindings);
    const first = await bindings.create(binding({ name: 'mariadbinstances.anynines.com', namespace: 'team-c' }));
    expect(first?.metadata.name).toBe('mariadbinstances.anynines.com');
    expect(await bindings.create(binding({ name: 'mariadbinstances.anynines.com', namespace: 'team-c' }))).toBeUndefined();
    const generatedOne = await bindings.create(binding({ generateName: 'mariadbinstances.anynines.com-', namespace: 'team-c' }));
    expect(generatedOne?.metadata.name).toMatch(/^mariadbinstances\.anynines\.com-[a-z0-9]{5}$/);
    expect(generatedOne?.metadata.namespace).toBe('team-c');
  });

  it('names the kind and field when an object to create has no namespace', async () => {
    const bindings = bindObjects<Obj>(custom, BindResources.bindings);
    await expect(bindings.create(binding({ generateName: 'x-' }))).rejects.toThrow('a APIServiceBinding needs metadata.namespace');
  });
});
