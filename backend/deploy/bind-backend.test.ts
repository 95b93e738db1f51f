import { App, Chart, Duration, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { REQUIRED_BACKEND_FLAGS } from '../../test/support/backend-flags';
import { parseOptions } from '../options';
import { BindBackend, type BindBackendProps } from './bind-backend';

const props: BindBackendProps = {
  issuerUrl: 'https://issuer.example.com',
  clientId: 'klutch-bind',
  publicUrl: 'https://bind.example.com',
  externalAddress: 'https://api.example.com:6443',
};

function synth(p: BindBackendProps = props): Record<string, any>[] {
  const chart = new Chart(new App(), 'test');
  new BindBackend(chart, 'backend', p);
  return Testing.synth(chart);
}
const find = (objs: Record<string, any>[], kind: string) => objs.find((o) => o.kind === kind)!;

describe('BindBackend', () => {
  it('writes Namespace, ServiceAccount, ClusterRole and binding, Lease Role and binding, Deployment, Service, NetworkPolicies, admission policy', () => {
    expect(
      synth()
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual([
      'ClusterRole/klutch-bind-backend',
      'ClusterRoleBinding/klutch-bind-backend',
      'Deployment/klutch-bind-backend',
      'Namespace/klutch-bind-backend',
      'NetworkPolicy/default-deny',
      'NetworkPolicy/klutch-bind-backend',
      'Role/klutch-bind-backend-leases',
      'RoleBinding/klutch-bind-backend-leases',
      'Service/klutch-bind-backend',
      'ServiceAccount/klutch-bind-backend',
      'ValidatingAdmissionPolicy/klutch-bind-backend-containment',
      'ValidatingAdmissionPolicy/klutch-bind-backend-root-namespaces',
      'ValidatingAdmissionPolicy/klutch-bind-consumer-claim-machinery',
      'ValidatingAdmissionPolicy/klutch-bind-consumer-secret-types',
      'ValidatingAdmissionPolicyBinding/klutch-bind-backend-containment',
      'ValidatingAdmissionPolicyBinding/klutch-bind-backend-root-namespaces',
      'ValidatingAdmissionPolicyBinding/klutch-bind-consumer-claim-machinery',
      'ValidatingAdmissionPolicyBinding/klutch-bind-consumer-secret-types',
    ]);
  });

  it('holds consumers (ServiceAccount klutch-binder of any namespace) to Opaque Secrets (issue 34, item 10)', () => {
    const policy = synth().find((o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === 'klutch-bind-consumer-secret-types')!;
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['secrets'] },
    ]);
    expect(policy.spec.matchConditions[0].expression).toContain("request.userInfo.username.endsWith(':klutch-binder')");
    expect(policy.spec.validations[0].expression).toBe("(has(object.type) ? object.type : 'Opaque') == 'Opaque'");
  });

  it("holds consumers' claims of the exported groups to no Crossplane field but compositionRef (issue 34)", () => {
    const policy = synth({ ...props, exportedGroups: ['b.example', 'anynines.com'] }).find(
      (o) => o.kind === 'ValidatingAdmissionPolicy' && o.metadata.name === 'klutch-bind-consumer-claim-machinery',
    )!;
    expect(policy.spec.matchConstraints.resourceRules).toEqual([
      { apiGroups: ['anynines.com', 'b.example'], apiVersions: ['*'], operations: ['CREATE', 'UPDATE'], resources: ['*'] },
    ]);
    expect(policy.spec.matchConditions[0].expression).toContain("request.userInfo.username.endsWith(':klutch-binder')");
    // Every field Crossplane writes, at the top of a claim's spec and under a v2 composite's spec.crossplane.
    const changed = policy.spec.variables.find((v: { name: string }) => v.name === 'changed').expression as string;
    for (const f of [
      'resourceRef',
      'resourceRefs',
      'claimRef',
      'compositionSelector',
      'compositionRevisionRef',
      'compositionRevisionSelector',
      'compositionUpdatePolicy',
    ])
      expect(changed).toContain(`'${f}'`);
    expect(changed).toContain("'spec.crossplane.'");
    expect(changed).not.toContain("'compositionRef'");
  });

  it('fails closed: templates without a bind rule bind for nobody unless the operator says otherwise (issue 34, item 10)', () => {
    const args = (p: BindBackendProps) => find(synth(p), 'Deployment').spec.template.spec.containers[0].args as string[];
    expect(args(props).filter((a) => a.startsWith('--default-bind-policy'))).toEqual(['--default-bind-policy=deny-all']);
    expect(args({ ...props, defaultBindPolicy: 'allow-all' })).toContain('--default-bind-policy=allow-all');
    // With a settings ConfigMap it is one of the settings, so an overlay changes it.
    const chart = new Chart(new App(), 'settings');
    const b = new BindBackend(chart, 'backend', { ...props, settingsConfigMap: 'settings' });
    expect(b.settings).toMatchObject({ BACKEND_DEFAULT_BIND_POLICY: 'deny-all' });
    expect(() => synth({ ...props, defaultBindPolicy: 'deny' as never })).toThrow(
      'BindBackend backend: defaultBindPolicy: "deny" is not allow-all or deny-all',
    );
  });

  it('lets the monitoring namespace scrape the root konnectors too (issue 34, item 10); none by default', () => {
    const args = (p: BindBackendProps) => find(synth(p), 'Deployment').spec.template.spec.containers[0].args as string[];
    expect(args(props).filter((a) => a.startsWith('--monitoring-namespace'))).toEqual([]);
    expect(args({ ...props, monitoringNamespace: 'monitoring' })).toContain('--monitoring-namespace=monitoring');
  });

  it('runs the backend with the flags of its props, the client secret from a Secret and the cookie keys mounted', () => {
    const d = find(
      synth({ ...props, replicas: 3, consumerScope: 'Cluster', tokenLifetime: '2h', namespacePrefix: 'tenant' }),
      'Deployment',
    );
    expect(d.spec.replicas).toBe(3);
    const c = d.spec.template.spec.containers[0];
    expect(c.args).toEqual(
      expect.arrayContaining([
        '--oidc-issuer-url=https://issuer.example.com',
        '--oidc-callback-url=https://bind.example.com/callback',
        '--external-address=https://api.example.com:6443',
        '--consumer-scope=Cluster',
        '--token-lifetime=2h',
        '--namespace-prefix=tenant',
        '--cookie-keys-file=/etc/klutch-bind/cookie-keys/keys',
      ]),
    );
    expect(c.env.find((e: any) => e.name === 'BACKEND_OIDC_ISSUER_CLIENT_SECRET').valueFrom.secretKeyRef).toEqual({
      name: 'oidc-client',
      key: 'client-secret',
    });
    expect(d.spec.template.spec.volumes.find((v: any) => v.name === 'cookie-keys').secret.secretName).toBe('cookie-keys');
    expect(c.readinessProbe.httpGet).toMatchObject({ path: '/readyz', port: 8081 });
    expect(c.livenessProbe.httpGet).toMatchObject({ path: '/healthz', port: 8081 });
    expect(c.resources.requests).toEqual({ cpu: '100m', memory: '128Mi' });
    expect(d.spec.template.spec.automountServiceAccountToken).toBe(true);
  });

  it('drains on termination: a preStop sleep while the Service forgets the Pod, then a grace period for the requests in flight', () => {
    const spec = (p: BindBackendProps) => find(synth(p), 'Deployment').spec.template.spec;
    const dflt = spec(props);
    expect(dflt.containers[0].lifecycle).toEqual({ preStop: { sleep: { seconds: 10 } } });
    expect(dflt.terminationGracePeriodSeconds).toBe(45);
    const longer = spec({ ...props, drain: Duration.seconds(20) });
    expect(longer.containers[0].lifecycle.preStop.sleep.seconds).toBe(20);
    expect(longer.terminationGracePeriodSeconds).toBe(55);
    const none = spec({ ...props, drain: Duration.seconds(0) });
    expect(none.containers[0].lifecycle).toBeUndefined();
    expect(none.terminationGracePeriodSeconds).toBe(35);
    expect(() => synth({ ...props, drain: Duration.millis(1500) })).toThrow(
      'BindBackend backend: drain: 1.5 s is not a whole number of seconds, 0 or more',
    );
  });

  it('gives its probes 5 s to answer: a busy node answers late, and a 1 s miss restarts a working backend', () => {
    const c = find(synth(props), 'Deployment').spec.template.spec.containers[0];
    expect([c.livenessProbe.timeoutSeconds, c.readinessProbe.timeoutSeconds]).toEqual([5, 5]);
  });

  it('holds what consumers are granted (RBAC escalation check) and no wildcard beyond the exported groups', () => {
    const rules = find(synth({ ...props, exportedGroups: ['anynines.com', 'example.org'] }), 'ClusterRole').rules as {
      apiGroups: string[];
      resources: string[];
      verbs: string[];
    }[];
    const wildcard = rules.filter((r) => r.resources.includes('*') || r.verbs.includes('*'));
    expect(wildcard.map((r) => r.apiGroups[0]).sort()).toEqual(['anynines.com', 'example.org']);
    const secrets = rules.find((r) => r.apiGroups[0] === '' && r.resources.includes('secrets'))!;
    expect(secrets.verbs.sort()).toEqual(['create', 'delete', 'get', 'list', 'patch', 'update', 'watch']);
    expect(rules.some((r) => r.verbs.includes('escalate') || r.verbs.includes('bind') || r.verbs.includes('impersonate'))).toBe(false);
  });

  it('runs restricted: numeric non-root user, no escalation, no capabilities, RuntimeDefault seccomp; its Namespace enforces it', () => {
    const objs = synth();
    const pod = find(objs, 'Deployment').spec.template.spec;
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
    expect(find(objs, 'Namespace').metadata.labels).toMatchObject({
      'pod-security.kubernetes.io/enforce': 'restricted',
      'pod-security.kubernetes.io/warn': 'restricted',
      'pod-security.kubernetes.io/audit': 'restricted',
    });
  });

  it('denies by default; admits the bind port from anywhere, the probe port from the monitoring namespace, DNS and API egress', () => {
    const objs = synth({ ...props, issuerUrl: 'https://issuer.example.com:8443/realms/x', monitoringNamespace: 'monitoring' });
    const [deny, allow] = objs.filter((o) => o.kind === 'NetworkPolicy');
    expect(deny!.spec).toEqual({ podSelector: {}, policyTypes: ['Egress', 'Ingress'] });
    expect(find(objs, 'Deployment').spec.template.metadata.labels).toMatchObject(allow!.spec.podSelector.matchLabels);
    const rules = (rs: { ports: { port: number; protocol: string }[]; from?: unknown[]; to?: unknown[] }[]) =>
      rs.map((r) => `${r.ports.map((p) => `${p.protocol}/${p.port}`).join(',')} ${JSON.stringify(r.from ?? r.to)}`);
    expect(rules(allow!.spec.ingress)).toEqual([
      'TCP/8080 [{"namespaceSelector":{},"podSelector":{}}]',
      'TCP/8080 [{"ipBlock":{"cidr":"0.0.0.0/0"}}]',
      'TCP/8080 [{"ipBlock":{"cidr":"::/0"}}]',
      'TCP/8081 [{"namespaceSelector":{"matchLabels":{"kubernetes.io/metadata.name":"monitoring"}},"podSelector":{}}]',
    ]);
    expect(rules(allow!.spec.egress)).toEqual([
      'UDP/53,TCP/53 [{"namespaceSelector":{},"podSelector":{}}]',
      'UDP/53,TCP/53 [{"ipBlock":{"cidr":"0.0.0.0/0"}}]',
      'UDP/53,TCP/53 [{"ipBlock":{"cidr":"::/0"}}]',
      'TCP/443,TCP/6443,TCP/8443 [{"ipBlock":{"cidr":"0.0.0.0/0"}}]',
      'TCP/443,TCP/6443,TCP/8443 [{"ipBlock":{"cidr":"::/0"}}]',
    ]);
    // No monitoring namespace: the probe port is left to the kubelet (not subject to NetworkPolicy on most CNIs).
    const plain = synth({ ...props, egressPorts: [6443] }).filter((o) => o.kind === 'NetworkPolicy')[1]!;
    expect(rules(plain.spec.ingress).some((r) => r.startsWith('TCP/8081'))).toBe(false);
    expect(rules(plain.spec.egress).slice(3)).toEqual([
      'TCP/6443 [{"ipBlock":{"cidr":"0.0.0.0/0"}}]',
      'TCP/6443 [{"ipBlock":{"cidr":"::/0"}}]',
    ]);
  });

  it('serves the bind port on 80 and /metrics on its named port through the Service', () => {
    const svc = find(synth(), 'Service');
    expect(svc.spec.ports).toEqual([
      expect.objectContaining({ name: 'http', port: 80, targetPort: 8080 }),
      expect.objectContaining({ name: 'metrics', port: 8081, targetPort: 8081 }),
    ]);
  });

  it('is deterministic', () => {
    expect(JSON.stringify(synth())).toBe(JSON.stringify(synth()));
  });

  it.each([
    [{ replicas: 0 }, 'replicas: 0 is not a positive integer'],
    [{ publicUrl: 'http://bind.example.com' }, 'publicUrl: "http://bind.example.com" must be an https URL'],
    [{ publicUrl: 'https://bind.example.com/x' }, 'must have no path'],
    [{ issuerUrl: 'issuer' }, 'issuerUrl: "issuer" must be an https URL'],
    [{ tokenLifetime: 'forever' }, 'tokenLifetime: "forever" is not a duration'],
    // The backend refuses a token shorter than Kubernetes issues: so does the construct, never writing one.
    [{ tokenLifetime: '5s' }, 'tokenLifetime: "5s" is less than 10m'],
    [{ clientId: '' }, 'clientId: is empty'],
    [{ monitoringNamespace: 'Mon' }, 'monitoringNamespace: "Mon" is not a DNS label'],
    [{ egressPorts: [] }, 'egressPorts: is empty'],
    [{ egressPorts: [0] }, 'egressPorts: 0 is not a TCP port'],
  ])('refuses %j, naming the field', (bad, message) => {
    expect(() => new BindBackend(new Chart(new App(), 'c'), 'backend', { ...props, ...bad } as BindBackendProps)).toThrow(message);
  });

  it('takes every token lifetime the backend takes, as Go writes durations (1.5h, 90m)', () => {
    for (const tokenLifetime of ['1.5h', '90m', '1h30m', '10m']) {
      const objects = synth({ ...props, tokenLifetime });
      expect(JSON.stringify(objects), tokenLifetime).toContain(`--token-lifetime=${tokenLifetime}`);
      expect(() => parseOptions([...REQUIRED_BACKEND_FLAGS, `--token-lifetime=${tokenLifetime}`], {}), tokenLifetime).not.toThrow();
    }
  });
});
