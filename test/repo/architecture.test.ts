/**
 * The way in stays true: every repository path that docs/architecture.md, controller/README.md and the decision index
 * name in backticks exists, the layer picture of docs/architecture.md is the README's Layout table, and
 * docs/decisions/README.md links every decision record exactly once and no file that is missing. A file moved or a
 * record added without its line fails here, naming it. Each check is a function of text (or of a folder), so the
 * last cases run them on made-up input and see them fail.
 */
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, posix } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';
import { readme, section } from '../support/docs';

/** The lines of a markdown text outside fenced code blocks. */
function prose(markdown: string): string[] {
  let fence = false;
  const out: string[] = [];
  for (const l of markdown.split('\n')) {
    if (l.trimStart().startsWith('```')) fence = !fence;
    else if (!fence) out.push(l);
  }
  return out;
}

/** `a.{b,c}.ts` → `a.b.ts`, `a.c.ts` (one pair of braces, as the manuals write them). */
function expandBraces(p: string): string[] {
  const m = /^([^{}]*)\{([^{}]*)\}([^{}]*)$/.exec(p);
  return m ? (m[2] as string).split(',').map((alt) => `${m[1]}${alt}${m[3]}`) : [p];
}

/**
 * The backticked spans of `markdown` (outside code blocks) that name a repository file or folder: a path whose first
 * segment is one of `folders` (`konnector/provider/export/syncer.ts`, `apis/catalog/`), or a file name ending in
 * `.ts`, `.mjs` or `.md`. Placeholders (`<thing>.controller.ts`, `docs/decisions/*.md`), API groups
 * (`klutch.anynines.com/v1alpha1`), URLs and commands are not paths: only letters, digits, `.`, `_`, `-`, `/` and one
 * pair of braces qualify.
 */
function repositoryPaths(markdown: string, folders: ReadonlySet<string>): string[] {
  const out: string[] = [];
  for (const line of prose(markdown))
    for (const m of line.matchAll(/`([^`]+)`/g))
      for (const p of expandBraces(m[1] as string)) {
        if (!/^[\w.-]+(\/[\w.-]+)*\/?$/.test(p)) continue;
        const top = p.split('/')[0] as string;
        if ((p.includes('/') && folders.has(top)) || (!p.includes('/') && /\.(ts|mjs|md)$/.test(p))) out.push(p);
      }
  return [...new Set(out)];
}

/**
 * The paths `markdown` names that do not exist: a path with a `/` below `root`, a bare file name in the document's
 * own folder (`docDir`, below `root`) or at `root`.
 */
function missingPaths(markdown: string, docDir: string, root: string, folders: ReadonlySet<string>): string[] {
  return repositoryPaths(markdown, folders).filter((p) =>
    p.includes('/') ? !existsSync(join(root, p)) : !existsSync(join(root, docDir, p)) && !existsSync(join(root, p)),
  );
}

/** The README's Layout table: folder → the folders it may import, or 'anything'. */
function layoutTable(readmeText: string): Map<string, Set<string> | 'anything'> {
  const rows = new Map<string, Set<string> | 'anything'>();
  for (const line of section(readmeText, '## Layout', 'README.md').split('\n')) {
    const m = /^\| `([a-z-]+)\/` \| [^|]+ \| ([^|]+) \|$/.exec(line.trim());
    if (!m) continue;
    const folders = ((m[2] as string).split(/;\s*never\s+/)[0] as string).trim();
    rows.set(
      m[1] as string,
      folders === 'anything' ? 'anything' : new Set([...folders.matchAll(/`([a-z-]+)\/`/g)].map((x) => x[1] as string)),
    );
  }
  if (rows.size === 0) throw new Error('the README layout table has no rows of the form | `folder/` | what | may import |');
  return rows;
}

/** The top-level folders a repository path may start with: the Layout table's, and docs/ and schemas/. */
function topFolders(readmeText: string): Set<string> {
  return new Set([...layoutTable(readmeText).keys(), 'docs', 'schemas']);
}

/** The arrows of the mermaid flowchart in `text` (`a --> b & c`): importer → what it imports; every node drawn is a key. */
function pictureEdges(text: string): Map<string, Set<string>> {
  const block = /```mermaid\n(flowchart[^\n]*\n[\s\S]*?)```/.exec(text)?.[1];
  if (!block) throw new Error('no ```mermaid flowchart block');
  const edges = new Map<string, Set<string>>();
  const node = (n: string) => edges.get(n) ?? edges.set(n, new Set()).get(n)!;
  for (const line of block.split('\n').slice(1)) {
    const m = /^\s*([a-z-]+)\s*-->\s*(.+)$/.exec(line);
    if (!m) {
      if (line.trim()) throw new Error(`a flowchart line that is not "folder --> folder & folder": ${line.trim()}`);
      continue;
    }
    for (const to of (m[2] as string).split('&').map((t) => t.trim())) {
      node(m[1] as string).add(to);
      node(to);
    }
  }
  return edges;
}

/** Where the picture and the table disagree: an arrow the table does not allow, an allowed import with no arrow. */
function pictureProblems(picture: Map<string, Set<string>>, table: Map<string, Set<string> | 'anything'>): string[] {
  const problems: string[] = [];
  for (const [from, drawn] of picture) {
    const allowed = table.get(from);
    if (allowed === undefined) problems.push(`${from}/ is drawn but has no row in the Layout table`);
    else if (allowed === 'anything') problems.push(`${from}/ may import anything: it has no place in the picture`);
    else {
      for (const to of drawn) if (!allowed.has(to)) problems.push(`${from} --> ${to}: the Layout table does not allow it`);
      for (const to of allowed) if (!drawn.has(to)) problems.push(`${from}/ may import ${to}/: no arrow ${from} --> ${to}`);
    }
  }
  return problems;
}

