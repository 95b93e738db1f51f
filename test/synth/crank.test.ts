/**
 * The synthesized package through the real crossplane CLI of each target's line: `crank beta validate` evaluates the
 * XRD schemas and their CEL rules on every example and every create case (v1: claims, with crank v1.20; v2: namespaced
 * XRs, with crank v2), and `crank xpkg build` accepts the package.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Api, CrossplaneTarget } from '../../apis/api';
import { crank, crankValidate } from '../../harness/tools/crank';
import { loadCases } from '../cases';
import type { ApiCases, CreateCase } from '../cases/types';
import { loadCatalog, runSynth } from '../../harness/crossplane/catalog';
import { exampleClaim, render, toYaml } from '../../synth/synth';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-crank-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const TARGETS: readonly CrossplaneTarget[] = ['v1', 'v2'];
/** The crank of each target: v1.20 for the claims package, v2 for the namespaced XRs. */
const bin = (target: CrossplaneTarget) => inject(target === 'v1' ? 'crank' : 'crankV2');

/**
 * A case as a claim (v1) or as a namespaced XR (v2): the same document, Klutch's `spec.compositionRef` naming the
 * backend (on v2 a field of the API that the selection Composition reads).
 */
function claim(api: Api, name: string, c: Pick<CreateCase, 'backend' | 'spec'>, _target: CrossplaneTarget): Record<string, unknown> {
  return {
    apiVersion: api.apiVersion,
    kind: api.kind,
    metadata: { name, namespace: 'default' },
    spec: { ...c.spec, ...(c.backend ? { compositionRef: { name: api.compositionName(c.backend) } } : {}) },
  };
}

/** crank's verdict per resource name: the lines that name it, and whether it validated. */
function verdicts(output: string): Map<string, { ok: boolean; lines: string[] }> {
  const out = new Map<string, { ok: boolean; lines: string[] }>();
  for (const line of output.split('\n')) {
    const m = /^\[(.)\] .*?, Kind=\w+, (\S+) (validated successfully|:)/.exec(line);
    if (!m) continue;
    const v = out.get(m[2] as string) ?? { ok: true, lines: [] };
    v.lines.push(line);
    if (m[1] !== '✓') v.ok = false;
    out.set(m[2] as string, v);
  }
  return out;
}

describe.each(TARGETS)('crank beta validate (%s)', (target) => {
  let apis: Api[];
  let cases: Map<string, ApiCases>;
  let results: Map<string, { ok: boolean; lines: string[] }>;
  const index = new Map<string, { api: Api; c: CreateCase }>();

  beforeAll(async () => {
    apis = await loadCatalog();
    cases = new Map((await loadCases(apis)).map((c) => [c.api, c]));
    const files = render({ apis, outdir: 'unused', target });
    const xrds = [...files].filter(([p]) => p.endsWith('/definition.yaml')).map(([, t]) => t);
    writeFileSync(join(tmp, `xrds-${target}.yaml`), xrds.join('---\n'));
    const resources: Record<string, unknown>[] = [];
    for (const api of apis) {
      // The examples exactly as synth writes them, then the cases.
      for (const b of api.backendNames) {
        const example = exampleClaim(api, b, target);
        const name = `${api.name}-example-${b}`;
        index.set(name, { api, c: { name: `example ${b}`, reason: 'the shipped example', valid: true, spec: {} } });
        resources.push({ ...example, metadata: { name, namespace: 'default' } });
      }
      (cases.get(api.name)?.create ?? []).forEach((c, i) => {
        const name = `${api.name}-${i}`;
        index.set(name, { api, c });
        resources.push(claim(api, name, c, target));
      });
    }
    writeFileSync(join(tmp, `claims-${target}.yaml`), toYaml(resources));
    const v = crankValidate(bin(target), join(tmp, `xrds-${target}.yaml`), join(tmp, `claims-${target}.yaml`), target);
    results = verdicts(v.stdout);
  });

  it('has create cases for every API', () => {
    for (const api of apis) expect(cases.get(api.name)?.create.length ?? 0, api.name).toBeGreaterThan(0);
  });

  it('accepts every valid claim and rejects every invalid one, for the reason the case gives', () => {
    const wrong: string[] = [];
    for (const [name, { api, c }] of index) {
      const v = results.get(name);
      if (!v) {
        wrong.push(`${api.name} "${c.name}": crank reported nothing`);
      } else if (v.ok !== c.valid) {
        wrong.push(
          `${api.name} "${c.name}" (${c.reason}): expected ${c.valid ? 'valid' : 'invalid'}, crank said:\n  ${v.lines.join('\n  ')}`,
        );
      } else if (!c.valid && c.error && !v.lines.some((l) => l.includes(c.error as string))) {
        wrong.push(`${api.name} "${c.name}": rejected, but not with "${c.error}":\n  ${v.lines.join('\n  ')}`);
      }
    }
    expect(wrong).toEqual([]);
  });
});

describe.each(TARGETS)('crank xpkg build (%s)', (target) => {
  it('accepts the Configuration package with its examples', () => {
    const out = join(tmp, `dist-${target}`);
    expect(runSynth(['--out', out, '--crossplane', target, '--quiet']).status).toBe(0);
    const root = join(out, 'packages', 'dataservices');
    const file = join(tmp, `dataservices-${target}.xpkg`);
    const r = crank(bin(target), ['xpkg', 'build', '-f', root, '-e', join(root, 'examples'), '-o', file]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(existsSync(file) && statSync(file).size).toBeGreaterThan(0);
    // The package is a docker-save tarball whose layers hold package.yaml and the examples.
    const listing = execFileSync('tar', ['-tf', file], { encoding: 'utf8' });
    expect(listing).toContain('manifest.json');
  });
});
