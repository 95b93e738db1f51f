/**
 * "Add a backend" (docs/add-a-backend.md): the manual's third backend (a ConfigMap through provider-kubernetes) and the catalog entry that
 * uses it, pasted into a copy of the project, are all it takes — synth writes its XRD and Composition, and the
 * function (not rebuilt, not told about the backend) composes the claim through `crank render` into an Object
 * holding the ConfigMap, valid against provider-kubernetes' CRD.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { parseYaml, projectWith, ROOT, runSynth } from '../../harness/crossplane/catalog';
import { docExamples } from '../support/docs';
import { startFunctionProcess, type FunctionProcess } from '../../harness/parts/function-process';
import { crankRender, crankValidate } from '../../harness/tools/crank';

// Rendered documents are read field by field.
type Obj = Record<string, any>;

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-backend-'));
let fp: FunctionProcess;
beforeAll(async () => {
  fp = await startFunctionProcess(await bundleDeployable(ROOT, deployable('function')), ['--metrics-address', '']);
}, 300_000);
afterAll(async () => {
  await fp?.stop();
  rmSync(tmp, { recursive: true, force: true });
});

describe('adding a backend', () => {
  it('is one backend module plus a catalog entry: synthesized, composed by the unchanged function, valid', () => {
    const examples = docExamples();
    const backend = examples.get('backends/configmap.ts');
    const entry = examples.get('apis/catalog/featureflags.ts');
    expect(backend, 'docs/add-a-backend.md block backends/configmap.ts').toBeDefined();
    expect(entry, 'docs/add-a-backend.md block apis/catalog/featureflags.ts').toBeDefined();
    const project = projectWith({ 'backends/configmap.ts': backend as string, 'apis/catalog/featureflags.ts': entry as string }, tmp);

    const out = join(tmp, 'out');
    const r = runSynth(['--catalog', join(project, 'apis', 'catalog'), '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const pkg = join(out, 'packages', 'dataservices');
    expect(readdirSync(join(pkg, 'apis', 'featureflags')).sort()).toEqual(['composition-configmap.yaml', 'definition.yaml']);
    const composition = readFileSync(join(pkg, 'apis', 'featureflags', 'composition-configmap.yaml'), 'utf8');
    const [xrd] = parseYaml(readFileSync(join(pkg, 'apis', 'featureflags', 'definition.yaml'), 'utf8')) as Obj[];
    expect(xrd?.spec.defaultCompositionRef).toEqual({ name: 'configmap-featureflags' });
    // The plural the manual names (a kind ending in "s" gets none by default; "featureflagss" slipped through once).
    expect([xrd?.spec.names.plural, xrd?.spec.claimNames.plural]).toEqual(['xfeatureflags', 'featureflags']);
    const [claim] = parseYaml(readFileSync(join(pkg, 'examples', 'featureflags-configmap.yaml'), 'utf8')) as Obj[];

    const composite = {
      apiVersion: claim?.apiVersion,
      kind: `X${claim?.kind}`,
      metadata: {
        name: 'flags-x7k2p',
        labels: { 'crossplane.io/claim-name': 'flags', 'crossplane.io/claim-namespace': 'team-a' },
      },
      spec: claim?.spec,
    };
    const rendered = crankRender(inject('crank'), { composite, composition, functionPort: fp.port, dir: join(tmp, 'render') });
    expect(rendered.filter((d) => d.kind === 'Result' && d.severity === 'SEVERITY_FATAL')).toEqual([]);
    const object = rendered.find((d) => d.kind === 'Object') as Obj;
    expect(object.apiVersion).toBe('kubernetes.crossplane.io/v1alpha2');
    expect(object.spec.providerConfigRef).toEqual({ name: 'kubernetes-provider' });
    expect(object.spec.forProvider.manifest).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'flags', namespace: 'team-a' },
      data: { darkMode: 'on' },
    });

    const ext = join(tmp, 'provider-kubernetes.yaml');
    writeFileSync(
      ext,
      readdirSync(join(ROOT, 'schemas', 'provider-kubernetes'))
        .filter((f) => f.endsWith('.yaml'))
        .map((f) => `---\n${readFileSync(join(ROOT, 'schemas', 'provider-kubernetes', f), 'utf8').replace(/^---\n/, '')}`)
        .join('\n'),
    );
    const res = join(tmp, 'object.yaml');
    const { annotations: _, ...metadata } = object.metadata as Obj;
    writeFileSync(res, `---\n${JSON.stringify({ ...object, metadata: { ...metadata, name: 'flags-x7k2p-abcde' } })}\n`);
    const v = crankValidate(inject('crank'), ext, res);
    expect(v.status, v.stdout + v.stderr).toBe(0);
    expect(v.stdout).toContain('Total 1 resources: 0 missing schemas, 1 success cases, 0 failure cases');
  });
});
