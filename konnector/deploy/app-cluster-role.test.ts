import { App, Chart } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { APP_CLUSTER_ROLE, boundApiChecks, copiesOnlyCheck, CONTROL_PLANE_KONNECTOR_BASE } from '../../lib/app-cluster-access';
import { AppClusterRole } from './app-cluster-role';

type Obj = { kind: string; metadata: { name: string; namespace?: string }; rules?: Rule[]; subjects?: unknown[] };
type Rule = { apiGroups: string[]; resources: string[]; resourceNames?: string[]; verbs: string[] };

const APIS = [
  { group: 'anynines.com', resource: 'postgresqlinstances' },
  { group: 'anynines.com', resource: 'servicebindings', claimed: ['secrets'] },
];

function synth(props: ConstructorParameters<typeof AppClusterRole>[2]): Obj[] {
  const chart = new Chart(new App(), 'c');
  new AppClusterRole(chart, 'role', props);
  return chart.toJson() as Obj[];
}

/** Whether `rules` allow one check (the way RBAC matches: group, resource[/sub], verb, and name when the rule names some). */
function allows(rules: Rule[], c: { group: string; resource: string; subresource?: string; verb: string; name?: string }): boolean {
  const res = c.subresource ? `${c.resource}/${c.subresource}` : c.resource;
  return rules.some(
    (r) =>
      r.apiGroups.includes(c.group) &&
      r.resources.includes(res) &&
      r.verbs.includes(c.verb) &&
      (!r.resourceNames?.length || (c.name !== undefined && r.resourceNames.includes(c.name))),
  );
}

describe('AppClusterRole', () => {
  const objs = synth({ apis: APIS });
  const role = objs.find((o) => o.kind === 'ClusterRole')!;

  it('grants every check the AppClusterBinding controller asks, and no wildcard', () => {
    for (const c of [...CONTROL_PLANE_KONNECTOR_BASE, ...APIS.flatMap((a) => boundApiChecks(a, APP_CLUSTER_ROLE))])
      expect(allows(role.rules!, c), JSON.stringify(c)).toBe(true);
    for (const r of role.rules!) {
      expect(r.verbs).not.toContain('*');
      expect(r.resources).not.toContain('*');
      expect(r.apiGroups).not.toContain('*');
    }
  });

  it('is not cluster-admin: no Secret read of the konnector for an API without claims, CRDs changed only by name, nothing else', () => {
    const none = synth({ apis: [APIS[0]!] }).find((o) => o.kind === 'ClusterRole')!;
    expect(allows(none.rules!, { group: '', resource: 'secrets', verb: 'get' })).toBe(false);
    expect(
      allows(role.rules!, {
        group: 'apiextensions.k8s.io',
        resource: 'customresourcedefinitions',
        verb: 'delete',
        name: 'other.example.com',
      }),
    ).toBe(false);
    expect(
      allows(role.rules!, {
        group: 'apiextensions.k8s.io',
        resource: 'customresourcedefinitions',
        verb: 'delete',
        name: 'servicebindings.anynines.com',
      }),
    ).toBe(true);
    for (const c of [
      { group: '', resource: 'pods', verb: 'create' },
      { group: 'rbac.authorization.k8s.io', resource: 'clusterroles', verb: 'create' },
      { group: 'coordination.k8s.io', resource: 'leases', verb: 'create' },
      { group: 'klutch.anynines.com', resource: 'apiservicebindings', verb: 'list' },
    ])
      expect(allows(role.rules!, c), JSON.stringify(c)).toBe(false);
  });

  it('binds it to ServiceAccount konnector, and keeps its writes to claimed objects to its own copies', () => {
    expect(objs.find((o) => o.kind === 'ClusterRoleBinding')!.subjects).toEqual([
      { kind: 'ServiceAccount', name: 'konnector', namespace: 'klutch-control-plane', apiGroup: '' },
    ]);
    expect(objs.some((o) => o.kind === 'ValidatingAdmissionPolicy')).toBe(true);
    // Its holders are under that policy, whoever they are: the role carries the permission the policy matches.
    expect(allows(role.rules!, copiesOnlyCheck(APP_CLUSTER_ROLE))).toBe(true);
    expect(synth({ apis: [APIS[0]!] }).some((o) => o.kind === 'ValidatingAdmissionPolicy')).toBe(false);
  });

  it('refuses a namespace or resource that is no name, naming the prop', () => {
    expect(() => synth({ apis: [], namespace: 'Bad_NS' })).toThrow('AppClusterRole: namespace "Bad_NS" is not a DNS label');
    expect(() => synth({ apis: [{ group: 'x.io', resource: 'Things' }] })).toThrow('apis: resource "Things"');
  });
});
