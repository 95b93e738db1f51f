/**
 * "Add a data service": the README's worked example, pasted into a catalog folder beside the real catalog, is all
 * it takes to get an XRD, a composition, an example and an export template. The example is read from README.md, so
 * the README cannot drift from what works.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { CATALOG_DIR, parseYaml, ROOT, runSynth } from '../support/catalog';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-add-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** The code block that follows `<!-- example: apis/catalog/<file> -->` in README.md. */
function readmeExample(): { file: string; code: string } {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const m = /<!-- example: apis\/catalog\/(\S+) -->\s*```ts\n([\s\S]*?)```/.exec(readme);
  if (!m) throw new Error('README.md has no "<!-- example: apis/catalog/... -->" code block');
  return { file: m[1] as string, code: m[2] as string };
}

/**
 * A copy of the project's apis/ folder made of symlinks, whose catalog holds the real modules plus `extra`:
 * the same as pasting `extra` into apis/catalog/, without touching the working tree other tests read.
 */
function catalogWith(extra: Record<string, string>): string {
  const apis = join(mkdtempSync(join(tmp, 'project-')), 'apis');
  mkdirSync(join(apis, 'catalog'), { recursive: true });
  for (const f of readdirSync(join(ROOT, 'apis'))) if (f !== 'catalog') symlinkSync(join(ROOT, 'apis', f), join(apis, f));
  for (const f of readdirSync(CATALOG_DIR)) symlinkSync(join(CATALOG_DIR, f), join(apis, 'catalog', f));
  for (const [f, code] of Object.entries(extra)) writeFileSync(join(apis, 'catalog', f), code);
  return join(apis, 'catalog');
}

describe('adding a data service', () => {
  it('synthesizes the README example with no other file edited', () => {
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
    expect(r.stderr).toContain('data service "kafka"');
    expect(r.stderr).toContain('a9s.plans["kafka-cluster-huge-ssl"].size');
    expect(r.stderr).toContain('add the size to sizes');
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