/** The relative link targets of a markdown text outside code blocks, without their `#anchor`. */
function relativeLinks(markdown: string): string[] {
  const out: string[] = [];
  for (const l of prose(markdown))
    for (const m of l.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = (m[1] as string).split('#')[0] as string;
      if (!/^[a-z]+:/.test(m[1] as string) && target !== '') out.push(target);
    }
  return out;
}

/**
 * What is wrong with the index `README.md` of a folder of decision records: a record (`*.md` beside it) it does not
 * link, or links more than once, and a link to a file that does not exist.
 */
function indexProblems(dir: string): string[] {
  const records = readdirSync(dir)
    .filter((f) => f.endsWith('.md') && f !== 'README.md')
    .sort();
  const links = relativeLinks(readFileSync(join(dir, 'README.md'), 'utf8')).map((l) => posix.normalize(l));
  const problems = links.filter((l) => !existsSync(join(dir, l))).map((l) => `links ${l}, which does not exist`);
  for (const r of records) {
    const n = links.filter((l) => l === r).length;
    if (n === 0) problems.push(`does not link ${r}`);
    else if (n > 1) problems.push(`links ${r} ${n} times`);
  }
  return problems;
}

const FOLDERS = topFolders(readme());
const WAY_IN = ['docs/architecture.md', 'controller/README.md', 'docs/decisions/README.md'];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

describe('the way in (docs/architecture.md, controller/README.md, the decision index)', () => {
  it.each(WAY_IN)('%s names only repository paths that exist', (file) => {
    expect(repositoryPaths(read(file), FOLDERS).length, `${file} names no path at all: is the check reading it?`).toBeGreaterThan(0);
    expect(missingPaths(read(file), dirname(file), ROOT, FOLDERS)).toEqual([]);
  });

  it("draws the README's Layout table as the layer picture of docs/architecture.md", () => {
    const picture = pictureEdges(section(read('docs/architecture.md'), '## Layers', 'docs/architecture.md'));
    expect(picture.size).toBeGreaterThan(5);
    expect(pictureProblems(picture, layoutTable(readme()))).toEqual([]);
  });

  it('docs/decisions/README.md links every record exactly once, and no missing file', () => {
    expect(indexProblems(join(ROOT, 'docs', 'decisions'))).toEqual([]);
  });

  it('the index has the four groups', () => {
    const headings = read('docs/decisions/README.md')
      .split('\n')
      .filter((l) => l.startsWith('## '));
    expect(headings).toEqual(['## Product design', '## Code conventions', '## Harness (test machinery)', '## Performance']);
  });
});

describe('the checks fail on made-up input', () => {
  it('a path that does not exist is named; placeholders, API groups and code blocks are not paths', () => {
    const text = [
      'Spec up → `konnector/provider/export/spec/spec.reconcile.ts` and `konnector/provider/export/spec/nowhere.ts`,',
      'then `backend/controllers/export.{controller,reconcile,imagined}.ts`, `lib/` and `gone.md`.',
      'Not paths: `<thing>.controller.ts`, `docs/decisions/*.md`, `klutch.anynines.com/v1alpha1`, `/export`, `--workers`.',
      '```',
      '`konnector/in-a-code-block.ts`',
      '```',
    ].join('\n');
    expect(repositoryPaths(text, FOLDERS)).toEqual([
      'konnector/provider/export/spec/spec.reconcile.ts',
      'konnector/provider/export/spec/nowhere.ts',
      'backend/controllers/export.controller.ts',
      'backend/controllers/export.reconcile.ts',
      'backend/controllers/export.imagined.ts',
      'lib/',
      'gone.md',
    ]);
    expect(missingPaths(text, 'docs', ROOT, FOLDERS)).toEqual([
      'konnector/provider/export/spec/nowhere.ts',
      'backend/controllers/export.imagined.ts',
      'gone.md',
    ]);
  });

  it('a record the index misses, one it links twice and a link to nothing are each named', () => {
    const dir = mkdtempSync(join(tmpdir(), 'decision-index-'));
    try {
      mkdirSync(join(dir, 'sub'));
      for (const f of ['kept.md', 'twice.md', 'forgotten.md', 'sub/other.md']) writeFileSync(join(dir, f), `# ${f}\n`);
      writeFileSync(
        join(dir, 'README.md'),
        [
          '# Decision records',
          '- [Kept](kept.md): one line.',
          '- [Twice](twice.md): one line, and [again](./twice.md#why).',
          '- [Gone](gone.md): a record that was deleted.',
          '- [Elsewhere](sub/other.md), [the web](https://example.com/x.md).',
          '```',
          '[in a code block](forgotten.md)',
          '```',
        ].join('\n'),
      );
      expect(indexProblems(dir)).toEqual(['links gone.md, which does not exist', 'does not link forgotten.md', 'links twice.md 2 times']);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('a layer picture with an arrow too many and one too few is named', () => {
    const table = layoutTable(
      [
        '## Layout',
        '| folder | what | may import |',
        '|---|---|---|',
        '| `lib/` | helpers | nothing |',
        '| `recipe/` | the contract | `lib/` |',
        '| `backends/` | one module each | `recipe/` |',
        '| `synth/` | the build | anything |',
      ].join('\n'),
    );
    const picture = pictureEdges('```mermaid\nflowchart TB\n    backends --> recipe & lib\n    synth --> lib\n```\n');
    expect(pictureProblems(picture, table)).toEqual([
      'backends --> lib: the Layout table does not allow it',
      'recipe/ may import lib/: no arrow recipe --> lib',
      'synth/ may import anything: it has no place in the picture',
    ]);
  });
});
