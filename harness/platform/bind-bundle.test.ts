import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { kindsFromElsewhere } from './bind-bundle';

const dist = mkdtempSync(join(tmpdir(), 'klutch-kit-bundle-'));
afterAll(() => rmSync(dist, { recursive: true, force: true }));

/** A bundle folder as synth writes it: a kustomization listing YAML files. */
function bundle(files: Record<string, object[]>): string {
  const root = join(dist, 'control-plane');
  mkdirSync(root, { recursive: true });
  for (const [name, docs] of Object.entries(files)) writeFileSync(join(root, name), docs.map((d) => stringify(d)).join('---\n'));
  writeFileSync(join(root, 'kustomization.yaml'), stringify({ kind: 'Kustomization', resources: Object.keys(files) }));
  return dist;
}

describe('kindsFromElsewhere', () => {
  it("names the kinds the bundle applies that neither Kubernetes nor the bundle's own CRDs define", () => {
    const dir = bundle({
      'crd.yaml': [{ apiVersion: 'apiextensions.k8s.io/v1', kind: 'CustomResourceDefinition', spec: { group: 'klutch.anynines.com' } }],
      'backend.yaml': [
        { apiVersion: 'apps/v1', kind: 'Deployment' },
        { apiVersion: 'v1', kind: 'Service' },
        { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingAdmissionPolicy' },
        { apiVersion: 'klutch.anynines.com/v1alpha1', kind: 'APIServiceExport' },
      ],
      'packages.yaml': [
        { apiVersion: 'pkg.crossplane.io/v1', kind: 'Function' },
        { apiVersion: 'pkg.crossplane.io/v1', kind: 'Provider' },
        { apiVersion: 'kubernetes.crossplane.io/v1alpha1', kind: 'ProviderConfig' },
        { apiVersion: 'pkg.crossplane.io/v1', kind: 'Function' },
      ],
    });
    expect(kindsFromElsewhere(dir)).toEqual([
      'kubernetes.crossplane.io/v1alpha1 ProviderConfig',
      'pkg.crossplane.io/v1 Function',
      'pkg.crossplane.io/v1 Provider',
    ]);
  });
});
