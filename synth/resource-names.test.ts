import { join } from 'node:path';
import { App, Chart, Testing } from 'cdk8s';
import { describe, expect, it } from 'vitest';
import { ProviderKubernetes } from './provider-configs';
import { crdNamesIn, resourceNames } from './resource-names';

const policy = { group: 'policy.example.org', kind: 'Policy', plural: 'policies' };

describe('resourceNames', () => {
  it("reads a kind's resource name from its CRD: Policy is policies, not policys", () => {
    const of = resourceNames(() => [policy], 'test');
    expect(of({ apiVersion: 'policy.example.org/v1', kind: 'Policy' })).toBe('policies');
    expect(of({ apiVersion: 'networking.k8s.io/v1', kind: 'Ingress' })).toBe('ingresses');
    expect(of({ apiVersion: 'v1', kind: 'Endpoints' })).toBe('endpoints');
  });

  it('names a kind without a CRD, its group and where the CRD goes; reads no CRD for built-in kinds', () => {
    const of = resourceNames(() => {
      throw new Error('read');
    }, 'provider-kubernetes');
    expect(of({ apiVersion: 'v1', kind: 'Secret' })).toBe('secrets');
    const none = resourceNames(() => [policy], 'provider-kubernetes');
    expect(() => none({ apiVersion: 'other.example.org/v1', kind: 'Policy' })).toThrow(
      'provider-kubernetes: no CustomResourceDefinition of kind Policy in group "other.example.org" (apiVersion other.example.org/v1) to read its resource name from: add its CRD file under schemas/',
    );
  });

  it("reads the CRDs the catalog's kinds come from in schemas/", () => {
    const names = crdNamesIn(join(import.meta.dirname, '..', 'schemas'));
    expect(names).toContainEqual({ group: 'postgresql.anynines.com', kind: 'Postgresql', plural: 'postgresqls' });
    expect(names).toContainEqual({ group: 'postgresql.cnpg.io', kind: 'Cluster', plural: 'clusters' });
  });
});

describe('ProviderKubernetes', () => {
  it("grants a wrapped kind under its CRD's resource name", () => {
    const chart = new Chart(new App(), 'test');
    new ProviderKubernetes(chart, 'p', {
      manages: [{ apiVersion: 'policy.example.org/v1', kind: 'Policy' }],
      resourceOf: resourceNames(() => [policy], 'test'),
    });
    const role = Testing.synth(chart).find((o) => o.kind === 'ClusterRole') as { rules: { apiGroups: string[]; resources: string[] }[] };
    expect(role.rules).toContainEqual(expect.objectContaining({ apiGroups: ['policy.example.org'], resources: ['policies'] }));
  });
});
