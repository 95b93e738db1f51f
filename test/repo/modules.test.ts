/**
 * Three guards beside the folder rule (imports.test.ts), over every shipped source file:
 * - no import cycle between files: a module that imports, at run time, one that imports it back sees the other's
 *   exports undefined while they load (`import type` is erased and forms no cycle);
 * - no exported name declared by two modules: an editor's auto-import then picks one of two `installCrds` or two
 *   `Clients` at random, and a copy hides behind a name that looks like the one everybody uses;
 * - no export that no file imports, and no file nothing reaches (knip, whose entry points are knip.json's: the
 *   programs, the catalog's public API in apis/index.ts, the benches and what is loaded by path): a dead export is
 *   read as an interface someone relies on, and keeps code alive that nothing runs.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';
import { shippedSources } from '../support/sources';

/**
 * Names more than one module may declare, each with its reason: `main` is every entry point's, and
 * `functions/dataservices/grpc-js-unused.ts` stands in for a package (the bundle aliases `@grpc/grpc-js` to it), so
 * its names are that package's.
 */
const SHARED_NAMES = new Set(['main']);
const STAND_IN_MODULES = new Set(['functions/dataservices/grpc-js-unused.ts']);

interface Module {
  /** The files it imports at run time (relative imports only: packages cannot import us back). */
  readonly imports: string[];
  /** The names it declares with `export` (not re-exports: those name a declaration elsewhere). */
  readonly exported: Set<string>;
}

/** The file a relative import names, as the bundler resolves it (an extension-less path, `.js` for `.ts`, a folder). */
function resolveImport(from: string, spec: string): string | undefined {
  const base = resolve(dirname(from), spec);
  const candidates = [base, `${base}.ts`, `${base}.mts`, base.replace(/\.js$/, '.ts'), join(base, 'index.ts')];
  return candidates.find((c) => existsSync(c) && statSync(c).isFile());
}

function readModule(file: string): Module {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const imports: string[] = [];
  const exported = new Set<string>();
  for (const s of source.statements) {
    if ((ts.isImportDeclaration(s) || ts.isExportDeclaration(s)) && s.moduleSpecifier && ts.isStringLiteral(s.moduleSpecifier)) {
      const typeOnly = ts.isImportDeclaration(s)
        ? !!s.importClause?.isTypeOnly ||
          (!!s.importClause &&
            !s.importClause.name &&
            !!s.importClause.namedBindings &&
            ts.isNamedImports(s.importClause.namedBindings) &&
            s.importClause.namedBindings.elements.length > 0 &&
            s.importClause.namedBindings.elements.every((e) => e.isTypeOnly))
        : s.isTypeOnly;
      const target = s.moduleSpecifier.text.startsWith('.') ? resolveImport(file, s.moduleSpecifier.text) : undefined;
      if (target && !typeOnly) imports.push(target);
      continue;
    }
    const modifiers = ts.canHaveModifiers(s) ? ts.getModifiers(s) : undefined;
    if (!modifiers?.some((m) => m.kind === ts.SyntaxKind.ExportKeyword)) continue;
    if (ts.isVariableStatement(s)) {
      for (const d of s.declarationList.declarations) if (ts.isIdentifier(d.name)) exported.add(d.name.text);
    } else if (
      (ts.isFunctionDeclaration(s) ||
        ts.isClassDeclaration(s) ||
        ts.isInterfaceDeclaration(s) ||
        ts.isTypeAliasDeclaration(s) ||
        ts.isEnumDeclaration(s)) &&
      s.name
    ) {
      exported.add(s.name.text);
    }
  }
  return { imports, exported };
}

/** What knip reports of the tree at `root` (its knip.json): unused files, exports and exported types; '' for none. */
export function unusedExports(root: string): string {
  const knip = join(ROOT, 'node_modules', 'knip', 'bin', 'knip.js');
  const r = spawnSync(process.execPath, [knip, '--include', 'files,exports,types', '--no-progress', '--reporter', 'compact'], {
    cwd: root,
    encoding: 'utf8',
  });
  if (r.status !== 0 && r.status !== 1) throw new Error(`knip ended with ${r.status}: ${r.stderr}`);
  return `${r.stdout}${r.stderr}`.trim();
}

