/**
 * `npm run release`: a release of this tree, built for one registry and published there (docs/releases.md). Each
 * step prints what it does and how long it took, and a failure names its step. `--out` must be new or empty: a failed
 * run leaves what it wrote there, and the next run wants another folder (or that one emptied).
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join, relative } from 'node:path';
import { parse, parseDocument, visit, isMap, isScalar } from 'yaml';
import { platformName } from '../cli/deploy/platforms';
import { ensureDeployableImages, IMAGE_ARCHES } from '../harness/node/platform-images';
import { ensureCrank } from '../harness/tools/crank';
import { ensureHelm } from '../harness/tools/helm';
import { sha256File } from '../lib/files';
import { DEFAULT_IMAGE_REGISTRY, DEFAULT_PACKAGE_REGISTRY } from '../lib/version';
import { imageRepository, mirrored } from '../lib/image-reference';
import { RELEASE_KONNECTOR_DIGEST_ENV, RELEASE_REGISTRY_ENV, REPOSITORY_ROOT } from '../scripts/bundle.mjs';
import type { ReleaseFlags } from './flags';
import { pinDependency } from '../synth/package-meta';
import { buildExecutables } from './plugin-executables';
import { type Sbom, writeSboms } from './sbom';
import {
  CHART_REPOSITORY,
  checksumsText,
  imagesText,
  type ListedImage,
  pinKustomizeImages,
  pinned,
  pinnedPackage,
  pinReferences,
  referencesIn,
  RELEASE_IMAGES,
  RELEASE_PACKAGES,
  tagged,
} from './references';
import { dockerArchive, pushChart, pushImageIndex, pushPackage, type RegistryAccess } from './registry';

/** What was published, by kind and name: release.json. */
export interface ReleaseRecord {
  readonly version: string;
  /** Below which its images (and chart) and its packages are named. */
  readonly registry: { readonly images: string; readonly packages: string };
  readonly images: Record<string, { ref: string; digest: string }>;
  readonly packages: Record<string, { ref: string; digest: string }>;
  readonly chart: { ref: string; digest: string };
  readonly executables: { platform: string; file: string; sha256: string }[];
  /** The SBOM of each image and platform (release/sbom.ts). */
  readonly sboms: Sbom[];
}

/** The repository of a reference this release wrote (well formed: imageRepository answers). */
const repositoryOf = (ref: string): string => imageRepository(ref) ?? ref;

/** The folders of synth's output a release ships, pinned: the control plane's bundle and the app clusters'. */
const BUNDLES = ['control-plane', 'app-cluster'] as const;

