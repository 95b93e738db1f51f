import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { admitsIngress, type Source } from '../../../test/support/network-policy';
import { FUNCTION_GRPC_PORT, FUNCTION_METRICS_PORT, FunctionRuntime, type FunctionRuntimeProps } from './function-runtime';

const fn = { name: 'klutch-kit-function-dataservices', ref: 'xpkg.example.com/fn:v1' };

function synth(p: Partial<FunctionRuntimeProps> = {}): Record<string, any>[] {
  const chart = new Chart(new App(), 'test');
  new FunctionRuntime(chart, 'function', { fn, ...p });
  return Testing.synth(chart);
}
const policyOf = (objs: Record<string, any>[]) => objs.find((o) => o.kind === 'NetworkPolicy')!;

/** A Pod of the function's revision, as Crossplane labels it. */
const functionPod = {
  namespace: 'crossplane-system',
  labels: { 'pkg.crossplane.io/function': fn.name, 'pkg.crossplane.io/revision': `${fn.name}-abc123` },
};
const pod = (namespace: string, labels: Record<string, string> = {}): Source => ({
  namespace,
  namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
  labels,
  ip: '10.244.0.12',
});
const crossplane = pod('crossplane-system', { app: 'crossplane', release: 'crossplane' });

describe('FunctionRuntime', () => {
  it('writes the DeploymentRuntimeConfig, the Function using it and a NetworkPolicy for its Pods', () => {
    expect(synth().map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`)).toEqual([
      `DeploymentRuntimeConfig /${fn.name}`,
      `Function /${fn.name}`,
      `NetworkPolicy crossplane-system/${fn.name}`,
    ]);
    const p = policyOf(synth()).spec;
    expect(p.podSelector).toEqual({ matchLabels: { 'pkg.crossplane.io/function': fn.name } });
    // Egress listed with no rule: the function never opens a connection.
    expect(p.policyTypes).toEqual(['Ingress', 'Egress']);
    expect(p.egress).toBeUndefined();
  });

  // Issue 34, item 10: nothing fenced the function's gRPC and metrics listeners.
  it.each([
    ['Crossplane core, gRPC', true, crossplane, FUNCTION_GRPC_PORT, undefined],
    ['Crossplane core, metrics', false, crossplane, FUNCTION_METRICS_PORT, undefined],
    [
      'a provider Pod of the same namespace, gRPC',
      false,
      pod('crossplane-system', { 'pkg.crossplane.io/provider': 'provider-kubernetes' }),
      FUNCTION_GRPC_PORT,
      undefined,
    ],
    ['a tenant database Pod, gRPC', false, pod('cluster-x7k2p', { app: 'crossplane' }), FUNCTION_GRPC_PORT, undefined],
    ['a tenant database Pod, metrics', false, pod('cluster-x7k2p'), FUNCTION_METRICS_PORT, 'monitoring'],
    ['a root konnector, metrics', false, pod('klutch-bind-team-app'), FUNCTION_METRICS_PORT, undefined],
    ['Prometheus without a monitoring namespace, metrics', false, pod('monitoring'), FUNCTION_METRICS_PORT, undefined],
    ['Prometheus in the monitoring namespace, metrics', true, pod('monitoring'), FUNCTION_METRICS_PORT, 'monitoring'],
    ['Prometheus in the monitoring namespace, gRPC', false, pod('monitoring'), FUNCTION_GRPC_PORT, 'monitoring'],
  ] as const)('attack: %s: admitted %s', (_who, admitted, source, port, monitoringNamespace) => {
    const objs = synth(monitoringNamespace ? { monitoringNamespace } : {});
    // Every policy synth writes for it (none at all admits everyone).
    expect(
      admitsIngress(
        objs.filter((o) => o.kind === 'NetworkPolicy'),
        functionPod,
        source,
        port,
      ),
    ).toBe(admitted);
  });

  it('follows Crossplane into another namespace and to other core labels; refuses what would admit everything', () => {
    const p = policyOf(synth({ namespace: 'upbound-system', crossplanePods: { 'app.kubernetes.io/name': 'crossplane' } }));
    expect(p.metadata.namespace).toBe('upbound-system');
    expect(p.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: { 'app.kubernetes.io/name': 'crossplane' } } }]);
    expect(() => synth({ crossplanePods: {} })).toThrow('FunctionRuntime function: crossplanePods: is empty');
    expect(() => synth({ monitoringNamespace: 'Mon' })).toThrow('FunctionRuntime function: monitoringNamespace: "Mon" is not a DNS label');
  });
});
