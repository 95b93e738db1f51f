/**
 * The programs (and the few data files) the harness takes from Debian packages, the package of each, and the only way
 * to get their paths. A bare machine has none of them: `program()` and `ensurePrograms()` install the package before
 * handing out the path, so no code path can run one before it is there (issue 33: buildah ran before anything
 * installed it). programs.test.ts fails on any spawn of a program by name that does not come through here.
 *
 * Not listed, and spawned by name: what every Debian system has (packages of priority `required`: coreutils, dash,
 * util-linux, mount, tar, findutils, libc-bin, dpkg, apt), Go (a prerequisite the README names) and Node's own tools.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { APT_LOCK, ensureDebianPackages } from './debian';
import { fileLockSync } from './lock';

/** A program or file a Debian package provides. */
export interface DebianFile {
  /** The Debian package that holds it. */
  readonly package: string;
  /** Its absolute path once the package is installed. */
  readonly path: string;
}

export const PROGRAMS = {
  // The node (harness/node/): its container runtime, network and images.
  containerd: { package: 'containerd', path: '/usr/bin/containerd' },
  'containerd-shim-runc-v2': { package: 'containerd', path: '/usr/bin/containerd-shim-runc-v2' },
  ctr: { package: 'containerd', path: '/usr/bin/ctr' },
  // runc, not crun: crun 1.8 refuses the hybrid cgroups of these machines (docs/decisions/pod-node.md).
  runc: { package: 'runc', path: '/usr/sbin/runc' },
  /** The CNI plugins containerd runs from their folder (harness/node/cni.ts). */
  'cni-bridge': { package: 'containernetworking-plugins', path: '/usr/lib/cni/bridge' },
  iptables: { package: 'iptables', path: '/usr/sbin/iptables' },
  ip: { package: 'iproute2', path: '/usr/sbin/ip' },
  buildah: { package: 'buildah', path: '/usr/bin/buildah' },
  /** Copies images to and inspects them in a registry (`npm run release`, release/registry.ts). */
  skopeo: { package: 'skopeo', path: '/usr/bin/skopeo' },
  busybox: { package: 'busybox-static', path: '/bin/busybox' },
  /** Reads another architecture's ELF programs: the arm64 images' libraries (harness/node/platform-images.ts). */
  readelf: { package: 'binutils', path: '/usr/bin/readelf' },
  /** The pause image's program is compiled static: gcc and libc6-dev's libc.a. */
  gcc: { package: 'gcc', path: '/usr/bin/gcc' },
  'libc.a': { package: 'libc6-dev', path: '/usr/lib/x86_64-linux-gnu/libc.a' },
  /** The registry the Pod platform pulls its images and packages from (harness/node/registry.ts). */
  'docker-registry': { package: 'docker-registry', path: '/usr/bin/docker-registry' },
  /** The CA bundle the images carry. */
  'ca-certificates.crt': { package: 'ca-certificates', path: '/etc/ssl/certs/ca-certificates.crt' },
  // PostgreSQL's image for CloudNativePG (harness/node/cnpg-images.ts).
  postgres: { package: 'postgresql-15', path: '/usr/lib/postgresql/15/bin/postgres' },
  psql: { package: 'postgresql-client-15', path: '/usr/lib/postgresql/15/bin/psql' },
  zoneinfo: { package: 'tzdata', path: '/usr/share/zoneinfo/UTC' },
  /** CloudNativePG's in-tree Barman Cloud runs these in the instance Pod: WAL archiving and base backups to S3. */
  'barman-cloud-backup': { package: 'barman-cli-cloud', path: '/usr/bin/barman-cloud-backup' },
  // The browser steps of the bind flow (harness/login/browser.ts, Playwright).
  chromium: { package: 'chromium', path: '/usr/bin/chromium' },
} as const satisfies Record<string, DebianFile>;

export type ProgramName = keyof typeof PROGRAMS;

/** What a node of the harness runs or builds its images with. */
export const NODE_PROGRAMS: readonly ProgramName[] = [
  'containerd',
  'containerd-shim-runc-v2',
  'ctr',
  'runc',
  'cni-bridge',
  'iptables',
  'ip',
  'buildah',
  'busybox',
  'gcc',
  'libc.a',
];

/** What building an image needs (harness/node/images.ts): buildah, and the CA bundle every image carries. */
export const IMAGE_PROGRAMS: readonly ProgramName[] = ['buildah', 'ca-certificates.crt'];

const stderrLog = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);

function toPackages(names: readonly ProgramName[]): { name: string; provides: string }[] {
  return names.map((n) => ({ name: PROGRAMS[n].package, provides: PROGRAMS[n].path }));
}

/**
 * Installs the packages of `names` that are missing, in one apt-get call with progress (or fails saying what to
 * install by hand), and returns the paths. Call it where a path starts (a node, an image build) so that one install
 * covers all it will run.
 */
export async function ensurePrograms<N extends ProgramName>(
  names: readonly N[],
  log: (line: string) => void = stderrLog,
): Promise<Record<N, string>> {
  await ensureDebianPackages(toPackages(names), log);
  return Object.fromEntries(names.map((n) => [n, PROGRAMS[n].path])) as Record<N, string>;
}

/**
 * The path of `name`. Where its package is missing (a path that did not call ensurePrograms first) it is installed
 * here, blocking, with apt-get's own progress on stderr: slower than ensurePrograms, never a failure to start.
 */
export function program(name: ProgramName): string {
  const p = PROGRAMS[name];
  if (existsSync(p.path)) return p.path;
  const byHand = `install it by hand (\`apt-get install ${p.package}\` on Debian 12) and run again`;
  if (process.getuid?.() !== 0) throw new Error(`${name} (${p.path}) is missing and installing its Debian package needs root: ${byHand}`);
  const release = fileLockSync(APT_LOCK(), 'installing Debian packages', stderrLog);
  try {
    if (existsSync(p.path)) return p.path;
    stderrLog(`installing the Debian package ${p.package} for ${name} ...`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const lock = ['-o', 'DPkg::Lock::Timeout=600'];
    for (const args of [
      ['update', ...lock],
      ['install', '-y', '--no-install-recommends', ...lock, p.package],
    ]) {
      const r = spawnSync('apt-get', args, { env, stdio: ['ignore', 'pipe', 'inherit'], encoding: 'utf8', timeout: 15 * 60_000 });
      if (r.status !== 0) throw new Error(`apt-get ${args.join(' ')} failed (exit ${r.status ?? r.signal}) for ${name}: ${byHand}`);
    }
  } finally {
    release();
  }
  if (!existsSync(p.path)) throw new Error(`apt-get installed ${p.package} but ${p.path} is still missing`);
  return p.path;
}