function modules(root: string): Map<string, Module> {
  return new Map(shippedSources(root).map((f) => [f, readModule(f)]));
}

/** The import cycles (strongly connected components of more than one file, or a file importing itself), as paths. */
export function importCycles(root: string): string[][] {
  const graph = modules(root);
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const cycles: string[][] = [];
  let next = 0;
  // Tarjan's algorithm; the graph has a few hundred files, so recursion depth is no concern.
  const visit = (v: string) => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v)?.imports ?? []) {
      if (!graph.has(w)) continue;
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, index.get(w)!));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(relative(root, w));
    } while (w !== v);
    if (component.length > 1 || graph.get(v)!.imports.includes(v)) cycles.push(component.sort());
  };
  for (const f of graph.keys()) if (!index.has(f)) visit(f);
  return cycles;
}

/** Each exported name declared by more than one module (but SHARED_NAMES and stand-ins), with its modules. */
export function sharedExports(root: string): string[] {
  const where = new Map<string, string[]>();
  for (const [file, m] of modules(root)) {
    const rel = relative(root, file);
    if (!rel.includes('/') || STAND_IN_MODULES.has(rel)) continue; // root files: configs
    for (const name of m.exported) if (!SHARED_NAMES.has(name)) where.set(name, [...(where.get(name) ?? []), rel]);
  }
  return [...where]
    .filter(([, files]) => files.length > 1)
    .map(([name, files]) => `${name}: ${files.sort().join(', ')}`)
    .sort();
}

/** Runs `check` on a synthetic tree of `files` (path → text) in a folder of its own, removed afterwards. */
function inTree(files: Readonly<Record<string, string>>, check: (root: string) => void): void {
  const root = mkdtempSync(join(tmpdir(), 'klutch-kit-modules-'));
  try {
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(dirname(join(root, path)), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    check(root);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
}

describe('modules', () => {
  it('import no cycle: no file imports, at run time, a file that imports it back', () => {
    expect(importCycles(ROOT)).toEqual([]);
  });

  it('declare each exported name once: two modules do not export one name', () => {
    expect(sharedExports(ROOT)).toEqual([]);
  });

  it('export nothing that no file imports, and keep no file that nothing reaches (knip)', () => {
    expect(unusedExports(ROOT), 'remove the export (or the code), or name a new entry point in knip.json').toBe('');
  });

  it("an export no file imports and a file nothing reaches fail the knip guard; an entry point's exports do not", () => {
    const tree = {
      'package.json': JSON.stringify({ name: 'knip-guard', private: true, type: 'module' }),
      'knip.json': JSON.stringify({ entry: ['main.ts'], project: ['**/*.ts'] }),
      'main.ts': "import { used } from './lib/a';\nexport const fromEntry = used;\n",
      'lib/a.ts': 'export const used = 1;\nexport const dead = 2;\n',
      'lib/orphan.ts': 'export const nobody = 3;\n',
    };
    inTree(tree, (root) => {
      const report = unusedExports(root);
      expect(report).toContain('lib/orphan.ts');
      expect(report).toMatch(/lib\/a\.ts: dead/);
      expect(report).not.toMatch(/\bused\b/);
      expect(report).not.toContain('fromEntry');
    });
  });

  it('a cycle and a name declared twice fail the guards; type-only imports, re-exports and main do not', () => {
    const tree = {
      'harness/node/a.ts': "import { b } from './b';\nexport const a = () => b;\nexport function main() {}\n",
      'harness/node/b.ts': "import { a } from './a.ts';\nexport const b = () => a;\nexport interface Clients { x: 1 }\n",
      'harness/node/c.ts': "import type { d } from './d';\nexport const c = 1;\nexport type D = typeof d;\n",
      'harness/node/d.ts': "import { c } from './c';\nexport const d = c;\nexport { c };\n",
      'backend/kube.ts': 'export interface Clients { y: 2 }\nexport function main() {}\n',
      'backend/kube.test.ts': "import { main } from './kube';\nexport const Clients = main;\n",
    };
    inTree(tree, (root) => {
      expect(importCycles(root)).toEqual([['harness/node/a.ts', 'harness/node/b.ts']]);
      expect(sharedExports(root)).toEqual(['Clients: backend/kube.ts, harness/node/b.ts']);
    });
  });
});
