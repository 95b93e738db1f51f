/**
 * Errors keep their cause: where code wraps a caught error `e` into a new error whose message repeats it
 * (`${messageOf(e)}`, `${reason(e)}`, `${(e as Error).message}`, ...), the new error must carry `{ cause: e }`, so the
 * log shows the original's type and stack and the work loop finds a TerminalError beneath the wrap (isTerminal).
 * Checked in the folders whose code wraps errors for controllers and the plugin, and in the backend's controllers,
 * authentication and authorization; the backend's HTTP code is not yet held to it.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalog';

const FOLDERS = ['controller', 'konnector', 'cli', 'lib', 'exports', 'sandbox', 'backend/auth', 'backend/authz', 'backend/controllers'];
/** `${messageOf(e)}` and the other ways the code spells "the caught error's message" (also for `err`). */
const REPEATS_CAUGHT =
  /\$\{(?:messageOf|reason|apiMessage|describe)\((?:e|err)\)\}|\$\{\((?:e|err) as Error\)\.message\}|\$\{(?:e|err)\.message\}|\$\{(?:e|err) instanceof Error \? (?:e|err)\.message : String\((?:e|err)\)\}/;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return name.endsWith('.ts') && !name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The `new <X>Error(...)` expressions of a file (to the first `);` after it) that repeat `e` and drop it. */
export function wrapsWithoutCause(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/new (?:[A-Z][A-Za-z]*)?Error\(/g)) {
    const end = text.indexOf(');', m.index);
    const expr = text.slice(m.index, end < 0 ? undefined : end);
    if (REPEATS_CAUGHT.test(expr) && !/\bcause\b/.test(expr)) out.push(expr.split('\n')[0] as string);
  }
  return out;
}

describe('wrapped errors', () => {
  it('the check sees a wrap without its cause, and accepts one with it', () => {
    expect(wrapsWithoutCause('throw new Error(`cannot read x: ${messageOf(e)}`);')).toHaveLength(1);
    expect(wrapsWithoutCause('throw new CliError(`cannot read x: ${reason(e)}`, hint, ExitCode.Failed, { cause: e });')).toEqual([]);
    for (const repeat of [
      '${apiMessage(err)}',
      '${e.message}',
      '${(err as Error).message}',
      '${e instanceof Error ? e.message : String(e)}',
    ])
      expect(wrapsWithoutCause(`return new AccessTokenError('x', \`did not verify (${repeat})\`);`)).toHaveLength(1);
  });

  it(`keep the caught error as cause in ${FOLDERS.join('/, ')}/`, () => {
    const found = FOLDERS.flatMap((f) =>
      sources(join(ROOT, f)).flatMap((file) => wrapsWithoutCause(readFileSync(file, 'utf8')).map((w) => `${relative(ROOT, file)}: ${w}`)),
    );
    expect(found).toEqual([]);
  });
});
