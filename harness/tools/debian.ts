/**
 * Debian packages, installed with apt-get when a file they provide is missing (which programs the harness takes from
 * them: harness/tools/programs.ts), and Debian's package database as the images' cache keys read it. The machines run
 * as root on Debian 12, so the project installs them itself instead of asking each developer to; elsewhere it fails
 * saying which packages to install.
 */
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { fileLock } from './lock';

/** A Debian package and a file that shows it is installed. */
export interface DebianPackage {
  readonly name: string;
  readonly provides: string;
}

/** The lock every install of the harness takes (harness/tools/lock.ts). */
export const APT_LOCK = () => join(cacheRoot(), 'apt-get.lock');

/**
 * Installs the packages of `wanted` whose file is missing (apt-get update first, then apt-get install), printing
 * progress. Fails with the command to run by hand when apt-get is not there or the user is not root.
 */
export async function ensureDebianPackages(wanted: readonly DebianPackage[], log: (line: string) => void = stderrLog): Promise<void> {
  if (wanted.every((p) => existsSync(p.provides))) return;
  // One install at a time, across processes and within one: apt-get refuses a second caller of its lists lock at
  // once (two nodes starting side by side on a new machine failed so), and the second may find nothing left to do.
  const release = await fileLock(APT_LOCK(), 'installing Debian packages', log);
  try {
    await install(wanted, log);
  } finally {
    release();
  }
}

async function install(wanted: readonly DebianPackage[], log: (line: string) => void): Promise<void> {
  const missing = wanted.filter((p) => !existsSync(p.provides));
  if (missing.length === 0) return;
  const names = [...new Set(missing.map((p) => p.name))];
  const byHand = `install them by hand (\`apt-get install ${names.join(' ')}\` on Debian 12) and run the tests again`;
  if (spawnSync('apt-get', ['--version']).status !== 0) {
    throw new Error(`the node needs the Debian packages ${names.join(', ')}, and this machine has no apt-get: ${byHand}`);
  }
  if (process.getuid?.() !== 0)
    throw new Error(`the node needs the Debian packages ${names.join(', ')}; installing them needs root: ${byHand}`);
  const started = Date.now();
  log(`installing Debian packages ${names.join(', ')} (first run only) ...`);
  // Another test process may be installing at the same time: wait for dpkg's lock instead of failing on it.
  const lock = ['-o', 'DPkg::Lock::Timeout=600'];
  await apt(['update', ...lock], log);
  await apt(['install', '-y', '--no-install-recommends', ...lock, ...names], log);
  const still = missing.filter((p) => !existsSync(p.provides));
  if (still.length > 0) {
    throw new Error(
      `apt-get installed ${names.join(', ')} but ${still.map((p) => `${p.provides} (${p.name})`).join(', ')} is still missing`,
    );
  }
  log(`installed ${names.join(', ')} in ${Math.round((Date.now() - started) / 1000)}s`);
}

function apt(args: string[], log: (line: string) => void, cwd?: string): Promise<void> {
  return new Promise((resolve, reject) => {
    // No prompt may wait for an answer nobody gives. (Debian's containerd ships only a systemd unit, and these
    // machines run no systemd: installing it starts no daemon; the node runs its own.)
    const p = spawn('apt-get', args, {
      ...(cwd ? { cwd } : {}),
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    });
    let output = '';
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
      for (const line of d.toString().split('\n')) if (/^(Get|Setting up|Unpacking)/.test(line)) log(`apt-get: ${line.trim()}`);
    };
    p.stdout.on('data', onData);
    p.stderr.on('data', onData);
    p.on('error', (e) => reject(new Error(`apt-get ${args[0]} could not start: ${e.message}`)));
    p.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`apt-get ${args.join(' ')} failed (exit ${code}):\n${output.slice(-3000)}`)),
    );
  });
}

/**
 * Debian's package database as the images' cache keys ask it (harness/node/platform-images.ts, cnpg-images.ts): one
 * dpkg call for many packages or paths, each answer kept for the life of the process. `dpkg -S` reads every package's
 * file list, about 70 ms of CPU a call whatever the number of paths; asked per library and again per image, it was
 * most of the 200 dpkg-query runs of a full `npm test` (docs/decisions/test-process-starts.md).
 */
const owners = new Map<string, string | undefined>();
const versionLists = new Map<string, DebianVersions>();

/**
 * The package owning each of `paths` (`dpkg -S`, the first package dpkg names, without its architecture), in one dpkg
 * call for the paths not asked before in this process. A path no package owns is not in the result.
 */
export function debianOwners(paths: readonly string[]): Map<string, string> {
  const ask = [...new Set(paths)].filter((p) => !owners.has(p));
  if (ask.length > 0) {
    const r = spawnSync('dpkg', ['-S', ...ask], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
    // 1: some path has no owner (each named on stderr); anything else is dpkg failing.
    if (r.status !== 0 && r.status !== 1) throw new Error(`dpkg -S ${ask.join(' ')} failed: ${r.error?.message ?? ''}${r.stderr ?? ''}`);
    const wanted = new Set(ask);
    for (const line of r.stdout.split('\n')) {
      const at = line.lastIndexOf(': /');
      const path = line.slice(at + 2);
      if (at < 0 || !wanted.has(path) || owners.get(path) !== undefined) continue;
      owners.set(path, line.slice(0, at).split(':')[0]);
    }
    for (const p of ask) if (!owners.has(p)) owners.set(p, undefined);
  }
  const out = new Map<string, string>();
  for (const p of paths) {
    const owner = owners.get(p);
    if (owner !== undefined) out.set(p, owner);
  }
  return out;
}

/**
 * Where a distroless image keeps its Debian packages' records, one file a package: scanners (syft, trivy, grype) read
 * them to know which packages, at which versions, the image's files come from.
 */
export const STATUS_D = 'var/lib/dpkg/status.d';

/** Each installed package's record as dpkg keeps it (`dpkg-query -s`), by name: a file of STATUS_D. */
export function dpkgStatus(names: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    [...new Set(names)].map((name) => {
      const r = spawnSync('dpkg-query', ['-s', name], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`dpkg-query -s ${name} failed: ${r.error?.message ?? ''}${r.stderr ?? ''}`);
      return [name, r.stdout];
    }),
  );
}

