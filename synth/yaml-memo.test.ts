import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { toYaml } from './synth';
import { plainJson, YamlMemo } from './yaml-memo';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-yaml-memo-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

type Saved = { version: string; entries: Record<string, string> };

/** Replaces every remembered text with a marker, so a test can tell a memo's text from a new one. */
function mark(file: string): void {
  const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved;
  for (const k of Object.keys(saved.entries)) saved.entries[k] = `remembered\n`;
  writeFileSync(file, JSON.stringify(saved));
}

const doc = (replicas: number) => ({ apiVersion: 'apps/v1', kind: 'Deployment', metadata: { name: 'on' }, spec: { replicas } });

describe('the YAML memo', () => {
  it('gives toYaml’s text, reuses it next run for the same objects, and stringifies an edited object anew', () => {
    const file = join(tmp, 'edit.json');
    const first = new YamlMemo(file);
    expect(first.toYaml([doc(1)])).toBe(toYaml([doc(1)]));
    first.save();
    mark(file);
    const next = new YamlMemo(file);
    expect(next.toYaml([doc(1)])).toBe('remembered\n');
    expect(next.toYaml([doc(2)])).toBe(toYaml([doc(2)]));
    next.save();
    // A run keeps only what it used: both objects, the first as it was read.
    expect(Object.values((JSON.parse(readFileSync(file, 'utf8')) as Saved).entries).sort()).toEqual([toYaml([doc(2)]), 'remembered\n']);
  });

  it('reads a text once and then from the memo, and an edited text anew; what yaml warns of or refuses, every time', () => {
    const file = join(tmp, 'parse.json');
    const head = (plural: string) => `kind: CustomResourceDefinition\nspec:\n  names:\n    plural: ${plural}\n`;
    const first = new YamlMemo(file);
    expect(first.parse(head('foos'))).toEqual({ kind: 'CustomResourceDefinition', spec: { names: { plural: 'foos' } } });
    first.save();
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved;
    for (const k of Object.keys(saved.entries)) saved.entries[k] = '"remembered"';
    writeFileSync(file, JSON.stringify(saved));
    const next = new YamlMemo(file);
    expect(next.parse(head('foos'))).toBe('remembered');
    expect(next.parse(head('bars'))).toEqual({ kind: 'CustomResourceDefinition', spec: { names: { plural: 'bars' } } });
    expect(() => next.parse('a: [')).toThrow();
    expect(() => next.parse('a: [')).toThrow();
    // An unknown tag: yaml warns (a process warning) and reads a string; not remembered, so it warns every time.
    const warn = vi.spyOn(process, 'emitWarning').mockImplementation(() => {});
    try {
      expect(next.parse('a: !unknown x')).toEqual({ a: 'x' });
      expect(next.parse('a: !unknown x')).toEqual({ a: 'x' });
      expect(warn).toHaveBeenCalledTimes(2);
    } finally {
      warn.mockRestore();
    }
    next.save();
    expect(Object.keys((JSON.parse(readFileSync(file, 'utf8')) as Saved).entries)).toHaveLength(2);
  });

  it('keeps nothing from another yaml, other options or another toYaml', () => {
    const file = join(tmp, 'version.json');
    const memo = new YamlMemo(file);
    memo.toYaml([doc(1)]);
    memo.save();
    mark(file);
    const saved = JSON.parse(readFileSync(file, 'utf8')) as Saved;
    writeFileSync(file, JSON.stringify({ ...saved, version: 'another' }));
    expect(new YamlMemo(file).toYaml([doc(1)])).toBe(toYaml([doc(1)]));
  });

  it('stringifies every time what JSON cannot tell apart', () => {
    const file = join(tmp, 'plain.json');
    const odd = [{ a: Number.NaN }, { a: -0 }, { a: new Date(0) }, { a: [undefined] }, { a: new (class X {})() }, { a: 1n }];
    for (const o of odd) expect(plainJson(o), String(o.a)).toBe(false);
    expect(plainJson({ a: null, b: [1, 'x', true, { c: undefined }] })).toBe(true);
    const memo = new YamlMemo(file);
    // NaN and null have one JSON: the memo must not hand one's YAML out for the other.
    expect(memo.toYaml([{ a: null }])).toBe('a: null\n');
    expect(memo.toYaml([{ a: Number.NaN }])).toBe('a: .nan\n');
  });

  it('starts empty from a missing or broken file', () => {
    const file = join(tmp, 'broken.json');
    writeFileSync(file, '{"version":');
    expect(new YamlMemo(file).toYaml([doc(3)])).toBe(toYaml([doc(3)]));
    expect(new YamlMemo(join(tmp, 'missing', 'memo.json')).toYaml([doc(3)])).toBe(toYaml([doc(3)]));
  });
});
