/**
 * Crossplane as operators deploy it (issue 18 item 4; docs/decisions/crossplane-deployed.md): core v2.4.0 installed
 * with `helm install` of its own chart (cluster/charts/crossplane of the Go module), its image from the run's
 * registry, the registry's CA through the chart's `registryCaBundleConfig`. Then what a platform team with a private
 * registry applies: ImageConfigs that rewrite the public package registries to it, the install bundle's Function and
 * provider-kubernetes (their runtime configs and RBAC, what synth writes), and the Configuration by its public name. Crossplane pulls it from the registry, resolves its `dependsOn` and starts our
 * function and provider-kubernetes as the Pods it makes. Nothing is patched by the test, nothing is in a package cache.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { crossplaneSource, crossplaneVersion } from '../tools/crossplane';
import { ensureHelm } from '../tools/helm';
import type { ClusterInfo } from '../cluster/control-plane';
import { KUBERNETES_PROVIDER_CONFIG } from '../../backends/kubernetes-object';
import { CROSSPLANE_NAMESPACE } from '../../synth/synth';
import { CONFIGURATION_PACKAGE } from '../crossplane/crossplane';
import { apply, condition, established } from '../cluster/kube';
import { getObject, type Kube, kubeFor, type WireObject } from '../cluster/kube';
import type { Node } from '../node/node';
import type { Registry } from '../node/registry';
import { runCommand } from '../cluster/processes';
import { podFailure } from './pods';
import { sleep } from '../../lib/abort';

/** The public registries our packages and their dependencies are named in; ImageConfigs rewrite them to the mirror. */
const PUBLIC_REGISTRIES = ['xpkg.crossplane.io/', 'xpkg.upbound.io/'] as const;
export const PROVIDER_KUBERNETES_REPOSITORY = 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes';
/**
 * The package objects of the Configuration's `dependsOn`, named after the repository path as the dependency resolver
 * names them (the install bundle's Function and Provider use the same names; provider-anynines the resolver makes).
 */
export const DEPENDENCY_PACKAGES = {
  function: { kind: 'Function', plural: 'functions', name: 'klutch-kit-function-dataservices' },
  providerKubernetes: { kind: 'Provider', plural: 'providers', name: 'crossplane-contrib-provider-kubernetes' },
  providerAnynines: { kind: 'Provider', plural: 'providers', name: 'anynines-provider-anynines' },
} as const;
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
    // Not spawnSync: the sandbox installs CloudNativePG and the bind backend meanwhile, in the same event loop.
    const r = await runCommand(
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
        timeoutMs: 120_000,
        env: {
          ...process.env,
          HELM_CACHE_HOME: join(home, 'cache'),
          HELM_CONFIG_HOME: join(home, 'config'),
          HELM_DATA_HOME: join(home, 'data'),
        },
      },
    );
    if (r.code !== 0) throw new Error(`helm install of Crossplane's chart ${chart} failed:\n${r.output}`);
  } finally {
    rmSync(home, { recursive: true, force: true });
  }
  o.log(`helm installed Crossplane ${version} (chart of its Go module, image ${o.registry.host}/crossplane/crossplane:${version})`);
  await deploymentAvailable(kube, o.node, CROSSPLANE_NAMESPACE, 'crossplane', 'app=crossplane');
  await established(kube, 'imageconfigs.pkg.crossplane.io');
  o.log(`Crossplane core Available as a Pod in ${((Date.now() - started) / 1000).toFixed(1)}s`);
  return { release: 'crossplane', namespace: CROSSPLANE_NAMESPACE };
}

/** The documents of YAML files of the install bundle synth wrote (`<dist>/control-plane/<path>`). */
function bundle(dist: string, ...paths: string[]): WireObject[] {
  return paths.flatMap((p) => parseAllDocuments(readFileSync(join(dist, 'control-plane', p), 'utf8')).map((d) => d.toJS() as WireObject));
}

/**
 * What a platform team with a private registry applies before the Configuration: ImageConfigs rewriting the public
 * registries to it, then the install bundle's Function and provider-kubernetes with their runtime configs and RBAC
 * (`control-plane/function/`, `control-plane/provider-kubernetes/`, docs/install-bundle.md), so the packages the
 * Configuration depends on run the way synth configures them.
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
  const docs = [
    ...bundle(o.dist, ...readdirSync(fnDir).map((f) => join('function', f))),
    ...bundle(o.dist, join('provider-kubernetes', 'provider-kubernetes.yaml')),
  ];
  // Runtime configs and RBAC first: a package names its DeploymentRuntimeConfig when it is created.
  const first = (d: WireObject) => (d.kind === 'Function' || d.kind === 'Provider' ? 1 : 0);
  for (const d of docs.sort((a, b) => first(a) - first(b))) await apply(kube, d);
}

/**
 * The Configuration by its public name; resolves when it and its dependencies are Healthy packages (the resolver
 * checks the bundle's Function and provider-kubernetes against `dependsOn` and installs what is missing) and their
 * Pods run. Then the bundle's ProviderConfig `kubernetes-provider` (InjectedIdentity; a ClusterProviderConfig on the v2 target).
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
  // The default package's ProviderConfig, or the v2 package's ClusterProviderConfig (kubernetes.m.crossplane.io).
  const configs = readdirSync(join(o.dist, 'control-plane', 'provider-configs')).filter((f) =>
    f.endsWith(`-${KUBERNETES_PROVIDER_CONFIG}.yaml`),
  );
  if (configs.length === 0)
    throw new Error(`${o.dist}/control-plane/provider-configs has no config named ${KUBERNETES_PROVIDER_CONFIG}: run npm run synth`);
  for (const d of bundle(o.dist, ...configs.map((f) => join('provider-configs', f)))) {
    await established(kube, `${String(d.kind).toLowerCase()}s.${String(d.apiVersion).split('/')[0]}`);
    await apply(kube, d);
  }
}

/** Waits for a package to be Installed and Healthy; the error says its conditions and the Pods of its revision. */
export async function packageHealthy(kube: Kube, node: Pick<Node, 'podLogs'>, plural: string, name: string): Promise<WireObject> {
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
    await sleep(500);
  }
}

/** Waits for a Deployment to be Available; the error names its Pods, their status and their logs. */
export async function deploymentAvailable(
  kube: Kube,
  node: Pick<Node, 'podLogs'>,
  ns: string,
  name: string,
  selector: string,
): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const d = await getObject(kube, `/apis/apps/v1/namespaces/${ns}/deployments/${name}`);
    if (condition(d, 'Available') === 'True' && d!.status.readyReplicas === d!.spec.replicas) return;
    if (Date.now() > deadline) {
      throw new Error(`Deployment ${ns}/${name} not Available after ${WAIT_MS / 1000}s\n${await podFailure(kube, node, ns, selector)}`);
    }
    await sleep(500);
  }
}
