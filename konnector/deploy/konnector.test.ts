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
      'NetworkPolicy klutch-bind/default-deny',
      'NetworkPolicy klutch-bind/konnector',
    ]);
    const d = of(objs, 'Deployment')[0]!.spec;
    expect(d.replicas).toBe(2);
    const c = d.template.spec.containers[0];
    expect(c.args).toEqual(['--lease-namespace=klutch-bind', '--probe-address=:8080']);
    expect(c.env.map((e: { name: string }) => e.name)).toEqual(['POD_NAME', 'POD_NAMESPACE', 'NODE_OPTIONS', 'MALLOC_ARENA_MAX']);
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
    const { loadCatalog } = await import('../../harness/crossplane/catalog');
    const { render } = await import('../../synth/synth');
    const apis = await loadCatalog();
    const files = [...render({ apis, outdir: 'unused' }).keys()].filter((f) => f.startsWith('app-cluster/'));
    expect(files).toEqual([
      'app-cluster/konnector/konnector.yaml',
      ...apis.map((a) => `app-cluster/konnector/access/${a.plural}.yaml`),
      'app-cluster/control-plane-konnector/clusterrole.yaml',
      'app-cluster/monitoring/networkpolicy-scrape-konnector.yaml',
      'app-cluster/monitoring/podmonitor-konnector.yaml',
      'app-cluster/monitoring/prometheusrule-klutch-konnector.yaml',
    ]);
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
      '/secrets: get,list,watch,create,update,delete',
      // Grants nothing: it puts the role's holders under the copies-only policy of the same name.
      'klutch-kit.anynines.com/copies-only-policies(klutch-bind-konnector-servicebindings.anynines.com): held-by',
    ]);
    const binding = of(objs, 'ClusterRoleBinding')[0] as O & { subjects: unknown[] };
    expect(binding.subjects).toEqual([expect.objectContaining({ kind: 'ServiceAccount', name: 'konnector', namespace: 'klutch-bind' })]);
  });

  it('ships with claimed resources an admission policy, bound with Deny, for the konnector outside its own namespaces', () => {
    const objs = synth(
      (c) =>
        new KonnectorApiAccess(c, 'a', {
          group: 'anynines.com',
          resource: 'servicebindings',
          claimed: ['secrets', 'configmaps'],
          namespace: 'kb',
          kubeconfigNamespaces: ['kc'],
        }),
    );
    const policy = of(objs, 'ValidatingAdmissionPolicy')[0]!;
    expect(policy.metadata.name).toBe('kb-konnector-servicebindings.anynines.com');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE', 'DELETE'], resources: ['configmaps', 'secrets'] },
    ]);
    // Whoever holds the role (its held-by permission), but not who holds every verb (cluster-admin).
    const check = (verb: string) =>
      `authorizer.group('klutch-kit.anynines.com').resource('copies-only-policies').name('${policy.metadata.name}').check('${verb}').allowed()`;
    expect(policy.spec.matchConditions.map((m: { expression: string }) => m.expression)).toEqual([
      "!(request.namespace in ['kb', 'kc'])",
      `${check('held-by')} && !${check('unrestricted')}`,
    ]);
    expect(policy.spec.validations[2].expression).toContain(
      "object.type in ['kubernetes.io/service-account-token', 'bootstrap.kubernetes.io/token']",
    );
    expect(of(objs, 'ValidatingAdmissionPolicyBinding')[0]!.spec).toEqual({
      policyName: policy.metadata.name,
      validationActions: ['Deny'],
    });
    // Without claimed resources there is nothing to guard.
    const none = synth((c) => new KonnectorApiAccess(c, 'a', { group: 'anynines.com', resource: 'backups' }));
    expect(none.map((o) => o.kind)).toEqual(['ClusterRole', 'ClusterRoleBinding']);
  });

  it("ships for an instance API a policy that refuses the DELETE of a protected object, anyone's", () => {
    const objs = synth(
      (c) => new KonnectorApiAccess(c, 'a', { group: 'anynines.com', resource: 'postgresqlinstances', deletionProtection: true }),
    );
    const policy = of(objs, 'ValidatingAdmissionPolicy')[0]!;
    expect(policy.metadata.name).toBe('klutch-bind-konnector-postgresqlinstances.anynines.com-deletion-protection');
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ['anynines.com'], apiVersions: ['*'], operations: ['DELETE'], resources: ['postgresqlinstances'] },
    ]);
    expect(policy.spec.matchConditions).toBeUndefined();
    expect(of(objs, 'ValidatingAdmissionPolicyBinding')[0]!.spec.validationActions).toEqual(['Deny']);
  });
});

describe('Pod security of the konnector', () => {
  const objs = synth((c) => new Konnector(c, 'k', { monitoringNamespace: 'monitoring', egressPorts: [8443] }));

  it('runs restricted: numeric non-root user, no escalation, no capabilities, RuntimeDefault seccomp, read-only root', () => {
    const pod = of(objs, 'Deployment')[0]!.spec.template.spec;
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65532, runAsGroup: 65532 });
    expect(pod.containers[0].securityContext).toEqual({
      runAsNonRoot: true,
      runAsUser: 65532,
      runAsGroup: 65532,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(of(objs, 'Namespace')[0]!.metadata).toMatchObject({
      labels: {
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/audit': 'restricted',
      },
    });
  });

  it('denies by default; lets the konnector reach DNS and the API server ports, and be scraped from the monitoring namespace', () => {
    const [deny, allow] = of(objs, 'NetworkPolicy');
    expect(deny!.spec).toEqual({ podSelector: {}, policyTypes: ['Egress', 'Ingress'] });
    const pod = of(objs, 'Deployment')[0]!.spec.template.metadata.labels;
    expect(pod).toMatchObject(allow!.spec.podSelector.matchLabels);
    const ports = (rules: { ports: { port: number; protocol: string }[] }[]) =>
      [...new Set(rules.flatMap((r) => r.ports.map((p) => `${p.protocol}/${p.port}`)))].sort();
    expect(ports(allow!.spec.egress)).toEqual(['TCP/53', 'TCP/8443', 'UDP/53']);
    expect(allow!.spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } }, podSelector: {} }],
        ports: [{ port: 8080, protocol: 'TCP' }],
      },
    ]);
    // Without a monitoring namespace, no ingress at all (kubelet probes are not subject to NetworkPolicy).
    const plain = of(
      synth((c) => new Konnector(c, 'k')),
      'NetworkPolicy',
    )[1]!;
    expect(plain.spec.ingress).toBeUndefined();
    expect(plain.spec.policyTypes).toContain('Ingress');
    expect(ports(plain.spec.egress)).toEqual(['TCP/443', 'TCP/53', 'TCP/6443', 'UDP/53']);
  });

  it('refuses bad ports and namespaces, naming the field', () => {
    expect(() => new Konnector(new Chart(new App(), 'x'), 'k', { egressPorts: [] })).toThrow('Konnector: egressPorts is empty');
    expect(() => new Konnector(new Chart(new App(), 'x'), 'k', { egressPorts: [70000] })).toThrow(
      'Konnector: egressPorts: 70000 is not a TCP port',
    );
    expect(() => new Konnector(new Chart(new App(), 'x'), 'k', { monitoringNamespace: 'Mon' })).toThrow(
      'Konnector: monitoringNamespace: "Mon" is not a DNS label',
    );
  });
});
