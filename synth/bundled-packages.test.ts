import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { bundledPackages, writeBundledPackages } from './bundled-packages';

let root: string;
beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), 'klutch-kit-bundled-'));
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

/** A package installed below `at` (a folder of node_modules), with `files` beside its package.json. */
function install(at: string, name: string, version: string, files: readonly string[] = []): string {
  const dir = join(root, 'node_modules', at);
  mkdirSync(join(dir, 'lib'), { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name, version, license: 'MIT' }));
  for (const f of files) writeFileSync(join(dir, f), `${f} of ${name}\n`);
  writeFileSync(join(dir, 'lib', 'index.js'), 'export {};\n');
  return join(dir, 'lib', 'index.js');
}

describe('the packages a bundle holds', () => {
  it('are the packages of its inputs below node_modules, scoped and nested ones too, each once; our own files are none', () => {
    const inputs = [
      join(root, 'konnector', 'main.ts'),
      install('@kubernetes/client-node', '@kubernetes/client-node', '2.0.1'),
      join(root, 'node_modules', '@kubernetes', 'client-node', 'lib', 'other.js'),
      install('yaml', 'yaml', '2.9.1'),
      install('yaml/node_modules/tslib', 'tslib', '1.0.0'),
    ];
    expect(bundledPackages(inputs).map((p) => [p.at, p.name, p.version])).toEqual([
      [join('@kubernetes', 'client-node'), '@kubernetes/client-node', '2.0.1'],
      ['yaml', 'yaml', '2.9.1'],
      [join('yaml', 'node_modules', 'tslib'), 'tslib', '1.0.0'],
    ]);
  });

  it("are written as each package's package.json and licence files, and a package no longer bundled goes", () => {
    const out = join(root, 'dist', 'konnector');
    const inputs = [install('a', 'a', '1.0.0', ['LICENSE', 'README.md']), install('@s/b', '@s/b', '2.0.0', ['license.md', 'NOTICE'])];
    expect(writeBundledPackages(bundledPackages(inputs), out)).toBe(2);
    const files = () => readdirSync(join(out, 'node_modules'), { recursive: true, encoding: 'utf8' }).sort();
    expect(files()).toEqual(
      [
        '@s',
        join('@s', 'b'),
        join('@s', 'b', 'NOTICE'),
        join('@s', 'b', 'license.md'),
        join('@s', 'b', 'package.json'),
        'a',
        join('a', 'LICENSE'),
        join('a', 'package.json'),
      ].sort(),
    );
    expect(JSON.parse(readFileSync(join(out, 'node_modules', 'a', 'package.json'), 'utf8'))).toMatchObject({ name: 'a', version: '1.0.0' });
    writeBundledPackages(bundledPackages(inputs.slice(1)), out);
    expect(existsSync(join(out, 'node_modules', 'a', 'package.json'))).toBe(false);
    expect(existsSync(join(out, 'node_modules', '@s', 'b', 'package.json'))).toBe(true);
  });

  it('names the package and the file when a bundled file has no package.json above it', () => {
    const file = join(root, 'node_modules', 'broken', 'index.js');
    mkdirSync(join(root, 'node_modules', 'broken'), { recursive: true });
    writeFileSync(file, '');
    expect(() => bundledPackages([file])).toThrow(
      `${file} is bundled, but its package ${join(root, 'node_modules', 'broken')} has no package.json`,
    );
  });
});
