import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import type { V1EnvVar } from '@kubernetes/client-node';
import type { AppClusterBinding } from '../../exports/bind-api';
import { Konnector } from '../../konnector/deploy/konnector';
import { konnectorDeployment } from './app-cluster-binding.objects';

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

const envOf = (a: AppClusterBinding): V1EnvVar[] => konnectorDeployment(a, 'konnector:v1').spec!.template.spec!.containers[0]!.env!;

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

  it("lets spec.konnector.overrides replace a runtime variable by name, never the Pod's own name and namespace", () => {
    const env = envOf(
      acb([
        { name: 'NODE_OPTIONS', value: '--max-old-space-size=512' },
        { name: 'POD_NAME', value: 'forged' },
      ]),
    );
    expect(env.filter((e) => e.name === 'NODE_OPTIONS')).toEqual([{ name: 'NODE_OPTIONS', value: '--max-old-space-size=512' }]);
    expect(env.find((e) => e.name === 'POD_NAME')).toEqual({ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } });
    expect(env.find((e) => e.name === 'MALLOC_ARENA_MAX')?.value).toBe('1');
  });
});
