/**
 * The folder layout the README promises, enforced: each folder imports only the folders its row of the README's
 * layout table lists under "may import", no two folders import each other, and the table itself has no cycle.
 * Tests (`*.test.ts`) may import anything; the table governs the code that ships.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalog';
import { readme, section as docSection } from '../support/docs';

/** The README's layout table: folder → the folders it may import (`anything` = no limit). */
function layout(): Map<string, Set<string> | 'anything'> {
  const section = docSection(readme(), '## Layout', 'README.md');
  const rows = new Map<string, Set<string> | 'anything'>();
  for (const line of section.split('\n')) {
    const m = /^\| `([a-z-]+)\/` \| [^|]+ \| ([^|]+) \|$/.exec(line.trim());
    if (!m) continue;
    const allowed = (m[2] as string).trim();
    if (allowed === 'anything') rows.set(m[1] as string, 'anything');
    else rows.set(m[1] as string, new Set([...allowed.matchAll(/`([a-z-]+)\/`/g)].map((x) => x[1] as string)));
  }
  if (rows.size === 0) throw new Error('the README layout table has no rows of the form | `folder/` | what | may import |');
  return rows;
}

const SKIP = new Set(['node_modules', 'dist', '.git', 'bench', 'test', 'coverage']);

function sources(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      // Dot-folders hold tool state and run output (.git, .sandbox with its synth output), not sources.
      if (!SKIP.has(name) && name !== 'testdata' && !name.startsWith('.')) out.push(...sources(path));
    } else if (/\.(ts|mts|mjs)$/.test(name) && !/\.test\.ts$|\.d\.mts$/.test(name)) out.push(path);
  }
  return out;
}

/** Every relative import of every shipped source file, as (from folder, to folder, file, specifier). */
function imports(): { from: string; to: string; file: string; spec: string }[] {
  const out = [];
  for (const file of sources(ROOT)) {
    const rel = relative(ROOT, file);
    if (!rel.includes('/')) continue; // vitest.config.ts and other root files
    const from = rel.split('/')[0] as string;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"](\.{1,2}\/[^'"]+)['"]/g)) {
      const target = relative(ROOT, resolve(dirname(file), m[1] as string));
      const to = target.split('/')[0] as string;
      if (to !== from) out.push({ from, to, file: rel, spec: m[1] as string });
    }
  }
  return out;
}

describe('folder imports', () => {
  const table = layout();

  it('every top-level source folder has a row in the README layout table', () => {
    const folders = readdirSync(ROOT).filter((d) => statSync(join(ROOT, d)).isDirectory() && !d.startsWith('.') && !SKIP.has(d));
    const shipped = folders.filter((d) => sources(join(ROOT, d)).length > 0);
    expect(shipped.filter((d) => !table.has(d))).toEqual([]);
  });

  it('each folder imports only what its row allows', () => {
    const forbidden = imports()
      .filter(({ from, to }) => {
        const allowed = table.get(from);
        return allowed !== 'anything' && !(allowed ?? new Set()).has(to);
      })
      .map(({ file, spec, to }) => `${file} imports ${spec} (${to}/)`);
    expect(forbidden).toEqual([]);
  });

  it('no two folders import each other, and the table has no cycle', () => {
    const edges = new Set(imports().map(({ from, to }) => `${from}>${to}`));
    expect([...edges].filter((e) => edges.has(e.split('>').reverse().join('>')))).toEqual([]);
    const deps = (f: string) => {
      const a = table.get(f);
      return a === 'anything' || !a ? [] : [...a];
    };
    const cyclic: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (path.includes(f)) return cyclic.push([...path, f].join(' → '));
      for (const d of deps(f)) visit(d, [...path, f]);
    };
    for (const f of table.keys()) if (table.get(f) !== 'anything') visit(f, []);
    expect(cyclic).toEqual([]);
  });
});
