import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';

const ROOT = join(import.meta.dirname, '..');
/** Runs the plugin from the checkout with process.versions.node reading `version`, as that Node would. */
const runAs = (version: string) =>
  spawnSync(
    process.execPath,
    [
      '--import',
      `data:text/javascript,Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });`,
      join(ROOT, 'scripts', 'kubectl-bind.mjs'),
      '--help',
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );

describe("kubectl-bind's Node", () => {
  it('refuses Node 20, past its end of life, saying which Node it needs', () => {
    const r = runAs('20.20.2');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('kubectl-bind needs Node 22.19 or later (Node 24 LTS is what its image runs); this is Node 20.20.2');
  });

  it('refuses a Node 22 older than the HTTP client it bundles supports', () => {
    const r = runAs('22.18.0');
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('kubectl-bind needs Node 22.19 or later');
  });

  it('runs on a maintained Node', () => {
    const r = runAs('22.19.0');
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain('kubectl bind');
  });
});
