/**
 * SECURITY.md promises nothing it does not prove: every file it names as a proof exists, and every test it quotes
 * after a file — `path` ("title ...") — is a test of that file, so renaming or deleting the test that proves a
 * boundary cannot leave the promise standing on nothing (issue 34's acceptance).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';

const squash = (s: string) => s.replace(/\s+/g, ' ').trim();
const security = squash(readFileSync(join(ROOT, 'SECURITY.md'), 'utf8'));

/** A backticked repository path of a file SECURITY.md names (no glob, no flag, no object name). */
const FILE = /`((?:[\w.-]+\/)+[\w.-]+\.(?:ts|md|yaml|json))`/g;

/** The names of the tests and suites of a test file, whitespace squashed, as vitest prints them. */
function titles(file: string): string[] {
  const text = readFileSync(join(ROOT, file), 'utf8');
  const out: string[] = [];
  for (const m of text.matchAll(/\b(?:it|test|describe)(?:\.each\([\s\S]*?\))?\(\s*(['"`])((?:\\.|(?!\1)[\s\S])*?)\1/g))
    out.push(squash((m[2] as string).replace(/\\(['"`])/g, '$1')));
  // it.each's %s: a table row's first value, as vitest puts it into the name.
  for (const m of text.matchAll(/^\s*\[\s*(['"`])((?:\\.|(?!\1).)*?)\1,/gm)) out.push(squash(m[2] as string));
  return out;
}

/** Each test quoted after a file — `file` ("a test", "another ...") — with the quote's parts between its elisions. */
function quotedProofs(): { file: string; quote: string }[] {
  const out: { file: string; quote: string }[] = [];
  for (const m of security.matchAll(/`((?:[\w.-]+\/)+[\w.-]+\.test\.ts)` \(("[^"]+"(?:, "[^"]+")*)/g))
    for (const q of (m[2] as string).matchAll(/"([^"]+)"/g)) out.push({ file: m[1] as string, quote: q[1] as string });
  return out;
}

/** Whether `title` holds the quote's parts, in order (an elision, "..." or "…", stands for any text). */
function holds(title: string, quote: string): boolean {
  let at = 0;
  for (const part of quote.split(/\s*(?:\.\.\.|…),?\s*/).filter(Boolean)) {
    const i = title.indexOf(part, at);
    if (i < 0) return false;
    at = i + part.length;
  }
  return true;
}

describe('SECURITY.md', () => {
  it('names as proofs only files that exist', () => {
    const named = [...new Set([...security.matchAll(FILE)].map((m) => m[1] as string))];
    expect(named.length).toBeGreaterThan(20);
    expect(named.filter((f) => !existsSync(join(ROOT, f)))).toEqual([]);
  });

  it('quotes only tests that the file it names holds', () => {
    const proofs = quotedProofs();
    expect(proofs.length).toBeGreaterThan(15);
    const missing = proofs.filter(({ file, quote }) => existsSync(join(ROOT, file)) && !titles(file).some((t) => holds(t, quote)));
    expect(missing.map(({ file, quote }) => `${file}: "${quote}"`)).toEqual([]);
  });

  it('reads a quote that is no longer a test as missing', () => {
    const file = 'test/cluster/app-cluster-binding.test.ts';
    expect(titles(file).some((t) => holds(t, "attack: konnector overrides outside the operator's allowlist ..."))).toBe(true);
    expect(titles(file).some((t) => holds(t, 'attack: konnector overrides ... nothing refuses'))).toBe(false);
    expect(titles(file).some((t) => holds(t, 'names its root namespace injectively ..., fences it with a NetworkPolicy'))).toBe(true);
  });
});
