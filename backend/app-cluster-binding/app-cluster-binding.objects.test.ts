import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import type { V1EnvVar } from '@kubernetes/client-node';
import type { AppClusterBinding } from '../../exports/bind-api';
import { Konnector } from '../../konnector/deploy/konnector';
import { konnectorDeployment, rootNetworkPolicy } from './app-cluster-binding.objects';
import { vetOverrides, type VettedOverrides } from './app-cluster-binding.overrides';
import { admitsIngress } from '../../test/support/network-policy';

function acb(env?: V1EnvVar[]): AppClusterBinding {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'AppClusterBinding',
    metadata: { name: 'app1', namespace: 'team-a', uid: '1234-abcd' },
    spec: {
      kubeconfigSecretRef: { namespace: 'team-a', name: 'app1-kubeconfig', key: 'kubeconfig' },
      apiExports: [{ group: 'anynines.com', resource: 'postgresqlinstances' }],
      konnector: { deploy: true, ...(env ? { overrides: { env } } : {}) },
    },
  };
}

const vetted = (a: AppClusterBinding): VettedOverrides => {
  const v = vetOverrides(a.spec.konnector?.overrides, { image: 'konnector:v1', allowed: [] });
  if ('problems' in v) throw new Error(v.problems.join('; '));
  return v;
};
const envOf = (a: AppClusterBinding): V1EnvVar[] =>
  konnectorDeployment(a, 'klutch-bind-root', vetted(a)).spec!.template.spec!.containers[0]!.env!;

/** The container of the konnector Deployment `kubectl bind` installs, as the Konnector construct synthesizes it. */
function constructContainer() {
  const chart = new Chart(new App(), 'test');
  new Konnector(chart, 'k');
  const deployment = (Testing.synth(chart) as { kind: string; spec?: any }[]).find((o) => o.kind === 'Deployment')!;
  return deployment.spec.template.spec.containers[0];
}

describe('the control-plane konnector Deployment of an AppClusterBinding', () => {
  it('runs node with the same environment and probes as the konnector kubectl bind installs (one definition of its node settings)', () => {
    const byName = (env: V1EnvVar[]) => Object.fromEntries(env.map((e) => [e.name, e]));
    const installed = constructContainer();
    expect(byName(envOf(acb()))).toEqual(byName(installed.env));
    const ours = konnectorDeployment(acb(), 'klutch-bind-root', vetted(acb())).spec!.template.spec!.containers[0]!;
    // The probes as the kubelet reads them: the API's defaults filled in (cdk8s-plus writes some of them out).
    const probe = (p: any) => ({ failureThreshold: 3, timeoutSeconds: 1, ...p, httpGet: { scheme: 'HTTP', ...p.httpGet } });
    expect([ours.readinessProbe, ours.livenessProbe].map(probe)).toEqual([installed.readinessProbe, installed.livenessProbe].map(probe));
    expect(installed.livenessProbe.timeoutSeconds, 'a busy node answers late, not never').toBe(5);
  });

  it('lets spec.konnector.overrides replace a runtime variable by name', () => {
    const env = envOf(acb([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=512' }]));
    expect(env.filter((e) => e.name === 'NODE_OPTIONS')).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=512' }]);
    expect(env.find((e) => e.name === 'POD_NAME')).toEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(env.find((e) => e.name === 'MALLOC_ARENA_MAX')?.value).toBe('1');
  });

  it('labels it with the uid of its AppClusterBinding: whose it is', () => {
    const d = konnectorDeployment(acb(), 'klutch-bind-root', vetted(acb()));
    expect(d.metadata!.labels).toMatchObject({ 'klutch-kit.anynines.com/appclusterbinding-uid': '1234-abcd' });
    expect(d.metadata!.namespace).toBe('klutch-bind-root');
  });
});

describe('the NetworkPolicy of a binding root namespace', () => {
  it("denies every Pod's traffic but DNS and the API servers' ports out, and nothing in without a monitoring namespace", () => {
    const p = rootNetworkPolicy(acb(), 'klutch-bind-root', [6443, 443, 6443, 31443]);
    expect(p.metadata).toMatchObject({ name: 'klutch-bind-root', namespace: 'klutch-bind-root' });
    expect(p.metadata!.labels).toMatchObject({ 'klutch-kit.anynines.com/appclusterbinding-uid': '1234-abcd' });
    const anywhere = [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }];
    expect(p.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      egress: [
        {
          to: [{ namespaceSelector: {} }, ...anywhere],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        {
          to: anywhere,
          ports: [443, 6443, 31443].map((port) => ({ protocol: 'TCP', port })),
        },
      ],
    });
  });

  it('admits the probe port only from the monitoring namespace', () => {
    expect(rootNetworkPolicy(acb(), 'r', [443], 'monitoring').spec.ingress).toEqual([
      {
        from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
        ports: [{ protocol: 'TCP', port: 8080 }],
      },
    ]);
  });

  // Issue 34, item 10: the konnector's probe/metrics listener was open to every Pod of every namespace.
  const konnectorPod = { namespace: 'klutch-bind-r', labels: { app: 'konnector-app1' } };
  const pod = (namespace: string, labels: Record<string, string> = {}) => ({
    namespace,
    namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
    labels,
    ip: '10.244.1.7',
  });
  it.each([
    ['a tenant database Pod', false, pod('cluster-x7k2p', { 'cnpg.io/cluster': 'pg' }), undefined],
    ["another root namespace's konnector", false, pod('klutch-bind-other', { app: 'konnector-other' }), undefined],
    ['a Pod of its own root namespace', false, pod('klutch-bind-r'), undefined],
    ['Prometheus, with no monitoring namespace set', false, pod('monitoring', { app: 'prometheus' }), undefined],
    ['Prometheus in the monitoring namespace', true, pod('monitoring', { app: 'prometheus' }), 'monitoring'],
    ['a tenant Pod, with a monitoring namespace set', false, pod('cluster-x7k2p'), 'monitoring'],
  ] as const)('attack: %s reaching port 8080 of a root konnector: admitted %s', (_who, admitted, source, monitoring) => {
    const p = rootNetworkPolicy(acb(), 'klutch-bind-r', [443, 6443], monitoring);
    expect(admitsIngress([p], konnectorPod, source, 8080)).toBe(admitted);
  });
});