export async function publishRelease(f: ReleaseFlags, log: (line: string) => void): Promise<ReleaseRecord> {
  if (existsSync(f.out) && readdirSync(f.out).length > 0)
    throw new Error(`--out ${f.out} is not empty: give a new folder (a release is written whole, never over another)`);
  const work = mkdtempSync(join(tmpdir(), 'klutch-kit-release-'));
  const access: RegistryAccess = { work, ...(f.caFile ? { caFile: f.caFile } : {}), ...(f.authFile ? { authFile: f.authFile } : {}) };
  let n = 0;
  const STEPS = f.sbom ? 9 : 8;
  const step = async <T>(what: string, body: () => Promise<T> | T): Promise<T> => {
    const started = Date.now();
    log(`release [${++n}/${STEPS}] ${what} ...`);
    const v = await body();
    log(`release [${n}/${STEPS}] done in ${((Date.now() - started) / 1000).toFixed(1)}s`);
    return v;
  };
  // The names clusters pull (below --registry, or the project's registries), and where this machine pushes each.
  const registry = { images: f.registry ?? DEFAULT_IMAGE_REGISTRY, packages: f.registry ?? DEFAULT_PACKAGE_REGISTRY };
  const imageName = (name: string) => tagged(registry.images, name, f.version);
  const packageName = (name: string) => tagged(registry.packages, name, f.version);
  const pushed = (ref: string) => (f.pushHost ? mirrored(f.pushHost, ref) : ref);
  try {
    const images: ReleaseRecord['images'] = {};
    // Each image as an index of one image per architecture (IMAGE_ARCHES): clusters of either pull the release's ref.
    const push = async (deployable: string, archives: readonly (string | undefined)[]) => {
      const repo = RELEASE_IMAGES[deployable];
      if (!repo) throw new Error(`no release image for the deployable ${deployable}: add it to RELEASE_IMAGES (release/references.ts)`);
      if (archives.some((a) => !a)) throw new Error(`synth wrote no image of ${deployable}: nothing to release as ${repo}`);
      const digest = await pushImageIndex(access, archives as string[], pushed(imageName(repo)));
      images[repo] = { ref: imageName(repo), digest };
      log(`  ${pinned(imageName(repo), digest)}`);
      return digest;
    };
    // The backend and the plugin install the konnector: its image is pushed first, and they are bundled naming its
    // digest, so an app cluster runs the konnector this release built, whatever its tag comes to name later.
    const first = join(work, 'dist-konnector');
    const konnector = await step(`the konnector's image first (synth for ${f.registry ?? "the project's registries"})`, async () => {
      synthFor(f, first);
      const each: string[] = [];
      for (const arch of IMAGE_ARCHES) each.push((await ensureDeployableImages(first, log, ['konnector'], arch)).konnector!);
      return { archives: each, digest: await push('konnector', each) };
    });
    const dist = join(work, 'dist');
    await step('synth again, the backend and the plugin naming that konnector by digest', () => synthFor(f, dist, konnector.digest));

    const others = Object.keys(RELEASE_IMAGES).filter((d) => d !== 'konnector');
    const byArch = await step(`images for ${IMAGE_ARCHES.join(' and ')} (buildah bud of each synthesized Dockerfile)`, async () => {
      const built: Record<string, string>[] = [];
      for (const arch of IMAGE_ARCHES) built.push(await ensureDeployableImages(dist, log, others, arch));
      return built;
    });
    await step(`push the images${f.pushHost ? ` to ${f.pushHost}` : ''}`, async () => {
      for (const deployable of others)
        await push(
          deployable,
          byArch.map((b) => b[deployable]),
        );
    });

    const sboms = !f.sbom
      ? []
      : await step("an SBOM of each image and platform (syft, from the image's archive)", () =>
          writeSboms(
            f.out,
            [['konnector', konnector.archives] as const, ...others.map((d) => [d, byArch.map((b) => b[d]!)] as const)].flatMap(
              ([deployable, archives]) =>
                IMAGE_ARCHES.map((arch, i) => ({
                  ref: imageName(RELEASE_IMAGES[deployable]!),
                  name: RELEASE_IMAGES[deployable]!,
                  arch,
                  archive: archives[i]!,
                })),
            ),
            f.version,
            log,
          ),
        );

    const packages: ReleaseRecord['packages'] = {};
    await step('build and push the Crossplane packages (crossplane xpkg)', async () => {
      const crank = await ensureCrank('v2');
      // The function's runtime image of each architecture, embedded in a Function package of that platform.
      const runtimes: string[] = [];
      for (const [i, arch] of IMAGE_ARCHES.entries()) {
        const runtime = join(work, `function-runtime-${arch}.tar`);
        await dockerArchive(byArch[i]!.function!, imageName(RELEASE_IMAGES.function!), runtime);
        runtimes.push(runtime);
      }
      const fn = RELEASE_PACKAGES.function;
      const pushPkg = async (repo: string, build: Parameters<typeof pushPackage>[2]) => {
        const digest = await pushPackage(access, crank, build, pushed(packageName(repo)));
        packages[repo] = { ref: packageName(repo), digest };
        log(`  ${pinned(packageName(repo), digest)}`);
        return digest;
      };
      // The Function first: the Configuration depends on it by the digest just pushed (pinDependency throws if the
      // Configuration names no such dependency), so an installed release never resolves a tag to another Function.
      const fnDigest = await pushPkg(fn, { root: join(dist, 'packages', fn), runtimeImages: runtimes });
      const configuration = join(dist, 'packages', 'dataservices');
      const meta = join(configuration, 'crossplane.yaml');
      writeFileSync(meta, pinDependency(readFileSync(meta, 'utf8'), repositoryOf(packageName(fn)), fnDigest));
      await pushPkg(RELEASE_PACKAGES.configuration, { root: configuration, examples: join(configuration, 'examples') });
    });

    // Every image and package of ours, pinned, wherever the bundles and the chart name it.
    const pins = new Map([
      ...Object.values(images).map((i) => [i.ref, pinned(i.ref, i.digest)] as const),
      ...Object.values(packages).map((p) => [p.ref, pinnedPackage(p.ref, p.digest)] as const),
    ]);
    const repoDigests = new Map(Object.values(images).map((i) => [repositoryOf(i.ref), i.digest]));

    const chart = await step('package and push the Helm chart (OCI)', async () => {
      const helm = await ensureHelm(log);
      const src = join(dist, 'charts', 'klutch-kit');
      pinTree(src, pins);
      const values = join(src, 'values.yaml');
      writeFileSync(values, pinChartValues(readFileSync(values, 'utf8'), repoDigests));
      const dir = join(f.out, 'charts');
      mkdirSync(dir, { recursive: true });
      const r = spawnSync(helm, ['package', src, '--destination', dir], { encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`helm package ${src} failed:\n${r.stderr}${r.stdout}`);
      const tgz = join(
        dir,
        readdirSync(dir).find((x) => x.endsWith('.tgz'))!,
      );
      const repository = `${registry.images}/${CHART_REPOSITORY}`;
      const digest = await pushChart(access, helm, tgz, pushed(repository));
      const version = (parse(readFileSync(join(src, 'Chart.yaml'), 'utf8')) as { version: string }).version;
      const ref = `${repository}/klutch-kit:${version}`;
      log(`  ${pinned(ref, digest)}`);
      return { ref, digest };
    });

    const executables = await step(
      `the plugin's executables (${f.platforms.map(platformName).join(', ')}) and krew manifests`,
      async () => {
        const krew = await buildExecutables(dist, f.platforms, `${f.downloadUrl}/kubectl-bind.tar.gz`, log);
        const dir = join(f.out, 'kubectl-bind');
        cpSync(join(dist, 'kubectl-bind', 'krew'), dir, { recursive: true });
        return krew.executables.map((e) => ({
          platform: platformName(e.platform),
          file: join('kubectl-bind', basename(e.archive)),
          sha256: e.sha256,
        }));
      },
    );

    return await step('the pinned bundles, images.txt, SHA256SUMS, release.json', () => {
      for (const b of BUNDLES) {
        cpSync(join(dist, b), join(f.out, b), { recursive: true });
        pinTree(join(f.out, b), pins);
      }
      const kustomization = join(f.out, 'control-plane', 'kustomization.yaml');
      writeFileSync(kustomization, pinKustomizeImages(readFileSync(kustomization, 'utf8'), repoDigests));
      const record: ReleaseRecord = {
        version: f.version,
        registry,
        images,
        packages,
        chart,
        executables,
        sboms,
      };
      writeFileSync(join(f.out, 'images.txt'), imagesText(f.version, listed(f.out, record), dependencies(dist, record)));
      writeFileSync(join(f.out, 'release.json'), `${JSON.stringify(record, null, 2)}\n`);
      const sums = new Map(files(f.out).map((p) => [relative(f.out, p), sha256File(p)]));
      writeFileSync(join(f.out, 'SHA256SUMS'), checksumsText(sums));
      return record;
    });
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * `npm run synth` with every bundle built for the release's registry and, once pushed, the konnector image's digest
 * (lib/version.ts, scripts/bundle.mjs).
 */
function synthFor(f: ReleaseFlags, out: string, konnectorDigest?: string): void {
  const r = spawnSync(
    process.execPath,
    [
      join(REPOSITORY_ROOT, 'scripts', 'synth.mjs'),
      '--out',
      out,
      '--crossplane',
      f.crossplane,
      '--krew-uri',
      `${f.downloadUrl}/kubectl-bind.tar.gz`,
      '--quiet',
    ],
    // Without --registry, the project's own names: the bundles are then those of a plain `npm run synth`.
    {
      encoding: 'utf8',
      env: { ...process.env, [RELEASE_REGISTRY_ENV]: f.registry ?? '', [RELEASE_KONNECTOR_DIGEST_ENV]: konnectorDigest ?? '' },
    },
  );
  if (r.status !== 0) throw new Error(`npm run synth failed:\n${r.stderr}${r.stdout}`);
}

/** Every file below `dir`. */
function files(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((p) => join(dir, p))
    .filter((p) => statSync(p).isFile());
}

/** pinReferences over every YAML file below `dir`. */
function pinTree(dir: string, pins: ReadonlyMap<string, string>): void {
  for (const file of files(dir).filter((p) => /\.ya?ml$/.test(p))) {
    const text = readFileSync(file, 'utf8');
    const next = pinReferences(text, pins);
    if (next !== text) writeFileSync(file, next);
  }
}

/** The chart's `image: {repository, tag}` values of our images get `<tag>@<digest>` (its templates join them with `:`). */
export function pinChartValues(values: string, digests: ReadonlyMap<string, string>): string {
  const doc = parseDocument(values);
  visit(doc, {
    Map(_, node) {
      const repo = node.get('repository');
      const tag = node.get('tag', true);
      const digest = typeof repo === 'string' ? digests.get(repo) : undefined;
      if (digest && isScalar(tag) && typeof tag.value === 'string' && !tag.value.includes('@')) tag.value = `${tag.value}@${digest}`;
    },
  });
  return isMap(doc.contents) ? doc.toString({ lineWidth: 0 }) : values;
}

/** images.txt's entries: what the release made, and what its bundles name from upstream. */
function listed(out: string, r: ReleaseRecord): ListedImage[] {
  const ours: ListedImage[] = [
    ...Object.values(r.images).map((i) => ({ ref: pinned(i.ref, i.digest), kind: 'image' as const, source: 'release' as const })),
    ...Object.values(r.packages).map((p) => ({ ref: pinned(p.ref, p.digest), kind: 'package' as const, source: 'release' as const })),
    { ref: pinned(r.chart.ref, r.chart.digest), kind: 'chart', source: 'release' },
  ];
  const repos = new Set(ours.map((o) => repositoryOf(o.ref)));
  const upstream: ListedImage[] = BUNDLES.flatMap((b) => files(join(out, b)))
    .filter((p) => /\.ya?ml$/.test(p))
    .flatMap((p) => referencesIn(readFileSync(p, 'utf8')))
    .filter((x) => !repos.has(repositoryOf(x.ref)))
    .map((x) => ({ ...x, source: 'upstream' as const }));
  return [...ours, ...upstream];
}

/** The Configuration's dependencies that are not this release's: `<package> <constraint>`. */
function dependencies(dist: string, r: ReleaseRecord): string[] {
  const meta = parse(readFileSync(join(dist, 'packages', 'dataservices', 'crossplane.yaml'), 'utf8')) as {
    spec?: { dependsOn?: Record<string, string>[] };
  };
  const ours = new Set(Object.values(r.packages).map((p) => repositoryOf(p.ref)));
  return (meta.spec?.dependsOn ?? []).flatMap((d) => {
    const pkg = d.provider ?? d.function ?? d.configuration;
    return pkg && !ours.has(pkg) ? [`${pkg} ${d.version ?? ''}`.trim()] : [];
  });
}
