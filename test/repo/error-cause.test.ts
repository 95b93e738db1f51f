/**
 * Errors keep their cause: where code wraps a caught error `e` into a new error whose message repeats it
 * (`${messageOf(e)}`, `${reason(e)}`, `${(e as Error).message}`, ...), the new error must carry `{ cause: e }`, so the
 * log shows the original's type and stack and the work loop finds a TerminalError beneath the wrap (isTerminal).
 * And a log line carries a failure as pino's `err` with the Error itself, never its message or a string: pino's err
 * serializer writes the type, stack and cause only of an Error. Checked in every folder of code that runs.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';

const FOLDERS = ['controller', 'konnector', 'cli', 'lib', 'exports', 'sandbox', 'backend', 'functions', 'recipe', 'backends', 'monitoring'];
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

/**
 * The `err` values of a file's log calls (`log.warn({ ..., err: x }, ...)`) that are not a caught error: allowed are
 * the names a caught error goes by (`e`, `err`, `error`, `cause`) and `x instanceof Error ? x : new Error(...)`.
 */
export function errNotAnError(text: string): string[] {
  const out: string[] = [];
  for (const m of text.matchAll(/\.(?:trace|debug|info|warn|error|fatal)\(\s*\{[^}]*?\berr: ([^,}\n]+)/g)) {
    const value = (m[1] as string).trim();
    if (!/^(?:e|err|error|cause)$/.test(value) && !/^(\w+) instanceof Error \? \1 : new Error\(/.test(value)) out.push(`err: ${value}`);
  }
  return out;
}

const sourcesOf = (folders: readonly string[]) => folders.flatMap((f) => sources(join(ROOT, f)));

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
    const found = sourcesOf(FOLDERS).flatMap((file) =>
      wrapsWithoutCause(readFileSync(file, 'utf8')).map((w) => `${relative(ROOT, file)}: ${w}`),
    );
    expect(found).toEqual([]);
  });
});

describe("pino's err", () => {
  it('the check sees a message or string logged as err, and accepts the caught error', () => {
    expect(errNotAnError("log.error({ step, err: state.problem, retryInMs }, 'failed');")).toEqual(['err: state.problem']);
    expect(errNotAnError("ctx.log.warn({ err: messageOf(e) }, 'x');")).toEqual(['err: messageOf(e)']);
    expect(errNotAnError("d.log.info({\n  route,\n  err: e.message,\n}, 'refused');")).toEqual(['err: e.message']);
    expect(errNotAnError("log.error({ err: e }, 'x'); log.warn({ n, err: e instanceof Error ? e : new Error(String(e)) }, 'y');")).toEqual(
      [],
    );
  });

  it(`is given the Error itself in ${FOLDERS.join('/, ')}/`, () => {
    const found = sourcesOf(FOLDERS).flatMap((file) =>
      errNotAnError(readFileSync(file, 'utf8')).map((w) => `${relative(ROOT, file)}: ${w}`),
    );
    expect(found).toEqual([]);
  });
});
