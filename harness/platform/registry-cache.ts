/**
 * The registry's storage after the platform's pushes, kept in the tool cache and keyed by what was pushed. Pushing
 * unpacks every image into buildah's vfs storage and compresses its layers again, and `crossplane xpkg build` does the
 * same for the packages: about 25 s of CPU on a quiet machine, and each Pod suite and the sandbox paid it again. The
 * storage is content-addressed and names no registry host (manifests point at digests; package metadata at public
 * names), so a copy of it serves the same references in any run. A run whose inputs differ pushes and saves anew.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { cacheRoot } from '../tools/cache';
import { runCommand } from '../cluster/processes';

/** Entries kept: the default and the v2 package's platform, with room for a change in flight. */
const KEEP = 4;

const cacheDir = () => join(cacheRoot(), 'registry-storage');

/**
 * The key of a registry's content: each image by its name and its archive (archive files are named by their own
 * inputs' hash), each package by its name, the image it embeds and every file of its root.
 */
export function registryContentKey(
  archives: Readonly<Record<string, string>>,
  packages: readonly { readonly ref: string; readonly root: string; readonly embeds?: string }[],
  tools: string,
): string {
  const h = createHash('sha256').update(`${tools}\n`);
  for (const ref of Object.keys(archives).sort()) h.update(`image ${ref} ${basename(archives[ref]!)}\n`);
  for (const p of packages) {
    h.update(`package ${p.ref} ${p.embeds ?? ''}\n`);
    for (const f of filesBelow(p.root)) h.update(`${relative(p.root, f)}\n`).update(readFileSync(f));
  }
  return h.digest('hex').slice(0, 16);
}

/** The cached storage for `key`, or undefined. Marks it used, so that pruning keeps it. */
export function cachedRegistryStorage(key: string): string | undefined {
  const dir = join(cacheDir(), key);
  if (!existsSync(dir)) return undefined;
  const now = new Date();
  utimesSync(dir, now, now);
  return dir;
}

/**
 * Copies `from` (a file tree) into `to`, keeping modes; `--reflink=auto` makes it a clone where the file system can.
 * Not spawnSync: 170 MB take seconds, and the platform's start runs other steps meanwhile.
 */
export async function copyTree(from: string, to: string): Promise<void> {
  mkdirSync(to, { recursive: true });
  const r = await runCommand('cp', ['-a', '--reflink=auto', `${from}/.`, to]);
  if (r.code !== 0) throw new Error(`copying the registry storage ${from} to ${to} failed: ${r.output}`);
}

/**
 * Saves a registry's storage under `key` (copied aside, then renamed into place, so a reader never sees half of it)
 * and prunes all but the most recently used entries.
 */
export async function saveRegistryStorage(key: string, data: string): Promise<void> {
  const dir = join(cacheDir(), key);
  if (existsSync(dir)) return;
  const tmp = `${dir}.tmp-${process.pid}`;
  try {
    await copyTree(data, tmp);
    renameSync(tmp, dir);
  } catch (e) {
    // Another run saved the same key first: its copy is as good as ours.
    if (!existsSync(dir)) throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
  const entries = readdirSync(cacheDir())
    .filter((n) => !n.includes('.tmp-'))
    .map((n) => ({ n, used: statSync(join(cacheDir(), n)).mtimeMs }))
    .sort((a, b) => b.used - a.used);
  for (const { n } of entries.slice(KEEP)) rmSync(join(cacheDir(), n), { recursive: true, force: true });
}

function filesBelow(dir: string): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) out.push(...filesBelow(p));
    else if (e.isFile()) out.push(p);
  }
  return out;
}
