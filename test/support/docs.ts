/**
 * The user documentation as tests read it: the README (the front door) and the per-part manuals in `docs/<part>.md`
 * it links. Tests that check what the docs claim (flag tables, examples, the layout) read them through here, so a
 * section can move between files without each test knowing where it went.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { envVariable, type FlagTable } from '../../lib/flags';
import { ROOT } from '../../harness/crossplane/catalog';

/** README.md. */
export function readme(): string {
  return readFileSync(join(ROOT, 'README.md'), 'utf8');
}

/** The manuals: `docs/<name>.md` (the decision records under `docs/decisions/` are not among them), by name. */
export function manuals(): Map<string, string> {
  const dir = join(ROOT, 'docs');
  const out = new Map<string, string>();
  for (const f of readdirSync(dir).sort()) if (f.endsWith('.md')) out.set(f.slice(0, -3), readFileSync(join(dir, f), 'utf8'));
  return out;
}

/** One manual, `docs/<name>.md`; a missing one names the file. */
export function manual(name: string): string {
  const text = manuals().get(name);
  if (text === undefined) throw new Error(`docs/${name}.md is missing`);
  return text;
}

/** The section of `text` under the heading `heading` (e.g. `## Layout`), up to the next heading of that level or higher. */
export function section(text: string, heading: string, file = 'the document'): string {
  const level = /^#+/.exec(heading)?.[0].length ?? 0;
  const lines = text.split('\n');
  const start = lines.findIndex((l) => l === heading);
  if (level === 0 || start < 0) throw new Error(`${file} has no "${heading}" section`);
  let fence = false;
  let end = lines.length;
  for (let i = start + 1; i < lines.length; i++) {
    const l = lines[i] as string;
    if (l.startsWith('```')) fence = !fence;
    const h = fence ? undefined : /^(#+) /.exec(l);
    if (h && (h[1] as string).length <= level) {
      end = i;
      break;
    }
  }
  return lines.slice(start, end).join('\n');
}

/** Every document a user reads: README.md and the manuals, by path below the project. */
function documents(): Map<string, string> {
  return new Map([['README.md', readme()], ...[...manuals()].map(([n, t]) => [`docs/${n}.md`, t] as [string, string])]);
}

/** The code blocks marked `<!-- example: <path> -->` in the README and the manuals, by path. */
export function docExamples(): Map<string, string> {
  const out = new Map<string, string>();
  for (const [doc, text] of documents())
    for (const m of text.matchAll(/<!-- example: (\S+) -->\s*```ts\n([\s\S]*?)```/g)) {
      if (out.has(m[1] as string)) throw new Error(`${doc}: a second "<!-- example: ${m[1]} -->" block`);
      out.set(m[1] as string, m[2] as string);
    }
  return out;
}

/** The one-line block marked `<!-- example error: <path> -->` in the README or a manual. */
export function docExampleError(path: string): string {
  const re = new RegExp(`<!-- example error: ${path.replaceAll('.', '\\.')} -->\\s*\`\`\`\\n([^\\n]+)\\n\`\`\``);
  for (const text of documents().values()) {
    const m = re.exec(text);
    if (m) return m[1] as string;
  }
  throw new Error(`neither README.md nor docs/*.md has a "<!-- example error: ${path} -->" block`);
}

/**
 * What a manual's flag table gets wrong about a process's flag table (lib/flags.ts): a flag without a row (a row is a
 * table line whose first cell names `--flag`), or a row without the flag's environment variable or default.
 * Backticks are ignored, so a manual may set parts of a default in code.
 */
export function undocumentedFlags(text: string, table: FlagTable): string[] {
  const rows = text.split('\n').filter((l) => l.startsWith('|'));
  const problems: string[] = [];
  for (const f of table.flags) {
    const name = new RegExp(`\`(-[a-zA-Z] [^\`]*\`, \`|-[a-zA-Z]\`, \`)?--${f.name}[ \`]`);
    const row = rows.find((r) => name.test(r.split(' | ')[0] as string));
    if (!row) {
      problems.push(`--${f.name}: no row`);
      continue;
    }
    const plain = row.replaceAll('`', '');
    const variable = envVariable(table, f);
    if (variable && !plain.includes(variable)) problems.push(`--${f.name}: its row does not name ${variable}`);
    if (f.default && !plain.includes(f.default)) problems.push(`--${f.name}: its row does not give the default ${f.default}`);
  }
  return problems;
}
