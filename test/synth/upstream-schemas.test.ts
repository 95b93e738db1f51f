/**
 * Every object synth writes validates against the upstream CRD of its kind (schemas/, verbatim), with unknown fields
 * as errors: XRDs and Compositions against Crossplane's, the package metadata against Crossplane's meta CRDs, the
 * export templates against Klutch's; and every Composition's function input against the input CRD we ship.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { inputSchema, selectionSchema } from '../../recipe';
import { validatorFor, type Validator } from '../support/openapi';
import { parseYaml, ROOT, synthCatalog } from '../../harness/crossplane/catalog';
import { CRANK_VERSION } from '../../harness/tools/crank';
import { goModuleSource, wrapperModule } from '../../harness/tools/go';

/** Upstream CRDs by `<group>/<kind>`. */
function upstreamCrds(): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  const dir = join(ROOT, 'schemas');
  for (const sub of readdirSync(dir, { withFileTypes: true }).filter((d) => d.isDirectory())) {
    for (const f of readdirSync(join(dir, sub.name)).filter((x) => x.endsWith('.yaml'))) {
      for (const crd of parseYaml(readFileSync(join(dir, sub.name, f), 'utf8'))) {
        const spec = crd.spec as { group: string; names: { kind: string } };
        out.set(`${spec.group}/${spec.names.kind}`, crd);
      }
    }
  }
  return out;
}

const stepCrd = (kind: string, schema: { toJSON(): unknown }) => ({
  spec: {
    group: 'dataservices.fn.klutch.anynines.com',
    names: { kind },
    versions: [{ name: 'v1beta1', schema: { openAPIV3Schema: schema.toJSON() } }],
  },
});
const inputCrd = stepCrd('Input', inputSchema);
const selectionCrd = stepCrd('Selection', selectionSchema);

