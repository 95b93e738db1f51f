import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import type { V1EnvVar } from '@kubernetes/client-node';
import type { AppClusterBinding } from '../../exports/bind-api';
import { Konnector } from '../../konnector/deploy/konnector';
import { konnectorDeployment, rootNetworkPolicy } from './app-cluster-binding.objects';
import { vetOverrides, type VettedOverrides } from './app-cluster-binding.overrides';

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

/** The env of the konnector Deployment `kubectl bind` installs, as the Konnector construct synthesizes it. */
function constructEnv(): V1EnvVar[] {
  const chart = new Chart(new App(), 'test');
  new Konnector(chart, 'k');
  const deployment = (Testing.synth(chart) as { kind: string; spec?: any }[]).find((o) => o.kind === 'Deployment')!;
  return deployment.spec.template.spec.containers[0].env;
}

describe('the control-plane konnector Deployment of an AppClusterBinding', () => {
  it('runs node with the same environment as the konnector kubectl bind installs (one definition of its node settings)', () => {
    const byName = (env: V1EnvVar[]) => Object.fromEntries(env.map((e) => [e.name, e]));
    expect(byName(envOf(acb()))).toEqual(byName(constructEnv()));
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
  it("denies every Pod's traffic but DNS and the API servers' ports out, and the probe port in", () => {
    const p = rootNetworkPolicy(acb(), 'klutch-bind-root', [6443, 443, 6443, 31443]);
    expect(p.metadata).toMatchObject({ name: 'klutch-bind-root', namespace: 'klutch-bind-root' });
    expect(p.metadata!.labels).toMatchObject({ 'klutch-kit.anynines.com/appclusterbinding-uid': '1234-abcd' });
    const anywhere = [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }];
    expect(p.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      ingress: [{ ports: [{ protocol: 'TCP', port: 8080 }] }],
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
});
