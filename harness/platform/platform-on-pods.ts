/**
 * The platform as an operator deploys it, as one harness step (issue 18 items 3 and 4; issue 37): a registry on the
 * node, upstream's images and packages mirrored there, our release published there (`o.publish`), Crossplane
 * installed with its Helm chart, our Configuration installed from the registry with its dependencies, the Function
 * and provider-kubernetes from the release's install bundle. The sandbox calls `startPlatformOnPods(cluster, node,
 * { publish })`; each step prints how long it took, and a failing step names the Pods involved and their logs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ensureCrank } from '../tools/crank';
import { PROVIDER_KUBERNETES_VERSION } from '../tools/provider-kubernetes';
import type { ClusterInfo } from '../cluster/control-plane';
import { PAUSE_IMAGE } from '../node/containerd';
import { ensurePauseImage } from '../node/images';
import type { Node } from '../node/node';
import { CROSSPLANE_IMAGE, ensureCrossplaneImages, PROVIDER_KUBERNETES_IMAGE } from '../node/platform-images';
import { mirrorOnNode, type Registry, startRegistry } from '../node/registry';
import { DEFAULT_IMAGE_REGISTRY } from '../../lib/version';
import {
  configurePackageRuntime,
  type CrossplaneOnPods,
  helmInstallCrossplane,
  installConfigurationFromRegistry,
  PROVIDER_KUBERNETES_REPOSITORY,
} from './crossplane-deployed';
import { mirrored } from '../../lib/image-reference';
import { type PackageToPush, providerAnyninesStandInRoot, providerKubernetesPackageRoot, pushImages, pushPackages } from './push';
import { cachedRegistryStorage, copyTree, registryContentKey, saveRegistryStorage } from './registry-cache';

/** The provider-anynines the default package depends on; its stand-in is pushed under this name (push.ts). */
export const PROVIDER_ANYNINES_STAND_IN = 'xpkg.upbound.io/anynines/provider-anynines:v1.5.0';

export interface PlatformOnPods {
  readonly registry: Registry;
  /** In-node references of the pushed images, by their public names. */
  readonly images: Readonly<Record<string, string>>;
  /** The release the platform was installed from. */
  readonly release: PublishedRelease;
  readonly crossplane: CrossplaneOnPods;
  /** Seconds each step took, by step. */
  readonly timings: Readonly<Record<string, number>>;
  /** Closes the test process's way to the registry (the rest ends with the node). */
  close(): Promise<void>;
}

export interface PlatformOnPodsOptions {
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
  /**
   * Publishes our release to the registry (`npm run release` with `--push-registry`: sandbox/release.ts), once the
   * registry runs; the platform is then installed from its folder.
   */
  readonly publish: (registry: Registry) => Promise<PublishedRelease>;
}

/** What the platform needs of a published release. */
export interface PublishedRelease {
  /** The release's folder: its install bundle (`control-plane/`) and what app clusters apply. */
  readonly dir: string;
  /** The public references of the images it published (the registry serves them as their mirror). */
  readonly images: readonly string[];
}

/** Registry, images, packages, the release, Crossplane, Configuration: see the file's header. */
export async function startPlatformOnPods(cluster: ClusterInfo, node: Node, o: PlatformOnPodsOptions): Promise<PlatformOnPods> {
  const log = o.log ?? ((line: string) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const timings: Record<string, number> = {};
  const step = async <T>(name: string, run: () => Promise<T> | T): Promise<T> => {
    const started = Date.now();
    log(`platform on Pods: ${name} ...`);
    const v = await run();
    timings[name] = (Date.now() - started) / 1000;
    return v;
  };

  // Upstream's images and packages, mirrored by the harness; ours come from the release below.
  const archives = await step('images', async () => {
    const go = await ensureCrossplaneImages(log);
    return {
      [CROSSPLANE_IMAGE]: go.crossplane,
      [PROVIDER_KUBERNETES_IMAGE]: go.providerKubernetes,
      [PAUSE_IMAGE]: ensurePauseImage(log),
    };
  });
  // `embeds`: the image a package carries as its runtime.
  const packages: (PackageToPush & { readonly embeds?: string })[] = [
    {
      ref: `${PROVIDER_KUBERNETES_REPOSITORY}:${PROVIDER_KUBERNETES_VERSION}`,
      root: providerKubernetesPackageRoot(),
      embeds: PROVIDER_KUBERNETES_IMAGE,
    },
    { ref: PROVIDER_ANYNINES_STAND_IN, root: providerAnyninesStandInRoot(node.runDir), embeds: PAUSE_IMAGE },
  ];
  const key = registryContentKey(archives, packages, await ensureCrank('v2'));
  const cached = cachedRegistryStorage(key);
  const registry = await step('registry', () => startRegistry(node, log, cached ? (data) => copyTree(cached, data) : undefined));
  try {
    // The node pulls the release's images by their public names (ghcr.io/...) from this registry, as a mirror.
    mirrorOnNode(node, registry, DEFAULT_IMAGE_REGISTRY);
    const images: Record<string, string> = Object.fromEntries(Object.keys(archives).map((ref) => [ref, mirrored(registry.host, ref)]));
    if (cached) log(`upstream images and packages in the registry from the cache (${cached}): nothing to push`);
    else {
      // The runtime images the packages embed, as docker-archives (crank's --embed-runtime-image-tarball).
      const runtimeDir = mkdtempSync(join(tmpdir(), 'klutch-kit-runtimes-'));
      const runtime = (ref: string) => join(runtimeDir, `${ref.replace(/[^a-z0-9.-]+/gi, '_')}.tar`);
      try {
        const embedded = packages.flatMap((p) => (p.embeds ? [p.embeds] : []));
        await step('push images', () =>
          pushImages(registry, archives, log, Object.fromEntries(embedded.map((ref) => [ref, runtime(ref)]))),
        );
        const withRuntimes = packages.map((p) => (p.embeds ? { ...p, runtimeImage: runtime(p.embeds) } : p));
        await step('push packages', () => pushPackages(registry, withRuntimes, log));
      } finally {
        rmSync(runtimeDir, { recursive: true, force: true });
      }
      await step('save the registry storage', () => saveRegistryStorage(key, registry.dataDir));
    }
    // Ours as an operator gets them: a release (`npm run release`), pushed to this registry as its mirror.
    const release = await step('our release, pushed to the registry', () => o.publish(registry));
    for (const ref of release.images) images[ref] = mirrored(registry.host, ref);
    const opts = { cluster, node, registry, dist: release.dir, log };
    const crossplane = await step('helm install crossplane', () => helmInstallCrossplane(opts));
    await step('package runtime', () => configurePackageRuntime(opts));
    await step('configuration', () => installConfigurationFromRegistry(opts));
    log(
      `platform on Pods ready: ${Object.entries(timings)
        .map(([k, v]) => `${k} ${v.toFixed(1)}s`)
        .join(', ')}`,
    );
    return { registry, images, release, crossplane, timings, close: () => registry.close() };
  } catch (e) {
    await registry.close();
    throw e;
  }
}
