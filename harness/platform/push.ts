/**
 * What an operator pushes to the platform's registry before installing it (docs/decisions/crossplane-deployed.md):
 *
 * - the images (function runtime, backend, konnector, kubectl-bind, Crossplane core, provider-kubernetes), from the
 *   OCI archives the harness builds (platform-images.ts), with `buildah push --cert-dir` (the registry's CA only);
 * - the Crossplane packages, built and pushed with our crank (v2 line) as `crossplane xpkg build` / `xpkg push`: the
 *   Configuration (`<dist>/packages/dataservices`), the Function with its runtime image embedded (the pushed image,
 *   as a docker-archive: crank's `--embed-runtime-image` reads only from a Docker daemon),
 *   provider-kubernetes (package.yaml and CRDs of its Go module, its image embedded), and a STAND-IN for
 *   provider-anynines (its CRDs from schemas/provider-anynines, the pause image as runtime: no a9s platform exists
 *   here, the a9s service broker stand-in writes its resources' status).
 *
 * Names keep the upstream path below the registry (`xpkg.crossplane.io/klutch-kit/function-dataservices:v1.2.3` is
 * `<registry>/klutch-kit/function-dataservices:v1.2.3`), so one ImageConfig per upstream registry rewrites them.
 */
import { cpSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ensureCrank } from '../tools/crank';
import { goModuleSource, wrapperModule } from '../tools/go';
import { PROVIDER_KUBERNETES_VERSION } from '../tools/provider-kubernetes';
import { ROOT } from '../crossplane/catalog';
import { buildahAsync, imagesDir } from '../node/images';
import type { Registry } from '../node/registry';
import { runCommand } from '../cluster/processes';
import { mirrored } from '../../lib/image-reference';

/**
 * Pushes each OCI archive to the registry under `mirrored(registry, <its name>)`; returns the in-node reference of
 * each, by its original name. One buildah storage for all, so the shared base layers are unpacked once. `tarballs`
 * (name -> file) also get a docker-archive of the image, what `crossplane xpkg build --embed-runtime-image-tarball`
 * reads (its `--embed-runtime-image` asks a Docker daemon for the image).
 */
export async function pushImages(
  registry: Registry,
  archives: Readonly<Record<string, string>>,
  log: (line: string) => void,
  tarballs: Readonly<Record<string, string>> = {},
): Promise<Record<string, string>> {
  const started = Date.now();
  mkdirSync(imagesDir(), { recursive: true });
  const work = mkdtempSync(join(imagesDir(), 'push-'));
  const pushed: Record<string, string> = {};
  try {
    const policy = join(work, 'policy.json');
    writeFileSync(policy, JSON.stringify({ default: [{ type: 'insecureAcceptAnything' }] }));
    for (const [ref, archive] of Object.entries(archives)) {
      const id = (await buildahAsync(work, ['pull', '--quiet', '--signature-policy', policy, `oci-archive:${archive}`])).split('\n').pop()!;
      await buildahAsync(work, [
        'push',
        '--quiet',
        '--signature-policy',
        policy,
        '--cert-dir',
        registry.certDir,
        '--format',
        'oci',
        id,
        `docker://${mirrored(registry.hostFromTest, ref)}`,
      ]);
      pushed[ref] = mirrored(registry.host, ref);
      if (tarballs[ref])
        await buildahAsync(work, ['push', '--quiet', '--signature-policy', policy, id, `docker-archive:${tarballs[ref]}:${ref}`]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log(`pushed ${Object.keys(archives).length} images to ${registry.host} in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return pushed;
}

export interface PackageToPush {
  /** The reference users and dependencies name (`xpkg.crossplane.io/...:<tag>`); pushed as mirrored(registry, ref). */
  readonly ref: string;
  /** Folder holding crossplane.yaml and the package's YAML. */
  readonly root: string;
  /** A docker-archive of the runtime image to embed (pushImages' `tarballs`). */
  readonly runtimeImage?: string;
  /** Paths below `root` crank must not read (examples). */
  readonly ignore?: readonly string[];
  readonly examples?: string;
}

/** `crossplane xpkg build` then `crossplane xpkg push` of each package, with our crank of the v2 line. */
export async function pushPackages(registry: Registry, packages: readonly PackageToPush[], log: (line: string) => void): Promise<void> {
  const crank = await ensureCrank('v2');
  const started = Date.now();
  const work = mkdtempSync(join(imagesDir(), 'xpkg-'));
  // crank pulls and pushes with go-containerregistry: the registry's CA as the only root, no docker config of the machine.
  const env = { ...process.env, SSL_CERT_FILE: registry.caFile, HOME: work, DOCKER_CONFIG: join(work, 'docker') };
  // Not spawnSync: the sandbox installs CloudNativePG and the bind backend meanwhile, in the same event loop.
  const run = async (what: string, args: string[]) => {
    const r = await runCommand(crank, args, { env, timeoutMs: 300_000 });
    if (r.code !== 0) throw new Error(`${what} failed: crossplane ${args.join(' ')}\n${r.output}`);
  };
  try {
    for (const p of packages) {
      const file = join(work, `${p.ref.replace(/[^a-z0-9.-]+/gi, '_')}.xpkg`);
      const args = ['xpkg', 'build', '--package-root', p.root, '--package-file', file];
      args.push('--examples-root', p.examples ?? join(work, 'no-examples'));
      if (p.ignore?.length) args.push('--ignore', p.ignore.join(','));
      if (p.runtimeImage) args.push('--embed-runtime-image-tarball', p.runtimeImage);
      await run(`building the package ${p.ref}`, args);
      await run(`pushing the package ${p.ref}`, ['xpkg', 'push', '--package-files', file, mirrored(registry.hostFromTest, p.ref)]);
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  log(`built and pushed ${packages.length} packages (crossplane xpkg) in ${((Date.now() - started) / 1000).toFixed(1)}s`);
}

/** provider-kubernetes' package as its project builds it: package/crossplane.yaml and package/crds of the Go module. */
export function providerKubernetesPackageRoot(): string {
  return join(
    goModuleSource(
      wrapperModule('harness/tools/provider-kubernetes'),
      'github.com/crossplane-contrib/provider-kubernetes',
      PROVIDER_KUBERNETES_VERSION,
    ),
    'package',
  );
}

/**
 * A package root for the provider-anynines STAND-IN: its real CRDs (schemas/provider-anynines, Klutch v1.5.0) under a
 * Provider meta that says what it is. Written into `dir`.
 */
export function providerAnyninesStandInRoot(dir: string): string {
  const root = join(dir, 'provider-anynines-stand-in');
  mkdirSync(join(root, 'crds'), { recursive: true });
  const crds = join(ROOT, 'schemas', 'provider-anynines');
  for (const f of readdirSync(crds).filter((f) => f.endsWith('.yaml'))) cpSync(join(crds, f), join(root, 'crds', f));
  writeFileSync(
    join(root, 'crossplane.yaml'),
    `apiVersion: meta.pkg.crossplane.io/v1
kind: Provider
metadata:
  name: provider-anynines
  annotations:
    meta.crossplane.io/maintainer: klutch-kit tests
    meta.crossplane.io/description: |
      STAND-IN for provider-anynines (klutch-kit's tests): provider-anynines' CRDs (Klutch v1.5.0) with a runtime that
      only waits (the pause image). No a9s platform is reachable from the tests; the a9s service broker stand-in writes
      the status of its resources.
`,
  );
  return root;
}
