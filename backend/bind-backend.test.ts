import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
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
  it('writes Namespace, ServiceAccount, ClusterRole and binding, Lease Role and binding, Deployment and Service', () => {
    expect(
      synth()
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual([
      'ClusterRole/klutch-bind-backend',
      'ClusterRoleBinding/klutch-bind-backend',
      'Deployment/klutch-bind-backend',
      'Namespace/klutch-bind-backend',
      'Role/klutch-bind-backend-leases',
      'RoleBinding/klutch-bind-backend-leases',
      'Service/klutch-bind-backend',
      'ServiceAccount/klutch-bind-backend',
    ]);
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

  it('is deterministic', () => {
    expect(JSON.stringify(synth())).toBe(JSON.stringify(synth()));
  });

  it.each([
    [{ replicas: 0 }, 'replicas: 0 is not a positive integer'],
    [{ publicUrl: 'http://bind.example.com' }, 'publicUrl: "http://bind.example.com" must be an https URL'],
    [{ publicUrl: 'https://bind.example.com/x' }, 'must have no path'],
    [{ issuerUrl: 'issuer' }, 'issuerUrl: "issuer" must be an https URL'],
    [{ tokenLifetime: 'forever' }, 'tokenLifetime: "forever" is not a duration'],
    [{ clientId: '' }, 'clientId: is empty'],
  ])('refuses %j, naming the field', (bad, message) => {
    expect(() => new BindBackend(new Chart(new App(), 'c'), 'backend', { ...props, ...bad } as BindBackendProps)).toThrow(message);
  });
});
