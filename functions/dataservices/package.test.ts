import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { stringify } from 'yaml';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { crank, crankValidate } from '../../harness/tools/crank';
import { inputOf } from '../../harness/crossplane/function-requests';
import { selectionFor } from '../../compositions/selection';
import { functionPackageObjects } from './package';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-fnpkg-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));
const yaml = (objs: unknown[]) => objs.map((o) => `---\n${stringify(o)}`).join('');

describe('functionPackageObjects', () => {
  const [meta, crd, selectionCrd] = functionPackageObjects() as [Record<string, any>, Record<string, any>, Record<string, any>];

  it('is a meta.pkg.crossplane.io/v1 Function, the Input CRD and the Selection CRD', () => {
    expect([meta.apiVersion, meta.kind, meta.metadata.name]).toEqual(['meta.pkg.crossplane.io/v1', 'Function', 'function-dataservices']);
    expect(crd.metadata.name).toBe('inputs.dataservices.fn.klutch.anynines.com');
    expect(crd.spec.versions.map((v: { name: string }) => v.name)).toEqual(['v1beta1']);
    expect(selectionCrd.metadata.name).toBe('selections.dataservices.fn.klutch.anynines.com');
  });

  it('crank validates every v2 Composition input (a Selection) against the Selection CRD, and refuses a broken one', async () => {
    writeFileSync(join(tmp, 'selection-ext.yaml'), yaml([selectionCrd]));
    const apis = await loadCatalog();
    const selections = apis.map((a) => ({ ...selectionFor(a), metadata: { name: a.name, namespace: 'default' } }));
    const { from: _, ...noFrom } = selections[0]!;
    const bad = { ...noFrom, metadata: { name: 'bad-no-from', namespace: 'default' } };
    writeFileSync(join(tmp, 'selections.yaml'), yaml([...selections, bad]));
    const r = crankValidate(inject('crank'), join(tmp, 'selection-ext.yaml'), join(tmp, 'selections.yaml'));
    expect(r.stdout).toContain(
      `Total ${selections.length + 1} resources: 0 missing schemas, ${selections.length} success cases, 1 failure cases`,
    );
    expect(r.stdout).toMatch(/\[x\].*bad-no-from/);
  });

  it('drops only the CEL rule Kubernetes cannot compile (it reads the untyped fields[].value)', () => {
    const rules = JSON.stringify(crd).match(/"rule":"[^"]*"/g) ?? [];
    expect(rules.some((r) => r.includes('self.value'))).toBe(false);
    // 3 transform rules × (fields, wrapper.fields, parameters, labels, related.item, related.rotation.second,
    // restoredBy.fields, rotation.switched, diagnostics.labels, errorsFrom.labels, waitsFor.labels, valueFrom.labels,
    // queue.labels, and the companions' fields, wrapper.fields and labels) + the one-of of providerConfig, of
    // wrapper.manifestProviderConfig, of related.match and related.revoke, of restoredBy's two matches, and of the
    // companions' two.
    expect(rules.length).toBe(56);
  });

  it('crank validates the meta object and every catalog composition input against the CRD', async () => {
    writeFileSync(join(tmp, 'ext.yaml'), yaml([crd]));
    const apis = await loadCatalog();
    const inputs = apis.flatMap((a) =>
      a.backendNames.map((b) => ({ ...inputOf(a, b), metadata: { name: `${b}-${a.name}`, namespace: 'default' } })),
    );
    const base = inputOf(apis[0] as never, apis[0]?.backendNames[0] as string);
    const field = base.fields[0] as { to: string; from?: string };
    const bad = [
      { ...base, metadata: { name: 'bad-provider-config', namespace: 'default' }, providerConfig: {} },
      // The CRD says "exactly one of from and value" with a oneOf (its CEL rule cannot read the untyped value).
      { ...base, metadata: { name: 'bad-both', namespace: 'default' }, fields: [{ ...field, value: 'x' }] },
      { ...base, metadata: { name: 'bad-neither', namespace: 'default' }, fields: [{ to: field.to }] },
    ];
    writeFileSync(join(tmp, 'inputs.yaml'), yaml([...inputs, ...bad]));
    const r = crankValidate(inject('crank'), join(tmp, 'ext.yaml'), join(tmp, 'inputs.yaml'));
    const failed = r.stdout.split('\n').filter((l) => l.includes('[x]'));
    expect([...new Set(failed.map((l) => /(bad-[a-z-]+)/.exec(l)?.[1]))].sort(), r.stdout).toEqual([
      'bad-both',
      'bad-neither',
      'bad-provider-config',
    ]);
    expect(r.stdout).toContain(`Total ${inputs.length + 3} resources: 0 missing schemas, ${inputs.length} success cases, 3 failure cases`);
    expect(r.stdout).toContain('set exactly one of name and fromFieldPath');

    writeFileSync(join(tmp, 'meta-ext.yaml'), yaml([]));
    const root = join(tmp, 'pkg');
    mkdirSync(root, { recursive: true });
    writeFileSync(join(root, 'crossplane.yaml'), yaml([meta]));
    writeFileSync(join(root, 'input.yaml'), yaml([crd]));
    const b = crank(inject('crank'), ['xpkg', 'build', '-f', root, '-o', join(tmp, 'fn.xpkg')]);
    expect(b.stderr).toBe('');
    expect(b.status).toBe(0);
  });
});
