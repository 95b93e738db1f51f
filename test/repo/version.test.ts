/**
 * One version source (issue 37, item 1): `lib/version.ts` is the release, package.json says the same, and no other
 * shipped file writes it: every image tag, package tag, default reference and `version` output is made from it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import pkg from '../../package.json';
import { ROOT } from '../../harness/crossplane/catalog';
import { DEFAULT_BACKEND_IMAGE } from '../../backend/deploy/bind-backend';
import { DEFAULT_FUNCTION_PACKAGE } from '../../compositions/function-ref';
import { KONNECTOR_VERSION } from '../../konnector/version';
import { PLUGIN_VERSION } from '../../cli/version';
import { KONNECTOR_IMAGE, VERSION } from '../../lib/version';

const SKIP = new Set(['node_modules', 'dist', '.git', 'bench', 'test', 'coverage', 'docs', 'schemas', 'testdata']);

/** Shipped sources: the TypeScript and scripts below the repository, not tests, docs or upstream schemas. */
function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!SKIP.has(name) && !name.startsWith('.')) out.push(...sources(path));
    } else if (/\.(ts|mts|mjs)$/.test(name) && !/\.test\.ts$/.test(name)) out.push(path);
  }
  return out;
}

/** `0.1.0` or `v0.1.0` as a whole (not inside `10.0.1.0`). */
function writtenAt(version: string): string[] {
  const bare = version.replace(/^v/, '').replaceAll('.', '\\.');
  const pattern = new RegExp(`(?<![\\d.])v?${bare}(?![\\d.])`);
  const found: string[] = [];
  for (const file of sources(ROOT)) {
    const rel = relative(ROOT, file);
    if (rel === join('lib', 'version.ts')) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (pattern.test(line)) found.push(`${rel}:${i + 1}: ${line.trim()}`);
      });
  }
  return found;
}

describe('the release version', () => {
  it("is package.json's", () => {
    expect(VERSION).toBe(`v${pkg.version}`);
  });

  it('is written in lib/version.ts only: the rest of the shipped code takes it from there', () => {
    expect(writtenAt(VERSION)).toEqual([]);
  });

  it('tags every image and package, and is what the konnector and the plugin report', () => {
    expect([DEFAULT_BACKEND_IMAGE, KONNECTOR_IMAGE, DEFAULT_FUNCTION_PACKAGE].map((r) => r.split(':').at(-1))).toEqual([
      VERSION,
      VERSION,
      VERSION,
    ]);
    expect([KONNECTOR_VERSION, PLUGIN_VERSION]).toEqual([VERSION, VERSION]);
  });

  it('finds a version written in a shipped file (the check can fail)', () => {
    // versitygw's version is written where its build is (harness/tools/versitygw.ts).
    expect(writtenAt('v1.2.0').some((x) => x.startsWith(join('harness', 'tools', 'versitygw.ts')))).toBe(true);
  });
});
