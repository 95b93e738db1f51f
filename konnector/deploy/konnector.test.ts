import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { KonnectorApiAccess } from './access';
import { Konnector } from './konnector';

type O = {
  kind: string;
  metadata: { name: string; namespace?: string };
  rules?: { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] }[];
  spec?: any;
};
const synth = (build: (c: Chart) => void): O[] => {
  const c = new Chart(new App(), 'test');
  build(c);
  return Testing.synth(c) as O[];
};
const of = (objs: O[], kind: string, name?: string) => objs.filter((o) => o.kind === kind && (!name || o.metadata.name === name));

describe('Konnector', () => {
  const objs = synth((c) => new Konnector(c, 'k'));

  it('installs what kubectl bind installs: namespace, account, RBAC, the binding CRD and a 2-replica Deployment', () => {
    expect(objs.map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      'Namespace /klutch-bind',
      'CustomResourceDefinition /apiservicebindings.klutch.anynines.com',
      'ServiceAccount klutch-bind/konnector',
      'ClusterRole /klutch-bind-konnector',
      'ClusterRoleBinding /klutch-bind-konnector',
      'Role klutch-bind/konnector',
      'RoleBinding klutch-bind/konnector',
      'Deployment klutch-bind/konnector',
    ]);
    const d = of(objs, 'Deployment')[0]!.spec;
    expect(d.replicas).toBe(2);
    const c = d.template.spec.containers[0];
    expect(c.args).toEqual(['--lease-namespace=klutch-bind', '--probe-address=:8080']);
    expect(c.env.map((e: { name: string }) => e.name)).toEqual(['POD_NAME', 'POD_NAMESPACE', 'NODE_OPTIONS']);
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 8080 });
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 8080 });
    expect(c.resources.requests).toEqual({ cpu: '50m', memory: '128Mi' });
  });

  it('grants no wildcard and writes no CRD but its own without an API grant (least privilege)', () => {
    const rules = [...of(objs, 'ClusterRole'), ...of(objs, 'Role')].flatMap((r) => r.rules!);
    for (const r of rules) {
      expect(r.verbs, JSON.stringify(r)).not.toContain('*');
      expect(r.resources, JSON.stringify(r)).not.toContain('*');
    }
    const crdWrites = rules.filter(
      (r) => r.resources.includes('customresourcedefinitions') && r.verbs.some((v) => ['update', 'patch', 'delete'].includes(v)),
    );
    expect(crdWrites.map((r) => r.resourceNames)).toEqual([['apiservicebindings.klutch.anynines.com']]);
    expect(
      rules.some((r) => r.resources.includes('secrets') && r.apiGroups.includes('')),
      'Secrets only through the Role',
    ).toBe(true);
    expect(of(objs, 'ClusterRole')[0]!.rules!.some((r) => r.resources.includes('secrets'))).toBe(false);
  });

  it('takes image, replicas and namespace, and refuses contradictory ones naming the field', () => {
    const o = synth((c) => new Konnector(c, 'k', { image: 'r.example/k:1', replicas: 3, namespace: 'team', createNamespace: false }));
    expect(of(o, 'Namespace')).toEqual([]);
    const d = of(o, 'Deployment')[0]!;
    expect(d.metadata.namespace).toBe('team');
    expect(d.spec.replicas).toBe(3);
    expect(d.spec.template.spec.containers[0].image).toBe('r.example/k:1');
    expect(of(o, 'ClusterRole')[0]!.metadata.name).toBe('team-konnector');
    expect(() => new Konnector(new Chart(new App(), 'x'), 'k', { replicas: 0 })).toThrow(
      'Konnector: replicas must be a positive integer, not 0',
    );
    expect(() => new Konnector(new Chart(new App(), 'x'), 'k', { namespace: 'Bad_NS' })).toThrow('namespace "Bad_NS" is not a DNS label');
  });
});

describe('synth', () => {
  it('writes the konnector and one access file per API of the catalog', async () => {
    const { loadCatalog } = await import('../../test/support/catalog');
    const { render } = await import('../../synth/synth');
    const apis = await loadCatalog();
    const files = [...render({ apis, outdir: 'unused' }).keys()].filter((f) => f.startsWith('app-cluster/'));
    expect(files).toEqual(['app-cluster/konnector/konnector.yaml', ...apis.map((a) => `app-cluster/konnector/access/${a.plural}.yaml`)]);
  }, 60_000);
});

describe('KonnectorApiAccess', () => {
  it('grants one bound API, its status, its CRD by name and the claimed resources, to the konnector', () => {
    const objs = synth((c) => new KonnectorApiAccess(c, 'a', { group: 'anynines.com', resource: 'servicebindings', claimed: ['secrets'] }));
    const role = of(objs, 'ClusterRole')[0]!;
    expect(role.metadata.name).toBe('klutch-bind-konnector-servicebindings.anynines.com');
    expect(
      role.rules!.map(
        (r) => `${r.apiGroups[0]}/${r.resources[0]}${r.resourceNames?.length ? `(${r.resourceNames})` : ''}: ${r.verbs.join(',')}`,
      ),
    ).toEqual([
      'anynines.com/servicebindings: get,list,watch,patch,update,delete',
      'anynines.com/servicebindings/status: get,patch,update',
      'apiextensions.k8s.io/customresourcedefinitions(servicebindings.anynines.com): update,patch,delete',
      '/secrets: get,list,watch,create,update,patch,delete',
    ]);
    const binding = of(objs, 'ClusterRoleBinding')[0] as O & { subjects: unknown[] };
    expect(binding.subjects).toEqual([expect.objectContaining({ kind: 'ServiceAccount', name: 'konnector', namespace: 'klutch-bind' })]);
  });
});
