/**
 * The platform as an operator deploys it, as one harness step (issue 18 items 3 and 4): a registry on the node, the
 * images and packages pushed there, Crossplane installed with its Helm chart, our Configuration installed from the
 * registry with its dependencies. Suites and the sandbox call `startPlatformOnPods(cluster, node, dist)`; each step
 * prints how long it took, and a failing step names the Pods involved and their logs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_FUNCTION_PACKAGE } from '../../compositions/function-ref';
import { ensureCrank } from '../tools/crank';
import { PROVIDER_KUBERNETES_VERSION } from '../tools/provider-kubernetes';
import type { ClusterInfo } from '../cluster/control-plane';
import { CONFIGURATION_PACKAGE } from '../crossplane/crossplane';
import { PAUSE_IMAGE } from '../node/containerd';
import { ensurePauseImage } from '../node/images';
import type { Node } from '../node/node';
import {
  CROSSPLANE_IMAGE,
  DEPLOYABLE_IMAGES,
  ensureCrossplaneImages,
  ensureDeployableImages,
  PROVIDER_KUBERNETES_IMAGE,
} from '../node/platform-images';
import { type Registry, startRegistry } from '../node/registry';
import {
  configurePackageRuntime,
  type CrossplaneOnPods,
  helmInstallCrossplane,
  installConfigurationFromRegistry,
  PROVIDER_KUBERNETES_REPOSITORY,
} from './crossplane-deployed';
import { mirrored, type PackageToPush, providerAnyninesStandInRoot, providerKubernetesPackageRoot, pushImages, pushPackages } from './push';
import { cachedRegistryStorage, copyTree, registryContentKey, saveRegistryStorage } from './registry-cache';

/** The provider-anynines the default package depends on; its stand-in is pushed under this name (push.ts). */
export const PROVIDER_ANYNINES_STAND_IN = 'xpkg.upbound.io/anynines/provider-anynines:v1.5.0';

export interface PlatformOnPods {
  readonly registry: Registry;
  /** In-node references of the pushed images, by their public names. */
  readonly images: Readonly<Record<string, string>>;
  readonly crossplane: CrossplaneOnPods;
  /** Seconds each step took, by step. */
  readonly timings: Readonly<Record<string, number>>;
  /** Closes the test process's way to the registry (the rest ends with the node). */
  close(): Promise<void>;
}

export interface PlatformOnPodsOptions {
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
}

/** Registry, images, packages, Crossplane, Configuration: see the file's header. `dist` is `npm run synth` output. */
export async function startPlatformOnPods(
  cluster: ClusterInfo,
  node: Node,
  dist: string,
  o: PlatformOnPodsOptions = {},
): Promise<PlatformOnPods> {
  const log = o.log ?? ((line: string) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const timings: Record<string, number> = {};
  const step = async <T>(name: string, run: () => Promise<T> | T): Promise<T> => {
    const started = Date.now();
    log(`platform on Pods: ${name} ...`);
    const v = await run();
    timings[name] = (Date.now() - started) / 1000;
    return v;
  };

  const archives = await step('images', async () => {
    const deployables = await ensureDeployableImages(dist, log);
    const go = await ensureCrossplaneImages(log);
    return {
      ...Object.fromEntries(Object.entries(deployables).map(([name, file]) => [DEPLOYABLE_IMAGES[name]!, file])),
      [CROSSPLANE_IMAGE]: go.crossplane,
      [PROVIDER_KUBERNETES_IMAGE]: go.providerKubernetes,
      [PAUSE_IMAGE]: ensurePauseImage(log),
    };
  });
  // `embeds`: the image a package carries as its runtime.
  const packages: (PackageToPush & { readonly embeds?: string })[] = [
    { ref: DEFAULT_FUNCTION_PACKAGE, root: join(dist, 'packages', 'function-dataservices'), embeds: DEPLOYABLE_IMAGES.function! },
    {
      ref: `${PROVIDER_KUBERNETES_REPOSITORY}:${PROVIDER_KUBERNETES_VERSION}`,
      root: providerKubernetesPackageRoot(),
      embeds: PROVIDER_KUBERNETES_IMAGE,
    },
    { ref: PROVIDER_ANYNINES_STAND_IN, root: providerAnyninesStandInRoot(node.runDir), embeds: PAUSE_IMAGE },
    {
      ref: CONFIGURATION_PACKAGE,
      root: join(dist, 'packages', 'dataservices'),
      examples: join(dist, 'packages', 'dataservices', 'examples'),
      ignore: ['examples/*'],
    },
  ];
  const key = registryContentKey(archives, packages, await ensureCrank('v2'));
  const cached = cachedRegistryStorage(key);
  const registry = await step('registry', () => startRegistry(node, log, cached ? (data) => copyTree(cached, data) : undefined));
  try {
    let images: Record<string, string>;
    if (cached) {
      images = Object.fromEntries(Object.keys(archives).map((ref) => [ref, mirrored(registry.host, ref)]));
      log(`images and packages in the registry from the cache (${cached}): nothing to push`);
    } else {
      // The runtime images the packages embed, as docker-archives (crank's --embed-runtime-image-tarball).
      const runtimeDir = mkdtempSync(join(tmpdir(), 'klutch-kit-runtimes-'));
      const runtime = (ref: string) => join(runtimeDir, `${ref.replace(/[^a-z0-9.-]+/gi, '_')}.tar`);
      try {
        const embedded = packages.flatMap((p) => (p.embeds ? [p.embeds] : []));
        images = await step('push images', () =>
          pushImages(registry, archives, log, Object.fromEntries(embedded.map((ref) => [ref, runtime(ref)]))),
        );
        const withRuntimes = packages.map((p) => (p.embeds ? { ...p, runtimeImage: runtime(p.embeds) } : p));
        await step('push packages', () => pushPackages(registry, withRuntimes, log));
      } finally {
        rmSync(runtimeDir, { recursive: true, force: true });
      }
      await step('save the registry storage', () => saveRegistryStorage(key, registry.dataDir));
    }
    const opts = { cluster, node, registry, dist, log };
    const crossplane = await step('helm install crossplane', () => helmInstallCrossplane(opts));
    await step('package runtime', () => configurePackageRuntime(opts));
    await step('configuration', () => installConfigurationFromRegistry(opts));
    log(
      `platform on Pods ready: ${Object.entries(timings)
        .map(([k, v]) => `${k} ${v.toFixed(1)}s`)
        .join(', ')}`,
    );
    return { registry, images, crossplane, timings, close: () => registry.close() };
  } catch (e) {
    await registry.close();
    throw e;
  }
}
