/**
 * Messages meant for app clusters name what their reader can do, never a file of this repository: an app developer
 * reading a claim's condition, a binding's condition or `kubectl bind`'s output has no `dist/` or `docs/` (issue 38),
 * and neither has an operator who installed a release and reads the backend's conditions, errors and `--help`.
 * Every string the code of those parts holds is read (not comments, not imports), as the compiler parses it, and one
 * that names a repository path fails the test with its place. Web addresses may name anything.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';

/**
 * Whose messages reach app clusters: `kubectl bind` (cli), the konnector's conditions and errors (konnector, exports),
 * and the claims' conditions (the function, its recipes and the backends'); and operators: the bind backend's.
 */
const FOLDERS = ['cli', 'konnector', 'exports', 'functions', 'recipe', 'backends', 'backend'];
/** A folder of the repository with what follows it, or a Markdown file, as a word of a message. */
const REPOSITORY_PATH =
  /(?:^|[\s`'"(,:;=])((?:dist|docs|harness|test|schemas|scripts|node_modules|bench|sandbox)\/[\w./<>{}$-]*|[\w./-]+\.md\b)/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The repository paths named by the strings of a file's code, each with its line. */
export function repositoryPaths(file: string, text: string): string[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) || ts.isExportDeclaration(node) || ts.isImportTypeNode(node)) return;
    // releaseDoc('docs/x.md') is the published manual's web address (lib/version.ts), not a file the reader lacks.
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && node.expression.text === 'releaseDoc') return;
    const parts =
      ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)
        ? [node.text]
        : ts.isTemplateExpression(node)
          ? [node.head.text, ...node.templateSpans.map((s) => s.literal.text)]
          : [];
    for (const part of parts) {
      const path = REPOSITORY_PATH.exec(part.replace(/https?:\/\/\S+/g, ''))?.[1];
      if (path) found.push(`${file}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1}: ${path}`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

describe('messages meant for app clusters', () => {
  it('the check finds a path in a string or a template, and not in a comment, an import or a web address', () => {
    const code = [
      "import { x } from '../docs/x';",
      '// see docs/backups.md',
      "const a = 'apply dist/app-cluster/konnector/access/x.yaml';",
      'const b = `bind its user to the ClusterRole of ${f} (see docs/app-cluster-binding.md)`;',
      "const c = 'read https://example.org/docs/install.md first';",
      "const d = 'run kubectl bind again';",
      "const e = `see ${releaseDoc('docs/backups.md', 'restore')}`;",
    ].join('\n');
    expect(repositoryPaths('x.ts', code)).toEqual([
      'x.ts:3: dist/app-cluster/konnector/access/x.yaml',
      'x.ts:4: docs/app-cluster-binding.md',
    ]);
  });

  it('name no file of the repository', () => {
    const found = FOLDERS.flatMap((f) => sources(join(ROOT, f))).flatMap((path) =>
      repositoryPaths(relative(ROOT, path), readFileSync(path, 'utf8')),
    );
    expect(found, 'say what the reader can run or whom to ask, or link the published manual').toEqual([]);
  });
});
