/** The bundle cache of scripts/bundle.mjs: what a cache hit checks, and that an edited input is bundled again. */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { bundle, CACHE_DIR, REPOSITORY_ROOT } from './bundle.mjs';

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-bundle-cache-'));
const made: string[] = [];
afterAll(() => {
  rmSync(tmp, { recursive: true, force: true });
  for (const file of made) for (const f of [file, `${file}.inputs.json`]) rmSync(f, { force: true });
});

/** A program of ours (src/) with one package (node_modules/pkg) and npm's lockfile beside it. */
function project(): { src: string; pkg: string; lock: string; entry: string } {
  const dir = mkdtempSync(join(tmp, 'project-'));
  const src = join(dir, 'src', 'message.ts');
  const pkg = join(dir, 'node_modules', 'pkg', 'index.js');
  const lock = join(dir, 'node_modules', '.package-lock.json');
  const entry = join(dir, 'src', 'main.ts');
  mkdirSync(join(dir, 'node_modules', 'pkg'), { recursive: true });
  mkdirSync(join(dir, 'src'));
  writeFileSync(src, "export const message = 'one';\n");
  writeFileSync(pkg, "module.exports = { word: 'alpha' };\n");
  writeFileSync(join(dir, 'node_modules', 'pkg', 'package.json'), '{"name":"pkg","main":"index.js"}\n');
  writeFileSync(lock, '{"packages":{"node_modules/pkg":{"version":"1.0.0"}}}\n');
  writeFileSync(entry, "import { message } from './message';\nimport { word } from 'pkg';\nconsole.log(message, word);\n");
  return { src, pkg, lock, entry };
}

/** Bundles the project; `output` is what its console.log prints, read from the bundle (no process started). */
async function build(entry: string): Promise<{ cached: boolean; output: string }> {
  const b = await bundle({ name: 'bundle-cache-test', entry, selfContained: true });
  made.push(b.file);
  const text = readFileSync(b.file, 'utf8');
  const message = /message\s*=\s*"(\w+)"/.exec(text)?.[1];
  const word = /word:\s*"(\w+)"/.exec(text)?.[1];
  return { cached: b.cached, output: `${message} ${word}` };
}

/** Rewrites a file with new content of the same size, one second later: only its content and mtime differ. */
function edit(file: string, from: string, to: string): void {
  const text = readFileSync(file, 'utf8');
  expect(to.length).toBe(from.length);
  writeFileSync(file, text.replace(from, to));
  const later = new Date(Date.now() + 1000);
  utimesSync(file, later, later);
}

describe('the bundle cache', () => {
  it('reuses a bundle while its inputs are unchanged, and bundles again when a source file is edited', async () => {
    const p = project();
    expect(await build(p.entry)).toEqual({ cached: false, output: 'one alpha' });
    expect(await build(p.entry)).toEqual({ cached: true, output: 'one alpha' });
    // Touched only (new mtime, same bytes): the content hash says it is unchanged.
    const later = new Date(Date.now() + 2000);
    utimesSync(p.src, later, later);
    expect((await build(p.entry)).cached).toBe(true);
    edit(p.src, "'one'", "'two'");
    expect(await build(p.entry)).toEqual({ cached: false, output: 'two alpha' });
    expect(await build(p.entry)).toEqual({ cached: true, output: 'two alpha' });
  });

  it("checks the package files by npm's lockfile, once, and bundles again when npm changed them", async () => {
    const p = project();
    const b = await bundle({ name: 'bundle-cache-test', entry: p.entry, selfContained: true });
    made.push(b.file);
    const manifest = JSON.parse(readFileSync(`${b.file}.inputs.json`, 'utf8')) as {
      checks: { path: string }[];
      inputs: { path: string }[];
    };
    expect(manifest.inputs.map((i) => i.path)).toEqual(expect.arrayContaining([p.src, p.entry, p.pkg]));
    expect(manifest.checks.map((c) => c.path).sort()).toEqual([p.lock, p.src, p.entry].sort());
    // npm installs another version: the package file and the lockfile change together.
    edit(p.pkg, "'alpha'", "'gamma'");
    edit(p.lock, '"1.0.0"', '"1.0.1"');
    expect(await build(p.entry)).toEqual({ cached: false, output: 'one gamma' });
  });

  it('bundled into another bundle (as synth bundles it), still caches in the repository', async () => {
    const entry = join(mkdtempSync(join(tmp, 'root-')), 'main.ts');
    writeFileSync(
      entry,
      `import { CACHE_DIR } from ${JSON.stringify(join(REPOSITORY_ROOT, 'scripts', 'bundle.mjs'))};\nconsole.log(CACHE_DIR);\n`,
    );
    const b = await bundle({ name: 'bundle-cache-test', entry });
    made.push(b.file);
    expect(b.file.startsWith(`${CACHE_DIR}/`)).toBe(true);
    expect(spawnSync(process.execPath, [b.file], { encoding: 'utf8' }).stdout.trim()).toBe(CACHE_DIR);
  });
});
