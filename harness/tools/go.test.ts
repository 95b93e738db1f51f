import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { goBuild, requireGo, wrapperHash } from './go';

const savedPath = process.env.PATH;
const dirs: string[] = [];
afterEach(() => {
  process.env.PATH = savedPath;
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

function folder(): string {
  const d = mkdtempSync(join(tmpdir(), 'klutch-kit-go-test-'));
  dirs.push(d);
  return d;
}

/** A PATH holding only a fake `go` that reports `version`. */
function fakeGo(version: string): void {
  const d = folder();
  writeFileSync(join(d, 'go'), `#!/bin/sh\necho ${version}\n`);
  chmodSync(join(d, 'go'), 0o755);
  process.env.PATH = d;
}

describe('requireGo', () => {
  it('says how to get Go when it is not on PATH', () => {
    process.env.PATH = folder();
    expect(() => requireGo('1.24')).toThrow(/`go` was not found on PATH\. Install Go .* and run `npm test` again/);
  });

  it('names the version found when it is too old', () => {
    fakeGo('go1.22.5');
    expect(() => requireGo('1.24')).toThrow('Go 1.24 or newer is needed to build the test tools; found go1.22.5');
  });

  it('accepts the minimum and newer releases', () => {
    fakeGo('go1.24.0');
    expect(() => requireGo('1.24')).not.toThrow();
    fakeGo('go1.26.8');
    expect(() => requireGo('1.24')).not.toThrow();
  });
});

describe('goBuild', () => {
  it('is a no-op when the binary is already built, even without Go', async () => {
    const out = join(folder(), 'tool');
    writeFileSync(out, 'built before');
    process.env.PATH = folder();
    await expect(goBuild({ moduleDir: folder(), pkg: '.', out, label: 'tool' })).resolves.toBe(out);
  });

  it('fails with the compiler output and leaves no partial binary', async () => {
    const mod = folder();
    writeFileSync(join(mod, 'go.mod'), 'module broken\n\ngo 1.24\n');
    writeFileSync(join(mod, 'main.go'), 'package main\n\nfunc main() { undefined() }\n');
    const out = join(folder(), 'bin', 'broken');
    await expect(goBuild({ moduleDir: mod, pkg: '.', out, label: 'broken', log: () => undefined })).rejects.toThrow(
      /building broken failed[\s\S]*undefined: undefined/,
    );
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(join(out, '..'))).toEqual([]);
  });
});

describe('wrapperHash', () => {
  it('changes with what the build reads (a pin, a stub source), not with a README', () => {
    const mod = folder();
    writeFileSync(join(mod, 'go.mod'), 'module tool\n\ngo 1.24\n');
    mkdirSync(join(mod, 'stub'));
    writeFileSync(join(mod, 'stub', 'stub.go'), 'package stub\n');
    const first = wrapperHash(mod);
    writeFileSync(join(mod, 'README.md'), 'why the stub exists');
    expect(wrapperHash(mod)).toBe(first);
    writeFileSync(join(mod, 'stub', 'stub.go'), 'package stub\n\nvar X = 1\n');
    const second = wrapperHash(mod);
    expect(second).not.toBe(first);
    writeFileSync(join(mod, 'go.mod'), 'module tool\n\ngo 1.25\n');
    expect(wrapperHash(mod)).not.toBe(second);
  });
});
