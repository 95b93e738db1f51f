/**
 * The folder layout the README promises, enforced: each folder imports only the folders its row of the README's
 * layout table lists under "may import", and none of the packages the row names after "never" (the harness never
 * imports `vitest`); no two folders import each other, and the table itself has no cycle.
 * Tests (`*.test.ts`) may import anything; the table governs the code that ships.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';
import { readme, section as docSection } from '../support/docs';
import { NOT_SHIPPED, shippedSources } from '../support/sources';

/** One row of the layout table: the folders a folder may import (`anything` = no limit), the packages it never may. */
interface Row {
  readonly allowed: Set<string> | 'anything';
  readonly never: Set<string>;
}

/** The README's layout table: folder → its row. */
function layout(text: string): Map<string, Row> {
  const section = docSection(text, '## Layout', 'README.md');
  const rows = new Map<string, Row>();
  for (const line of section.split('\n')) {
    const m = /^\| `([a-z-]+)\/` \| [^|]+ \| ([^|]+) \|$/.exec(line.trim());
    if (!m) continue;
    const [folders, packages = ''] = (m[2] as string).trim().split(/;\s*never\s+/);
    const never = new Set([...packages.matchAll(/`([^`/]+)`/g)].map((x) => x[1] as string));
    if ((folders as string).trim() === 'anything') rows.set(m[1] as string, { allowed: 'anything', never });
    else
      rows.set(m[1] as string, { allowed: new Set([...(folders as string).matchAll(/`([a-z-]+)\/`/g)].map((x) => x[1] as string)), never });
  }
  if (rows.size === 0) throw new Error('the README layout table has no rows of the form | `folder/` | what | may import |');
  return rows;
}

interface Import {
  readonly from: string;
  /** The folder a relative import reaches, or the package of a bare one. */
  readonly to: string;
  readonly pkg: boolean;
  readonly file: string;
  readonly spec: string;
}

/** Every import of every shipped source file below `root` that leaves its folder: other folders and packages. */
function imports(root: string): Import[] {
  const out: Import[] = [];
  for (const file of shippedSources(root)) {
    const rel = relative(root, file);
    if (!rel.includes('/')) continue; // vitest.config.ts and other root files
    const from = rel.split('/')[0] as string;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(/(?:from\s+|import\s*\(\s*|import\s+)['"]([^'"]+)['"]/g)) {
      const spec = m[1] as string;
      if (/^\.{1,2}\//.test(spec)) {
        const to = relative(root, resolve(dirname(file), spec)).split('/')[0] as string;
        if (to !== from) out.push({ from, to, pkg: false, file: rel, spec });
      } else if (!spec.startsWith('.') && !spec.startsWith('node:')) {
        const to = spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : (spec.split('/')[0] as string);
        out.push({ from, to, pkg: true, file: rel, spec });
      }
    }
  }
  return out;
}

/** The imports of the tree at `root` that its README's table forbids, one line each. */
function violations(root: string, table: Map<string, Row>): string[] {
  return imports(root)
    .filter(({ from, to, pkg }) => {
      const row = table.get(from);
      if (pkg) return row?.never.has(to) ?? false;
      return row?.allowed !== 'anything' && !(row?.allowed ?? new Set()).has(to);
    })
    .map(({ file, spec, to, pkg }) => `${file} imports ${spec} (${pkg ? to : `${to}/`})`);
}

describe('folder imports', () => {
  const table = layout(readme());

  it('every top-level source folder has a row in the README layout table', () => {
    const folders = readdirSync(ROOT).filter((d) => statSync(join(ROOT, d)).isDirectory() && !d.startsWith('.') && !NOT_SHIPPED.has(d));
    const shipped = folders.filter((d) => shippedSources(join(ROOT, d)).length > 0);
    expect(shipped.filter((d) => !table.has(d))).toEqual([]);
  });

  it('each folder imports only what its row allows', () => {
    expect(violations(ROOT, table)).toEqual([]);
  });

  it('a forbidden import fails the check: a folder its row does not name, or a package it says never to import', () => {
    const root = mkdtempSync(join(tmpdir(), 'klutch-kit-imports-'));
    try {
      const write = (path: string, text: string) => {
        mkdirSync(dirname(join(root, path)), { recursive: true });
        writeFileSync(join(root, path), text);
      };
      const rules = layout(
        [
          '## Layout',
          '',
          '| folder | what lives there | may import |',
          '|---|---|---|',
          '| `lib/` | helpers | nothing |',
          '| `harness/` | real parts | `lib/`; never `vitest` |',
          '| `sandbox/` | the sandbox | anything |',
        ].join('\n'),
      );
      expect(rules.get('harness')).toEqual({ allowed: new Set(['lib']), never: new Set(['vitest']) });
      write('lib/a.ts', 'export const a = 1;\n');
      write('sandbox/s.ts', "import { h } from '../harness/h';\n");
      write('test/support/t.ts', 'export const t = 1;\n');
      write(
        'harness/h.ts',
        [
          "import { a } from '../lib/a';",
          "import { t } from '../test/support/t';",
          "import type { S } from '../sandbox/s';",
          "import { expect } from 'vitest';",
          "import { parse } from 'yaml';",
          'export const h = 1;',
        ].join('\n'),
      );
      // A test beside the code may import anything.
      write('harness/h.test.ts', "import { it } from 'vitest';\nimport { t } from '../test/support/t';\n");
      expect(violations(root, rules)).toEqual([
        'harness/h.ts imports ../test/support/t (test/)',
        'harness/h.ts imports ../sandbox/s (sandbox/)',
        'harness/h.ts imports vitest (vitest)',
      ]);
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });

  it('no two folders import each other, and the table has no cycle', () => {
    const edges = new Set(
      imports(ROOT)
        .filter((i) => !i.pkg)
        .map(({ from, to }) => `${from}>${to}`),
    );
    expect([...edges].filter((e) => edges.has(e.split('>').reverse().join('>')))).toEqual([]);
    const deps = (f: string) => {
      const a = table.get(f)?.allowed;
      return a === 'anything' || !a ? [] : [...a];
    };
    const cyclic: string[] = [];
    const visit = (f: string, path: string[]) => {
      if (path.includes(f)) return cyclic.push([...path, f].join(' → '));
      for (const d of deps(f)) visit(d, [...path, f]);
    };
    for (const f of table.keys()) if (table.get(f)?.allowed !== 'anything') visit(f, []);
    expect(cyclic).toEqual([]);
  });
});
