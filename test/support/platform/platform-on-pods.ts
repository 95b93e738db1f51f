/**
 * The platform as an operator deploys it, as one harness step (issue 18 items 3 and 4): a registry on the node, the
 * images and packages pushed there, Crossplane installed with its Helm chart, our Configuration installed from the
 * registry with its dependencies. Suites and the sandbox call `startPlatformOnPods(cluster, node, dist)`; each step
 * prints how long it took, and a failing step names the Pods involved and their logs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DEFAULT_FUNCTION_PACKAGE } from '../../../compositions/function-ref';
import { PROVIDER_KUBERNETES_VERSION } from '../../tools/provider-kubernetes';
import type { ClusterInfo } from '../control-plane';
import { CONFIGURATION_PACKAGE } from '../crossplane';
import { ensurePauseImage, PAUSE_IMAGE } from '../node/images';
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
  PROVIDER_KUBERNETES_PACKAGE,
} from './crossplane-deployed';
import { providerAnyninesStandInRoot, providerKubernetesPackageRoot, pushImages, pushPackages } from './push';

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
  const registry = await step('registry', () => startRegistry(node, log));
  try {
    // The runtime images the packages embed, as docker-archives (crank's --embed-runtime-image-tarball).
    const runtimeDir = mkdtempSync(join(tmpdir(), 'klutch-kit-runtimes-'));
    const runtime = (ref: string) => join(runtimeDir, `${ref.replace(/[^a-z0-9.-]+/gi, '_')}.tar`);
    const embedded = [DEPLOYABLE_IMAGES.function!, PROVIDER_KUBERNETES_IMAGE, PAUSE_IMAGE];
    const images = await step('push images', () =>
      pushImages(registry, archives, log, Object.fromEntries(embedded.map((ref) => [ref, runtime(ref)]))),
    );
    await step('push packages', () => {
      const fromTest = runtime;
      return pushPackages(
        registry,
        [
          {
            ref: DEFAULT_FUNCTION_PACKAGE,
            root: join(dist, 'packages', 'function-dataservices'),
            runtimeImage: fromTest(DEPLOYABLE_IMAGES.function!),
          },
          {
            ref: `${PROVIDER_KUBERNETES_PACKAGE}:${PROVIDER_KUBERNETES_VERSION}`,
            root: providerKubernetesPackageRoot(),
            runtimeImage: fromTest(PROVIDER_KUBERNETES_IMAGE),
          },
          { ref: PROVIDER_ANYNINES_STAND_IN, root: providerAnyninesStandInRoot(node.runDir), runtimeImage: fromTest(PAUSE_IMAGE) },
          {
            ref: CONFIGURATION_PACKAGE,
            root: join(dist, 'packages', 'dataservices'),
            examples: join(dist, 'packages', 'dataservices', 'examples'),
            ignore: ['examples/*'],
          },
        ],
        log,
      ).finally(() => rmSync(runtimeDir, { recursive: true, force: true }));
    });
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