describe.each(['v1', 'v2'] as const)('synth output for the %s target', (target) => {
  let objects: { path: string; obj: Record<string, unknown> }[];
  let crds: Map<string, Record<string, unknown>>;
  const validators = new Map<string, Validator>();

  beforeAll(async () => {
    crds = upstreamCrds();
    const out = await synthCatalog(target);
    objects = [...out].flatMap(([path, objs]) => objs.map((obj) => ({ path, obj })));
  });

  function validate(obj: Record<string, unknown>): string[] {
    const [group, version] = String(obj.apiVersion).split('/') as [string, string];
    const key = `${group}/${obj.kind}`;
    let v = validators.get(`${key}/${version}`);
    if (!v) {
      const crd = crds.get(key);
      if (!crd) return [`no upstream CRD for ${key}`];
      v = validatorFor(crd, version);
      validators.set(`${key}/${version}`, v);
    }
    return v(obj).errors;
  }

  it('validates every object except the example claims against its upstream CRD', () => {
    // Examples are claims (checked against the XRDs elsewhere); the bind CRDs are compared with upstream's in exports/;
    // the backend's and the konnector's core objects (Deployment, RBAC, ...) are applied to a real API server in
    // test/cluster/backend-deploy.test.ts and test/cluster/konnector*.test.ts.
    const checked = objects.filter(
      ({ path, obj }) =>
        !path.includes('/examples/') &&
        !path.startsWith('control-plane/backend/') &&
        !path.startsWith('app-cluster/') &&
        // No prometheus-operator module with its CRDs is served here: monitoring/monitoring.test.ts checks these
        // objects with the operator's schemas (@kubernetes-models/prometheus-operator) and their rules with promtool.
        !path.startsWith('control-plane/monitoring/') &&
        // The production Component (a PodDisruptionBudget and a kustomize Component) is built by the real kustomize in
        // synth/install-bundle.test.ts and applied to a real API server by the sandbox (test/cluster/platform-pods.test.ts).
        !path.startsWith('control-plane/production/') &&
        // The private-registry Component only patches (built and checked against Crossplane's CRDs there too).
        !path.startsWith('control-plane/private-registry/') &&
        // The exposure Components (an Ingress; Gateway API's HTTPRoute and BackendTLSPolicy) are built by the real
        // kustomize there and installed by the real helm onto an API server with Gateway API's CRDs
        // (test/cluster/helm-install.test.ts).
        !path.startsWith('control-plane/ingress/') &&
        !path.startsWith('control-plane/gateway/') &&
        // The install bundle's kustomization is built by the real kustomize, provider-kubernetes' RBAC and the v2
        // ClusterProviderConfig (provider-kubernetes v1.3.1's CRD) are checked in synth/install-bundle.test.ts.
        path !== 'control-plane/kustomization.yaml' &&
        // Kubernetes' own NetworkPolicies (the function's too) go to a real API server in test/cluster/pod-security.test.ts.
        !['ClusterRole', 'ClusterRoleBinding', 'ClusterProviderConfig', 'NetworkPolicy'].includes(String(obj.kind)) &&
        obj.kind !== 'CustomResourceDefinition' &&
        obj.kind !== 'DeploymentRuntimeConfig',
    );
    expect(checked.length).toBeGreaterThan(30);
    const errors = checked.flatMap(({ path, obj }) => validate(obj).map((e) => `${path}: ${e}`));
    expect(errors).toEqual([]);
  });

  it("writes the function's DeploymentRuntimeConfig so that Crossplane's CRD accepts it", () => {
    // schemas/crossplane has no DeploymentRuntimeConfig CRD: read it from the Crossplane module crank is built from.
    const source = goModuleSource(wrapperModule('harness/tools/crank'), 'github.com/crossplane/crossplane', CRANK_VERSION);
    const path = join(source, 'cluster', 'crds', 'pkg.crossplane.io_deploymentruntimeconfigs.yaml');
    const v = validatorFor(parseYaml(readFileSync(path, 'utf8'))[0] as Record<string, unknown>, 'v1beta1');
    // The function's, and provider-kubernetes' (the install bundle's).
    const drcs = objects.filter(({ obj }) => obj.kind === 'DeploymentRuntimeConfig');
    expect(drcs).toHaveLength(2);
    for (const d of drcs) expect(v(d.obj).errors, d.path).toEqual([]);
    expect(v({ ...drcs[0]!.obj, spec: { deploymentTemplate: { spec: { template: {} } } } }).errors.join('\n')).toContain('selector');
  });

  it('writes every Composition step input so that the function input CRD accepts it', () => {
    // A Composition per API and backend, each with an Input; v2 adds one per API, with a Selection of those Inputs.
    const input = validatorFor(inputCrd, 'v1beta1');
    const selection = validatorFor(selectionCrd, 'v1beta1');
    const compositions = objects.filter(({ obj }) => obj.kind === 'Composition');
    const selections = compositions.filter(
      ({ obj }) => (obj.spec as { pipeline: { input: { kind?: string } }[] }).pipeline[0]?.input.kind === 'Selection',
    );
    expect([compositions.length, selections.length]).toEqual(target === 'v1' ? [19, 0] : [19 + 11, 11]);
    for (const { path, obj } of compositions) {
      const pipeline = (obj.spec as { pipeline: { input: Record<string, unknown> }[] }).pipeline;
      expect(pipeline, path).toHaveLength(1);
      const v = pipeline[0]?.input.kind === 'Selection' ? selection : input;
      expect(v(pipeline[0]?.input as Record<string, unknown>).errors, path).toEqual([]);
    }
  });

  it('catches an unknown field (the check can fail)', () => {
    const xrd = objects.find(({ obj }) => obj.kind === 'CompositeResourceDefinition')?.obj as Record<string, unknown>;
    const broken = { ...xrd, spec: { ...(xrd.spec as object), claimNamez: {} } };
    expect(validate(broken).join('\n')).toContain('claimNamez');
  });
});
