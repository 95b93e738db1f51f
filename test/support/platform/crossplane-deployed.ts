/**
 * Crossplane as operators deploy it (issue 18 item 4; docs/decisions/crossplane-deployed.md): core v2.2.1 installed
 * with `helm install` of its own chart (cluster/charts/crossplane of the Go module), its image from the run's
 * registry, the registry's CA through the chart's `registryCaBundleConfig`. Then what a platform team with a private
 * registry applies: ImageConfigs that rewrite the public package registries to it, the provider-kubernetes runtime
 * config Klutch uses (its own ServiceAccount, cluster-admin) and the function's (what synth writes), and the
 * Configuration by its public name. Crossplane pulls it from the registry, resolves its `dependsOn` and starts our
 * function and provider-kubernetes as the Pods it makes. Nothing is patched by the test, nothing is in a package cache.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { crossplaneSource, crossplaneVersion } from '../../tools/crossplane';
import { ensureHelm } from '../../tools/helm';
import type { ClusterInfo } from '../control-plane';
import { apply, CONFIGURATION_PACKAGE, condition, CROSSPLANE_NAMESPACE, established, KUBERNETES_PROVIDER_CONFIG } from '../crossplane';
import { getObject, type Kube, kubeFor, type WireObject } from '../kube';
import type { Node } from '../node/node';
import type { Registry } from '../node/registry';
import { podFailure } from './pods';

/** The public registries our packages and their dependencies are named in; ImageConfigs rewrite them to the mirror. */
export const PUBLIC_REGISTRIES = ['xpkg.crossplane.io/', 'xpkg.upbound.io/'] as const;
export const PROVIDER_KUBERNETES_PACKAGE = 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes';
export const FUNCTION_PACKAGE = 'xpkg.crossplane.io/klutch-kit/function-dataservices';
/** The package objects Crossplane's dependency resolver makes for `dependsOn` (named after the repository path). */
export const DEPENDENCY_PACKAGES = {
  function: { kind: 'Function', plural: 'functions', name: 'klutch-kit-function-dataservices' },
  providerKubernetes: { kind: 'Provider', plural: 'providers', name: 'crossplane-contrib-provider-kubernetes' },
  providerAnynines: { kind: 'Provider', plural: 'providers', name: 'anynines-provider-anynines' },
} as const;
const PROVIDER_KUBERNETES_SA = 'provider-kubernetes';
const WAIT_MS = 240_000;

export interface CrossplaneOnPods {
  /** The Helm release (`helm status` works on it). */
  readonly release: string;
  readonly namespace: string;
}

export interface InstallCrossplaneOptions {
  readonly cluster: ClusterInfo;
  readonly node: Node;
  readonly registry: Registry;
  /** `npm run synth` output: the function's DeploymentRuntimeConfig in control-plane/function/. */
  readonly dist: string;
  readonly log: (line: string) => void;
}

/**
 * helm install of Crossplane's chart; resolves when its Deployment is Available (core init done: CRDs, webhook
 * configuration and the ImageConfig CRD established). A failure names the Pod and its log.
 */
