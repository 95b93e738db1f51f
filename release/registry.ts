/**
 * The release's traffic with a registry, each through the client made for it: images with buildah (one image per
 * architecture, pushed as one OCI index), Crossplane packages with crank (`crossplane xpkg`), the chart with helm, and
 * skopeo to read a digest back and to write the docker-archive crank embeds. Credentials and the registry's CA are
 * handed to each in its own form.
 */
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { basename, join } from 'node:path';
import { buildahAsync } from '../harness/node/images';
import { runCommand } from '../harness/cluster/processes';
import { ensurePrograms } from '../harness/tools/programs';

export interface RegistryAccess {
  /** PEM of the registry's CA, when the system's do not sign it. */
  readonly caFile?: string;
  /** Credentials as `docker login` writes them. */
  readonly authFile?: string;
  /** A private folder for the clients' configuration. */
  readonly work: string;
}

const TIMEOUT_MS = 600_000;

/** Runs a client; its stdout, or (`all`) its stdout and stderr as it wrote them. */
async function run(what: string, command: string, args: readonly string[], env?: NodeJS.ProcessEnv, all = false): Promise<string> {
  const r = await runCommand(command, args, { timeoutMs: TIMEOUT_MS, ...(env ? { env } : {}) });
  if (r.code !== 0) throw new Error(`${what} failed: ${command} ${args.join(' ')}\n${r.output.trim()}`);
  return all ? r.output : r.stdout;
}

/** skopeo wants a CA as `*.crt` in a folder of its own. */
function certDir(a: RegistryAccess): string | undefined {
  if (!a.caFile) return undefined;
  const dir = join(a.work, 'certs');
  mkdirSync(dir, { recursive: true });
  copyFileSync(a.caFile, join(dir, 'registry-ca.crt'));
  return dir;
}

async function skopeo(): Promise<string> {
  return (await ensurePrograms(['skopeo'])).skopeo;
}

/**
 * Pushes one image per architecture (OCI archives, each carrying its platform in its config) as one OCI image index
 * `ref`, with every image; the index's digest. buildah makes the index (skopeo copies one image), in storage of its
 * own below the access's work folder.
 */
export async function pushImageIndex(a: RegistryAccess, archives: readonly string[], ref: string): Promise<string> {
  const work = mkdtempSync(join(a.work, 'index-'));
  try {
    const list = `localhost/klutch-kit-release-index:${basename(work)}`;
    await buildahAsync(work, ['manifest', 'create', list]);
    for (const archive of archives) await buildahAsync(work, ['manifest', 'add', list, `oci-archive:${archive}`]);
    const digestFile = join(work, 'digest');
    const certs = certDir(a);
    await buildahAsync(work, [
      'manifest',
      'push',
      '--all',
      '--quiet',
      '--format',
      'oci',
      '--digestfile',
      digestFile,
      ...(certs ? ['--cert-dir', certs] : []),
      ...(a.authFile ? ['--authfile', a.authFile] : []),
      list,
      `docker://${ref}`,
    ]);
    return readFileSync(digestFile, 'utf8').trim();
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** A docker-archive of an OCI archive, named `ref`: what `crossplane xpkg build --embed-runtime-image-tarball` reads. */
export async function dockerArchive(archive: string, ref: string, file: string): Promise<void> {
  await run(`writing ${file}`, await skopeo(), ['copy', '--quiet', `oci-archive:${archive}`, `docker-archive:${file}:${ref}`]);
}

/** The digest of the manifest `ref` names in the registry. */
async function remoteDigest(a: RegistryAccess, ref: string): Promise<string> {
  const certs = certDir(a);
  const out = await run(`reading the digest of ${ref}`, await skopeo(), [
    'inspect',
    '--format',
    '{{.Digest}}',
    ...(certs ? ['--cert-dir', certs] : []),
    ...(a.authFile ? ['--authfile', a.authFile] : []),
    `docker://${ref}`,
  ]);
  return out.trim();
}

/**
 * The environment of crank (go-containerregistry): the CA as its only root where one is given, the credentials as
 * a Docker config of its own where a file is given; otherwise the user's.
 */
function crankEnv(a: RegistryAccess): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  if (a.caFile) env.SSL_CERT_FILE = a.caFile;
  if (a.authFile) {
    const docker = join(a.work, 'docker');
    mkdirSync(docker, { recursive: true });
    copyFileSync(a.authFile, join(docker, 'config.json'));
    env.DOCKER_CONFIG = docker;
  }
  return env;
}

export interface PackageBuild {
  /** Folder holding crossplane.yaml and the package's YAML. */
  readonly root: string;
  /** Its examples, if it has any (left out of what crank reads as the package). */
  readonly examples?: string;
  /**
   * docker-archives of the runtime image to embed, one per architecture: a package is built around each (its config,
   * and so its platform, is the runtime's) and they are pushed as one OCI index, as multi-platform Functions are.
   */
  readonly runtimeImages?: readonly string[];
}

/**
 * `crossplane xpkg build` (once per runtime image, or once) then `xpkg push` of every file as `ref`: one package, or an
 * index of them; the digest pushed as `ref`.
 */
export async function pushPackage(a: RegistryAccess, crank: string, p: PackageBuild, ref: string): Promise<string> {
  const env = crankEnv(a);
  const runtimes = p.runtimeImages?.length ? p.runtimeImages : [undefined];
  const files: string[] = [];
  for (const [i, runtime] of runtimes.entries()) {
    const file = join(a.work, `${ref.replace(/[^a-z0-9.-]+/gi, '_')}-${i}.xpkg`);
    const args = ['xpkg', 'build', '--package-root', p.root, '--package-file', file];
    if (p.examples) args.push('--examples-root', p.examples, '--ignore', 'examples/*');
    else args.push('--examples-root', join(a.work, 'no-examples'));
    if (runtime) args.push('--embed-runtime-image-tarball', runtime);
    await run(`building the package ${ref}${runtime ? ` around ${basename(runtime)}` : ''}`, crank, args, env);
    files.push(file);
  }
  await run(`pushing the package ${ref}`, crank, ['xpkg', 'push', '--package-files', files.join(','), ref], env);
  return remoteDigest(a, ref);
}

/** `helm push` of a packaged chart to `oci://<repository>`; the digest helm reports. */
export async function pushChart(a: RegistryAccess, helm: string, chart: string, repository: string): Promise<string> {
  const args = ['push', chart, `oci://${repository}`];
  if (a.caFile) args.push('--ca-file', a.caFile);
  if (a.authFile) args.push('--registry-config', a.authFile);
  // helm writes "Pushed: ..." and "Digest: ..." to stderr.
  const out = await run(`pushing the chart ${chart}`, helm, args, undefined, true);
  const digest = /Digest:\s*(sha256:[0-9a-f]{64})/.exec(out)?.[1];
  if (!digest) throw new Error(`helm push ${chart} printed no digest:\n${out}`);
  return digest;
}
