/**
 * The synthesized package through the real crossplane CLI: `crank beta validate` evaluates the XRD schemas and their
 * CEL rules on every example claim and every create case, and `crank xpkg build` accepts the package.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { Api } from '../../apis/api';
import { crank, crankValidate } from '../tools/crank';
import { loadCases } from '../cases';
import type { ApiCases, CreateCase } from '../cases/types';
import { loadCatalog, ROOT, runSynth } from '../support/catalog';
import { exampleClaim, render, toYaml } from '../../synth/synth';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-crank-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

function claim(api: Api, name: string, c: Pick<CreateCase, 'backend' | 'spec'>): Record<string, unknown> {
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

describe('crank beta validate', () => {
  let apis: Api[];
  let cases: Map<string, ApiCases>;
  let results: Map<string, { ok: boolean; lines: string[] }>;
  const index = new Map<string, { api: Api; c: CreateCase }>();

  beforeAll(async () => {
    apis = await loadCatalog();
    cases = new Map((await loadCases(apis)).map((c) => [c.api, c]));
    const files = render({ apis, outdir: 'unused' });
    const xrds = [...files].filter(([p]) => p.endsWith('/definition.yaml')).map(([, t]) => t);
    writeFileSync(join(tmp, 'xrds.yaml'), xrds.join('---\n'));
    const resources: Record<string, unknown>[] = [];
    for (const api of apis) {
      // The examples exactly as synth writes them, then the cases.
      for (const b of api.backendNames) {
        const example = exampleClaim(api, b, 'v1');
        const name = `${api.name}-example-${b}`;
        index.set(name, { api, c: { name: `example ${b}`, reason: 'the shipped example', valid: true, spec: {} } });
        resources.push({ ...example, metadata: { name, namespace: 'default' } });
      }
      (cases.get(api.name)?.create ?? []).forEach((c, i) => {
        const name = `${api.name}-${i}`;
        index.set(name, { api, c });
        resources.push(claim(api, name, c));
      });
    }
    writeFileSync(join(tmp, 'claims.yaml'), toYaml(resources));
    results = verdicts(crankValidate(inject('crank'), join(tmp, 'xrds.yaml'), join(tmp, 'claims.yaml')).stdout);
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

describe('crank xpkg build', () => {
  it('accepts the Configuration package with its examples', () => {
    const out = join(tmp, 'dist');
    expect(runSynth(['--out', out, '--quiet']).status).toBe(0);
    const root = join(out, 'packages', 'dataservices');
    const file = join(tmp, 'dataservices.xpkg');
    const r = crank(inject('crank'), ['xpkg', 'build', '-f', root, '-e', join(root, 'examples'), '-o', file]);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(existsSync(file) && statSync(file).size).toBeGreaterThan(0);
    // The package is a docker-save tarball whose layers hold package.yaml and the examples.
    const listing = execFileSync('tar', ['-tf', file], { encoding: 'utf8' });
    expect(listing).toContain('manifest.json');
  });
});