export async function helmInstallCrossplane(o: InstallCrossplaneOptions): Promise<CrossplaneOnPods> {
  const helm = await ensureHelm(o.log);
  const kube = kubeFor(o.cluster);
  const started = Date.now();
  // The chart mounts this ConfigMap into core and gives its path to `--ca-bundle-path`: packages are pulled over TLS.
  await apply(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CROSSPLANE_NAMESPACE } });
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name: 'registry-ca', namespace: CROSSPLANE_NAMESPACE },
    data: { 'ca.crt': o.registry.ca },
  });
  const chart = join(crossplaneSource('v2'), 'cluster', 'charts', 'crossplane');
  const version = crossplaneVersion('v2');
  const home = mkdtempSync(join(tmpdir(), 'klutch-kit-helm-'));
  try {
    const r = spawnSync(
      helm,
      [
        'install',
        'crossplane',
        chart,
        '--namespace',
        CROSSPLANE_NAMESPACE,
        '--kubeconfig',
        o.cluster.kubeconfig,
        '--set',
        `image.repository=${o.registry.host}/crossplane/crossplane`,
        '--set',
        `image.tag=${version}`,
        '--set',
        'registryCaBundleConfig.name=registry-ca',
        '--set',
        'registryCaBundleConfig.key=ca.crt',
      ],
      // helm keeps its cache, config and data under these; none of the machine's.
      {
        encoding: 'utf8',
        timeout: 120_000,
        env: {
          ...process.env,
          HELM_CACHE_HOME: join(home, 'cache'),
          HELM_CONFIG_HOME: join(home, 'config'),
          HELM_DATA_HOME: join(home, 'data'),
        },
      },
    );
    if (r.status !== 0)
      throw new Error(`helm install of Crossplane's chart ${chart} failed:\n${r.error?.message ?? ''}${r.stdout}${r.stderr}`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  o.log(`helm installed Crossplane ${version} (chart of its Go module, image ${o.registry.host}/crossplane/crossplane:${version})`);
  await deploymentAvailable(kube, o.node, CROSSPLANE_NAMESPACE, 'crossplane', 'app=crossplane');
  await established(kube, 'imageconfigs.pkg.crossplane.io');
  o.log(`Crossplane core Available as a Pod in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return { release: 'crossplane', namespace: CROSSPLANE_NAMESPACE };
}

/**
 * What a platform team with a private registry applies before the Configuration: ImageConfigs rewriting the public
 * registries to it, the runtime configs of provider-kubernetes (Klutch's: own ServiceAccount, cluster-admin) and of our
 * function (synth's restricted one), matched by ImageConfig so the packages the resolver installs get them.
 */
export async function configurePackageRuntime(o: InstallCrossplaneOptions): Promise<void> {
  const kube = kubeFor(o.cluster);
  for (const from of PUBLIC_REGISTRIES) {
    await apply(kube, {
      apiVersion: 'pkg.crossplane.io/v1beta1',
      kind: 'ImageConfig',
      metadata: { name: `mirror-${from.replace(/[^a-z0-9]+/g, '-').replace(/-$/, '')}` },
      spec: { matchImages: [{ type: 'Prefix', prefix: from }], rewriteImage: { prefix: `${o.registry.host}/` } },
    });
  }
  const fnDir = join(o.dist, 'control-plane', 'function');
  const fnRuntime = readdirSync(fnDir)
    .filter((f) => f.startsWith('deploymentruntimeconfig-'))
    .flatMap((f) => parseAllDocuments(readFileSync(join(fnDir, f), 'utf8')).map((d) => d.toJS() as WireObject));
  if (fnRuntime.length !== 1) throw new Error(`expected one DeploymentRuntimeConfig in ${fnDir}, found ${fnRuntime.length}`);
  await apply(kube, fnRuntime[0]!);
  await apply(kube, {
    apiVersion: 'pkg.crossplane.io/v1beta1',
    kind: 'DeploymentRuntimeConfig',
    metadata: { name: PROVIDER_KUBERNETES_SA },
    spec: { serviceAccountTemplate: { metadata: { name: PROVIDER_KUBERNETES_SA } } },
  });
  await apply(kube, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: PROVIDER_KUBERNETES_SA },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
    subjects: [{ kind: 'ServiceAccount', name: PROVIDER_KUBERNETES_SA, namespace: CROSSPLANE_NAMESPACE }],
  });
  // The runtime ImageConfig is matched against the package's resolved (rewritten) source.
  const runtimeFor = async (name: string, pkg: string, config: string) =>
    apply(kube, {
      apiVersion: 'pkg.crossplane.io/v1beta1',
      kind: 'ImageConfig',
      metadata: { name },
      spec: {
        matchImages: [{ type: 'Prefix', prefix: pkg.replace(/^[^/]+\//, `${o.registry.host}/`) }],
        runtime: { configRef: { name: config } },
      },
    });
  await runtimeFor('runtime-provider-kubernetes', PROVIDER_KUBERNETES_PACKAGE, PROVIDER_KUBERNETES_SA);
  await runtimeFor('runtime-function-dataservices', FUNCTION_PACKAGE, fnRuntime[0]!.metadata.name);
}

/**
 * The Configuration by its public name; resolves when it is Healthy, its dependencies are Healthy packages made by
 * the resolver, and their Pods run. Then the ProviderConfig `kubernetes-provider` (InjectedIdentity), as Klutch has it.
 */
export async function installConfigurationFromRegistry(o: InstallCrossplaneOptions): Promise<void> {
  const kube = kubeFor(o.cluster);
  const started = Date.now();
  await apply(kube, {
    apiVersion: 'pkg.crossplane.io/v1',
    kind: 'Configuration',
    metadata: { name: 'anynines-dataservices' },
    spec: { package: CONFIGURATION_PACKAGE },
  });
  await packageHealthy(kube, o.node, 'configurations', 'anynines-dataservices');
  for (const p of Object.values(DEPENDENCY_PACKAGES)) await packageHealthy(kube, o.node, p.plural, p.name);
  o.log(`Configuration ${CONFIGURATION_PACKAGE} and its dependencies Healthy in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  await established(kube, 'providerconfigs.kubernetes.crossplane.io');
  await apply(kube, {
    apiVersion: 'kubernetes.crossplane.io/v1alpha1',
    kind: 'ProviderConfig',
    metadata: { name: KUBERNETES_PROVIDER_CONFIG },
    spec: { credentials: { source: 'InjectedIdentity' } },
  });
}

/** Waits for a package to be Installed and Healthy; the error says its conditions and the Pods of its revision. */
export async function packageHealthy(kube: Kube, node: Node, plural: string, name: string): Promise<WireObject> {
  const path = `/apis/pkg.crossplane.io/v1/${plural}/${name}`;
  const deadline = Date.now() + WAIT_MS;
  let seen: WireObject | undefined;
  for (;;) {
    seen = await getObject(kube, path);
    if (condition(seen, 'Installed') === 'True' && condition(seen, 'Healthy') === 'True') return seen!;
    if (Date.now() > deadline) {
      throw new Error(
        `${plural}/${name} was not Installed and Healthy after ${WAIT_MS / 1000}s: ${JSON.stringify(seen?.status?.conditions)}\n` +
          (await podFailure(kube, node, CROSSPLANE_NAMESPACE, `pkg.crossplane.io/package=${name}`)) +
          (await podFailure(kube, node, CROSSPLANE_NAMESPACE, 'app=crossplane')),
      );
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Waits for a Deployment to be Available; the error names its Pods, their status and their logs. */
export async function deploymentAvailable(kube: Kube, node: Node, ns: string, name: string, selector: string): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const d = await getObject(kube, `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
    if (condition(d, 'Available') === 'True' && d!.status.readyReplicas === d!.spec.replicas) return;
    if (Date.now() > deadline) {
      throw new Error(`Deployment ${ns}/${name} not Available after ${WAIT_MS / 1000}s\n${await podFailure(kube, node, ns, selector)}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}
