/** The real catalog and synth, for tests: loaded the way `npm run synth` loads them, without spawning a process. */
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseAllDocuments } from 'yaml';
import type { Api, CrossplaneTarget } from '../../apis/api';
import { catalogApis, type CatalogModule } from '../../synth/catalog';
import { render } from '../../synth/synth';
import { CHART_DIR } from '../../synth/helm-chart';

/**
 * The repository root, found upwards from this file: benches and fixtures run it bundled from node_modules/.cache,
 * where a path relative to the source would be wrong.
 */
export const ROOT = (() => {
  for (let dir = dirname(fileURLToPath(import.meta.url)); ; dir = dirname(dir)) {
    if (existsSync(join(dir, 'scripts', 'bundle.mjs'))) return dir;
    if (dirname(dir) === dir)
      throw new Error(`cannot find the repository root (scripts/bundle.mjs) above ${fileURLToPath(import.meta.url)}`);
  }
})();
const CATALOG_DIR = join(ROOT, 'apis', 'catalog');

/** Every module of apis/catalog/, in file order. */
export async function loadCatalog(dir = CATALOG_DIR): Promise<Api[]> {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith('.ts') && !f.endsWith('.test.ts'))
    .sort();
  const modules: CatalogModule[] = [];
  for (const f of files) modules.push([f, (await import(join(dir, f))) as Record<string, unknown>]);
  return catalogApis(modules);
}

/**
 * The files of synth output that hold Kubernetes objects: its YAML files, but not the Helm chart's (templates, which
 * are not YAML until helm renders them; synth/helm-chart.test.ts does).
 */
export function objectFiles(files: ReadonlyMap<string, string>): Map<string, string> {
  return new Map([...files].filter(([p]) => p.endsWith('.yaml') && !p.startsWith(`${CHART_DIR}/`)));
}

/** The Kubernetes objects of the real catalog's synth output, in memory: path → parsed objects. */
export async function synthCatalog(target: CrossplaneTarget = 'v1'): Promise<Map<string, Record<string, unknown>[]>> {
  const files = objectFiles(render({ apis: await loadCatalog(), outdir: 'unused', target }));
  return new Map([...files].map(([p, text]) => [p, parseYaml(text)]));
}

export function parseYaml(text: string): Record<string, unknown>[] {
  return parseAllDocuments(text).map((d) => {
    if (d.errors.length > 0) throw new Error(d.errors.map((e) => e.message).join('; '));
    return d.toJS() as Record<string, unknown>;
  });
}

/** `runSynth` without blocking: other work (a cluster starting) goes on meanwhile. */
export function runSynthAsync(args: readonly string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [join(ROOT, 'scripts', 'synth.mjs'), ...args], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });
}

/** Runs `npm run synth` (the script behind it) with arguments; returns its exit code and output. */
export function runSynth(args: readonly string[]): { status: number; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(ROOT, 'scripts', 'synth.mjs'), ...args], { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status ?? 1, stdout: r.stdout, stderr: r.stderr };
}

/**
 * A copy of the project made of symlinks, with `files` (path below the project → content) added or replaced: the
 * same as editing the working tree, without touching the one other tests read. Returns the copy's root.
 */
export function projectWith(files: Readonly<Record<string, string>>, under: string): string {
  const root = mkdtempSync(join(under, 'project-'));
  const link = (from: string, to: string, rel: string) => {
    const touched = Object.keys(files).filter((f) => f.startsWith(`${rel}/`));
    if (!touched.length || !statSync(from).isDirectory()) return symlinkSync(from, to);
    mkdirSync(to);
    for (const name of readdirSync(from)) link(join(from, name), join(to, name), `${rel}/${name}`);
  };
  for (const name of readdirSync(ROOT)) if (name !== '.git') link(join(ROOT, name), join(root, name), name);
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    rmSync(join(root, path), { force: true });
    writeFileSync(join(root, path), content);
  }
  return root;
}
