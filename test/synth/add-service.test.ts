/**
 * "Add a data service": the manual's worked example (docs/add-a-data-service.md), pasted into a catalog folder beside the real catalog, is all
 * it takes to get an XRD, a composition, an example and an export template. The example is read from the manual, so
 * the docs cannot drift from what works.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { parseYaml, projectWith, runSynth } from '../../harness/crossplane/catalog';
import { docExampleError, docExamples } from '../support/docs';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-add-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The data-service example of "Add a data service" (the backend manual has its own catalog block). */
function readmeExample(): { file: string; code: string } {
  const code = docExamples().get('apis/catalog/kafka.ts');
  if (!code) throw new Error('docs/add-a-data-service.md has no "<!-- example: apis/catalog/kafka.ts -->" code block');
  return { file: 'kafka.ts', code };
}

/** The catalog folder of a project copy whose catalog holds the real modules plus `extra`. */
function catalogWith(extra: Record<string, string>): string {
  return join(
    projectWith(Object.fromEntries(Object.entries(extra).map(([f, code]) => [`apis/catalog/${f}`, code])), tmp),
    'apis',
    'catalog',
  );
}

describe('adding a data service', () => {
  it("synthesizes the manual's example with no other file edited", () => {
    const { file, code } = readmeExample();
    const out = join(tmp, 'out');
    const r = runSynth(['--catalog', catalogWith({ [file]: code }), '--out', out]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/synthesized 12 APIs/);
    const pkg = join(out, 'packages', 'dataservices');
    const [xrd] = parseYaml(readFileSync(join(pkg, 'apis', 'kafka', 'definition.yaml'), 'utf8')) as [
      { metadata: { name: string }; spec: { claimNames: unknown; defaultCompositionRef: unknown } },
    ];
    expect(xrd.metadata.name).toBe('xkafkainstances.anynines.com');
    expect(xrd.spec.claimNames).toEqual({ kind: 'KafkaInstance', plural: 'kafkainstances' });
    expect(xrd.spec.defaultCompositionRef).toEqual({ name: 'a9s-kafka' });
    const [composition] = parseYaml(readFileSync(join(pkg, 'apis', 'kafka', 'composition-a9s.yaml'), 'utf8')) as [
      { spec: { pipeline: { input: { parameters: unknown[]; providerConfig: unknown } }[] } },
    ];
    expect(composition.spec.pipeline[0]?.input.providerConfig).toEqual({ name: 'kafka-service-broker' });
    expect(composition.spec.pipeline[0]?.input.parameters).toContainEqual({ from: 'logRetentionHours', to: 'log_retention_hours' });
    const [example] = parseYaml(readFileSync(join(pkg, 'examples', 'kafka-a9s.yaml'), 'utf8')) as [
      { kind: string; spec: Record<string, unknown> },
    ];
    expect(example.kind).toBe('KafkaInstance');
    expect(example.spec.parameters).toEqual({ logRetentionHours: 72 });
    const [template] = parseYaml(readFileSync(join(out, 'control-plane', 'export-templates', 'kafkainstances.yaml'), 'utf8')) as [
      { spec: unknown },
    ];
    expect(template.spec).toEqual({ APIServiceSelector: { group: 'anynines.com', resource: 'kafkainstances', version: 'v1' } });
  });

  it('fails before writing anything when a definition is wrong, naming the service, the field and the fix', () => {
    const { file, code } = readmeExample();
    const broken = code.replace("cluster: ['small', 'medium', 'big']", "cluster: ['small', 'medium', 'huge']");
    expect(broken).not.toBe(code);
    const out = join(tmp, 'broken-out');
    const r = runSynth(['--catalog', catalogWith({ [file]: broken }), '--out', out]);
    expect(r.status).toBe(1);
    // One line, exactly what the README shows: the module throws as it is imported, inside synth's error handling.
    expect(r.stderr).toBe(`${docExampleError('apis/catalog/kafka.ts')}\n`);
    expect(() => readdirSync(out)).toThrow();
  });

  it('refuses two modules that define the same kind, naming both files', () => {
    const { code } = readmeExample();
    const twin = code.replace("name: 'kafka'", "name: 'kafka2'");
    const r = runSynth(['--catalog', catalogWith({ 'kafka.ts': code, 'kafka2.ts': twin }), '--out', join(tmp, 'twin-out')]);
    expect(r.status).toBe(1);
    expect(r.stderr).toMatch(/kafka2\.ts: kind "anynines\.com\/KafkaInstance" is already used by kafka\.ts/);
  });
});