/** A package file's control record as dpkg would keep it once installed (its Status after its Package line). */
function controlRecord(deb: string): string {
  const r = spawnSync('dpkg-deb', ['-f', deb], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`dpkg-deb -f ${deb} failed: ${r.stderr}`);
  return r.stdout.replace(/^(Package: .*\n)/, '$1Status: install ok installed\n');
}

export interface DebianVersions {
  /** `<package>=<version>` of each package dpkg knows, one a line in the database's order (`dpkg-query -W`). */
  readonly lines: string;
  /** The names dpkg knows no package of. */
  readonly unknown: readonly string[];
}

/** The versions of `names` in one dpkg-query call, once per set of names in this process. */
export function debianVersions(names: readonly string[]): DebianVersions {
  const unique = [...new Set(names)];
  const key = JSON.stringify([...unique].sort());
  const known = versionLists.get(key);
  if (known) return known;
  const r = spawnSync('dpkg-query', ['-W', '-f', '${Package}=${Version}\n', ...unique], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  const unknown = [...(r.stderr ?? '').matchAll(/no packages found matching (\S+)/g)].map((m) => m[1]!);
  if (r.status !== 0 && !(r.status === 1 && unknown.length > 0))
    throw new Error(`dpkg-query -W ${unique.join(' ')} failed: ${r.error?.message ?? ''}${r.stderr ?? ''}`);
  const v: DebianVersions = { lines: r.stdout.trim(), unknown };
  versionLists.set(key, v);
  return v;
}

function stderrLog(line: string): void {
  process.stderr.write(`[klutch-kit] ${line}\n`);
}

/**
 * The files of Debian packages of another architecture (`arch`, e.g. arm64) at the versions given, unpacked into one
 * folder of the cache (`dpkg-deb -x`, nothing installed, each package's record in STATUS_D): the libraries an image of
 * that architecture carries, and what scanners read of them. apt-get
 * reads that architecture's package lists into a state folder of its own in the cache, so the machine's apt
 * configuration and database stay as they are; the lists are fetched once, and again only for a version they lack.
 */
export async function foreignPackages(
  pkgs: readonly { readonly name: string; readonly version: string }[],
  arch: string,
  log: (line: string) => void = stderrLog,
): Promise<string> {
  const key = createHash('sha256')
    .update(
      `${arch}\n${STATUS_D}\n${pkgs
        .map((p) => `${p.name}=${p.version}`)
        .sort()
        .join('\n')}\n`,
    )
    .digest('hex')
    .slice(0, 12);
  const out = join(cacheRoot(), `debian-${arch}`, `root-${key}`);
  if (existsSync(out)) return out;
  const release = await fileLock(join(cacheRoot(), `debian-${arch}.lock`), `fetching Debian packages for ${arch}`, log);
  try {
    if (existsSync(out)) return out;
    const state = join(cacheRoot(), `debian-${arch}`, 'apt');
    for (const d of ['lists/partial', 'archives/partial']) mkdirSync(join(state, d), { recursive: true });
    const opts = [
      '-o',
      `Dir::State=${state}`,
      '-o',
      `Dir::State::status=/dev/null`,
      '-o',
      `Dir::Cache=${state}`,
      '-o',
      `APT::Architecture=${arch}`,
      '-o',
      `APT::Architectures=${arch}`,
      // apt's sandbox user cannot write the cache's folders; the download is of signed lists and checked packages.
      '-o',
      'APT::Sandbox::User=root',
    ];
    const debs = join(state, 'debs');
    mkdirSync(debs, { recursive: true });
    const wanted = pkgs.map((p) => `${p.name}:${arch}=${p.version}`);
    const download = () => apt(['download', ...opts, ...wanted], log, debs);
    log(`fetching ${wanted.join(', ')} from Debian (for the ${arch} images) ...`);
    await download().catch(async () => {
      await apt(['update', ...opts], log);
      await download();
    });
    const tmp = `${out}.tmp-${process.pid}`;
    rmSync(tmp, { recursive: true, force: true });
    mkdirSync(tmp, { recursive: true });
    for (const p of pkgs) {
      const file = readdirSync(debs).find(
        (f) => f.startsWith(`${p.name}_`) && f.endsWith(`_${arch}.deb`) && f.includes(`_${p.version.replaceAll(':', '%3a')}_`),
      );
      if (!file) throw new Error(`apt-get download left no ${p.name} ${p.version} for ${arch} in ${debs}`);
      const x = spawnSync('dpkg-deb', ['-x', join(debs, file), tmp], { encoding: 'utf8' });
      if (x.status !== 0) throw new Error(`dpkg-deb -x ${file} failed: ${x.stderr}`);
      mkdirSync(join(tmp, STATUS_D), { recursive: true });
      writeFileSync(join(tmp, STATUS_D, p.name), controlRecord(join(debs, file)));
    }
    renameSync(tmp, out);
    return out;
  } finally {
    release();
  }
}
