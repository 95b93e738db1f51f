/**
 * Repository checks that run with the tests: the TypeScript typecheck of every source folder (`npm run typecheck`)
 * and the formatter (`npm run format:check`). A failure shows the tool's own report.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../../harness/crossplane/catalog';

/** A file in the project's cache folder (inside node_modules, never committed). */
const CACHE = (name: string) => join(ROOT, 'node_modules', '.cache', 'klutch-kit', name);

function run(bin: string, args: string[]): { status: number; output: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'node_modules', bin), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status ?? 1, output: `${r.stdout}${r.stderr}` };
}

describe('repository checks', () => {
  it('typechecks every source folder in strict mode (tsc --noEmit)', () => {
    // Incremental: a warm run re-checks only what changed (the build info lives with the other caches).
    const r = run('typescript/bin/tsc', ['--noEmit', '-p', '.', '--incremental', '--tsBuildInfoFile', CACHE('tsbuildinfo')]);
    expect(r.output, 'tsc reported errors').toBe('');
    expect(r.status).toBe(0);
  }, 180_000);

  it('is formatted (prettier --check; fix with `npm run format`)', () => {
    const r = run('prettier/bin/prettier.cjs', ['--check', '--log-level', 'warn', '--cache', '--cache-location', CACHE('prettier'), '.']);
    expect(r.output, 'files prettier would change').toBe('');
    expect(r.status).toBe(0);
  }, 180_000);
});
