/**
 * The real Crossplane control-plane loop on a harness cluster, without Docker or a kubelet: Crossplane core
 * (`--package-runtime=External`; v2.4.0 or v1.20.11, `version` picks), our composition function (`node <bundle>` with
 * mTLS on loopback) and provider-kubernetes v1.3.1, all out of cluster as processes of the test run. The recipe and
 * why each piece is the way it is: docs/decisions/crossplane-e2e.md.
 *
 * Built from named steps that `startCrossplane` runs in order, like control-plane.ts:
 * - `crossplanePki`: one test CA for Crossplane's client certificate (what it shows functions), the function's
 *   server certificate and both webhook servers;
 * - `initCore`: what `crossplane core init` does from its image — Crossplane's CRDs, its namespace, the package
 *   Lock, and its webhook configurations pointing at the loopback webhook server (with caBundle): v1.20 serves
 *   XRD and Composition validation and the Usage webhook, v2 only the Usage one;
 * - `startCrossplaneCore`, `startFunction`, `startProviderKubernetes`: the processes;
 * - `installFunction`: our Function package through the package manager (package cache, `packagePullPolicy: Never`)
 *   and its revision's `status.endpoint` set to the function's address, as an external runtime would (on v2 also
 *   `status.tlsServerSecretName` and the `RuntimeHealthy` condition, without which the Function is never Healthy);
 * - `configureProviderKubernetes`: the ProviderConfig `kubernetes-provider` with a kubeconfig Secret;
 * - `installConfiguration`: our Configuration (11 XRDs, 15 Compositions) through the package manager.
 *
 * Every process is started with a parent-death guard (`setpriv --pdeathsig TERM`), so a killed test run leaves
 * nothing running; `stop()` ends them all. A failing step names the process and its log file.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, extname, join, relative } from 'node:path';
import { gzipSync } from 'node:zlib';
import { PatchStrategy } from '@kubernetes/client-node';
import { KUBERNETES_PROVIDER_CONFIG } from '../../backends/kubernetes-object';
import { DEFAULT_FUNCTION_PACKAGE } from '../../compositions/function-ref';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { PROVIDER_KUBERNETES_ARGS } from '../../synth/provider-configs';
import { CROSSPLANE_NAMESPACE, FUNCTION_PACKAGE_DIR, PACKAGE_DIR } from '../../synth/synth';
import { type CrossplaneLine, crossplaneSource, crossplaneVersion, ensureCrossplane } from '../tools/crossplane';
import { ensureProviderKubernetes, providerKubernetesSource } from '../tools/provider-kubernetes';
import { parseYaml, ROOT, runSynth, runSynthAsync } from './catalog';
import type { ClusterInfo, Track } from '../cluster/control-plane';
import { apply, condition, established, getIfExists, installCrds, type Kube, kubeFor, pollDelay } from '../cluster/kube';
import { createCa, writeTlsDir } from '../cluster/pki';
import { freePorts, launch, probe, type Proc, tail } from '../cluster/processes';
import { sleep } from '../../lib/abort';
import { releasePackage } from '../../lib/version';

type Obj = Record<string, any>;

/** The Configuration's package reference and object name (the reference only has to be unique in the cache). */
export const CONFIGURATION_PACKAGE = releasePackage('anynines-dataservices');
export const CONFIGURATION_NAME = 'anynines-dataservices';
const PROVIDER_KUBECONFIG_SECRET = 'provider-kubernetes-kubeconfig';
const WAIT_MS = 120_000;

export interface CrossplaneOptions {
  /**
   * Which Crossplane core runs: `v2` (v2.4.0, the main target: the default package's claims are LegacyCluster XRDs
   * there) or `v1` (v1.20.11, the last 1.x line). @default 'v1' (the sandbox and the bench)
   */
  readonly version?: CrossplaneLine;
  /** Logs, certificates and the package cache. @default `crossplane/` beside the cluster's logs */
  readonly runDir?: string;
  /** Synth output to install (path → content, as `render()` returns it). @default what `npm run synth` writes */
  readonly files?: ReadonlyMap<string, string>;
  /** The function package reference the synth output was made with. @default DEFAULT_FUNCTION_PACKAGE */
  readonly functionPackage?: string;
  /**
   * Install our Function and Configuration packages. Without them the processes run and Crossplane serves, but
   * nothing composes: for tests about the processes themselves. @default true
   */
  readonly packages?: boolean;
  /**
   * How often provider-kubernetes re-reads a Ready Object's wrapped resource (one that is not Ready is re-read every
   * 30 s, hard-coded in v1.3.1). Status a backend writes reaches the claim at once through the provider's watches
   * (`--enable-watches`, `spec.watch: true`); the poll is what catches drift. A short poll costs the API server a read
   * of every Ready Object that often, for nothing the tests wait on. @default 1m
   */
  readonly providerPoll?: string;
  /**
   * provider-kubernetes' arguments besides ports and poll, as the DeploymentRuntimeConfig gives them (`--enable-watches`:
   * an Object with `spec.watch: true` is reconciled when its wrapped object changes, not only on its poll).
   * @default what synth ships (PROVIDER_KUBERNETES_ARGS)
   */
  readonly providerArgs?: readonly string[];
  /**
   * Debug logs. Crossplane's say what each reconcile did (function results, composed resources), which is what a
   * failure needs; the provider's repeat controller-runtime's every step. @default { crossplane: true, provider: false }
   */
  readonly debug?: { readonly crossplane?: boolean; readonly provider?: boolean };
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
}

export interface CrossplanePki {
  readonly dir: string;
  /** PEM of the CA that signed every certificate below. */
  readonly ca: string;
  /** Crossplane's client certificate (ca.crt, tls.crt, tls.key): what it presents to functions. */
  readonly crossplaneClient: string;
  /** Crossplane's webhook server. */
  readonly crossplaneWebhook: string;
  /** The function's gRPC server; SAN IP:127.0.0.1, because gRPC checks the endpoint's host. */
  readonly functionServer: string;
  /** provider-kubernetes' webhook server (Object conversion). */
  readonly providerWebhook: string;
}

export interface Crossplane {
  readonly runDir: string;
  /** The Crossplane line that runs, and its release (`v2.4.0`, `v1.20.11`). */
  readonly version: CrossplaneLine;
  readonly release: string;
  /** Crossplane core's process (a new one after `startCore`). */
  readonly crossplane: Proc;
  readonly fn: Proc;
  readonly provider: Proc;
  /** Process ids of everything started, for checks that nothing is left behind. */
  readonly pids: readonly number[];
  /** `functionRef.name` of our Compositions: the installed Function's name. */
  readonly functionName: string;
  /** `127.0.0.1:<port>`, the function's mTLS gRPC address (its FunctionRevision's status.endpoint). */
  readonly functionEndpoint: string;
  /** Prometheus endpoints, for benchmarks and diagnostics. */
  readonly metrics: { readonly crossplane: string; readonly fn: string; readonly provider: string };
  /** The synth output that was installed. */
  readonly files: ReadonlyMap<string, string>;
  /**
   * Stops Crossplane core alone, as `kubectl -n crossplane-system scale deployment crossplane --replicas=0` would: its
   * objects stay, nothing reconciles them; the provider and the function keep running.
   */
  stopCore(): Promise<void>;
  /** Starts Crossplane core again (after `stopCore`), its webhook configurations pointed at the new process. */
  startCore(): Promise<void>;
  /**
   * Installs the Configuration of other synth output (another package target, `render({ target: 'v2' })`) in place of
   * the current one: its package manager makes a new revision. Resolves when it is Healthy and its XRDs Established;
   * with `wait: false` (Crossplane stopped) once the Configuration names the new package.
   */
  switchConfiguration(files: ReadonlyMap<string, string>, o?: { wait?: boolean }): Promise<void>;
  /** Ends every process (Crossplane first, then the provider, then the function) and deletes keys and the cache. */
  stop(): Promise<void>;
}

// ---------------------------------------------------------------------------------------------------------------------
// The steps.

/** One test CA and the certificates Crossplane, the function and the webhooks need (harness/cluster/pki.ts). */
export async function crossplanePki(dir: string): Promise<CrossplanePki> {
  const ca = await createCa('klutch-kit crossplane test CA');
  const loopback = { ips: ['127.0.0.1'], dnsNames: ['localhost'] };
  const [client, webhook, fn, provider] = await Promise.all([
    ca.issue({ commonName: 'crossplane', usages: ['client'] }),
    ca.issue({ commonName: 'crossplane-webhook', ...loopback }),
    ca.issue({ commonName: 'function-dataservices', ...loopback }),
    ca.issue({ commonName: 'provider-kubernetes-webhook', ...loopback }),
  ]);
  return {
    dir,
    ca: ca.cert,
    crossplaneClient: writeTlsDir(join(dir, 'crossplane-client'), client, ca),
    crossplaneWebhook: writeTlsDir(join(dir, 'crossplane-webhook'), webhook, ca),
    functionServer: writeTlsDir(join(dir, 'function'), fn, ca),
    providerWebhook: writeTlsDir(join(dir, 'provider-webhook'), provider, ca),
  };
}

/**
 * What `crossplane core init` does, which reads its files from the image (/crds, /webhookconfigurations): applies
 * Crossplane's CRDs from the Go module, creates its namespace and the package Lock. Webhook configurations come later
 * (`registerWebhooks`), once the webhook server answers: they fail closed.
 */
async function initCore(kube: Kube, source: string): Promise<void> {
  const crds = yamlDir(join(source, 'cluster', 'crds'));
  await Promise.all(crds.map((crd) => apply(kube, crd)));
  await Promise.all([
    apply(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CROSSPLANE_NAMESPACE } }),
    ...crds.map((crd) => established(kube, crd.metadata.name)),
  ]);
  await apply(kube, { apiVersion: 'pkg.crossplane.io/v1beta1', kind: 'Lock', metadata: { name: 'lock' } });
}

/** Crossplane's webhook configurations from the module, pointing at `https://127.0.0.1:<port>` instead of a Service. */
async function registerWebhooks(kube: Kube, source: string, port: number, ca: string): Promise<void> {
  for (const conf of yamlDir(join(source, 'cluster', 'webhookconfigurations'))) {
    // core init renames kubebuilder's generated name; the no-usages configuration keeps its own.
    if (conf.metadata.name === 'validating-webhook-configuration') conf.metadata.name = 'crossplane';
    for (const w of conf.webhooks as Obj[]) {
      w.clientConfig = { url: `https://127.0.0.1:${port}${w.clientConfig.service.path}`, caBundle: b64(ca) };
    }
    await apply(kube, conf);
  }
}

/** `crossplane core start` against the cluster, packages run externally; resolves when /readyz and the webhook answer. */
export async function startCrossplaneCore(
  bin: string,
  cluster: ClusterInfo,
  dir: string,
  pki: CrossplanePki,
  o: { debug?: boolean } = {},
  track: Track = () => {},
): Promise<{ proc: Proc; webhookPort: number; metrics: string }> {
  const [webhook, metrics, health] = await freePorts(3);
  mkdirSync(join(dir, 'xpkg-cache'), { recursive: true });
  // Crossplane binds metrics, health and webhook servers to every interface (":<port>"); no flag narrows that.
  const proc = guarded(bin, 'crossplane', cluster, dir, [
    'core',
    'start',
    `--namespace=${CROSSPLANE_NAMESPACE}`,
    '--package-runtime=External',
    `--xpkg-cache-dir=${join(dir, 'xpkg-cache')}`,
    `--tls-client-certs-dir=${pki.crossplaneClient}`,
    `--tls-server-certs-dir=${pki.crossplaneWebhook}`,
    '--enable-webhooks=true',
    `--webhook-port=${webhook}`,
    `--metrics-port=${metrics}`,
    `--health-probe-port=${health}`,
    ...(o.debug ? ['--debug'] : []),
  ]);
  track(proc);
  await until(proc, 'Crossplane to serve /readyz and its webhook', async () => {
    const ready = await probe(`http://127.0.0.1:${health}/readyz`);
    return ready.code === 200 && (await probe(`https://127.0.0.1:${webhook}/`)).code > 0 ? true : undefined;
  });
  return { proc, webhookPort: webhook!, metrics: `http://127.0.0.1:${metrics}/metrics` };
}

/** The bundled function with mTLS on loopback; resolves when its /healthz answers. */
export async function startFunction(
  bundle: string,
  cluster: ClusterInfo,
  dir: string,
  pki: CrossplanePki,
  track: Track = () => {},
): Promise<{ proc: Proc; endpoint: string; metrics: string }> {
  const [grpcPort, metricsPort] = await freePorts(2);
  const proc = guarded(process.execPath, 'function', cluster, dir, [
    bundle,
    '--tls-certs-dir',
    pki.functionServer,
    '--address',
    `127.0.0.1:${grpcPort}`,
    '--metrics-address',
    `127.0.0.1:${metricsPort}`,
  ]);
  track(proc);
  await until(proc, 'the function to serve /healthz', async () =>
    (await probe(`http://127.0.0.1:${metricsPort}/healthz`)).code === 200 ? true : undefined,
  );
  return { proc, endpoint: `127.0.0.1:${grpcPort}`, metrics: `http://127.0.0.1:${metricsPort}/metrics` };
}

/**
 * provider-kubernetes out of cluster: its CRDs from the module, with the Object conversion webhook at
 * `https://127.0.0.1:<port>/convert` (the package's own points at a Service no API server here can reach), then the
 * process; resolves when /readyz (which includes its webhook server) answers.
 */
export async function startProviderKubernetes(
  bin: string,
  source: string,
  kube: Kube,
  cluster: ClusterInfo,
  dir: string,
  pki: CrossplanePki,
  o: { poll?: string; debug?: boolean; args?: readonly string[] } = {},
  track: Track = () => {},
): Promise<{ proc: Proc; metrics: string }> {
  const [webhook, metrics, health] = await freePorts(3);
  const crds = yamlDir(join(source, 'package', 'crds'));
  for (const crd of crds) {
    if (crd.spec.conversion?.strategy === 'Webhook') {
      crd.spec.conversion.webhook.clientConfig = { url: `https://127.0.0.1:${webhook}/convert`, caBundle: b64(pki.ca) };
    }
  }
  await Promise.all(crds.map((crd) => apply(kube, crd)));
  // Served before the provider starts, as the package manager has them: with --enable-watches, a controller whose
  // CRD turns Established while the provider runs indexes its cache at once, and a discovery that lags behind fails
  // that set-up for good, silently (no legacy Object was ever reconciled; docs/decisions/readiness-lag.md).
  await Promise.all(crds.map((crd) => established(kube, crd.metadata.name)));
  // Its webhook server binds every interface (":<port>"); metrics and health take an address.
  const proc = guarded(
    bin,
    'provider-kubernetes',
    cluster,
    dir,
    [
      `--webhook-port=${webhook}`,
      `--metrics-bind-address=127.0.0.1:${metrics}`,
      `--health-probe-bind-addr=127.0.0.1:${health}`,
      `--poll=${o.poll ?? '1m'}`,
      ...(o.args ?? []),
      ...(o.debug ? ['--debug'] : []),
    ],
    { TLS_SERVER_CERTS_DIR: pki.providerWebhook },
  );
  track(proc);
  await until(proc, 'provider-kubernetes to serve /readyz', async () =>
    (await probe(`http://127.0.0.1:${health}/readyz`)).code === 200 ? true : undefined,
  );
  return { proc, metrics: `http://127.0.0.1:${metrics}/metrics` };
}

/**
 * The provider configs our a8s Compositions use, their credentials a Secret holding the cluster's admin kubeconfig:
 * the legacy `ProviderConfig` (the default package's cluster-scoped Objects) and the `ClusterProviderConfig` of the
 * namespaced `kubernetes.m.crossplane.io` Objects (the `--crossplane v2` package's), both `kubernetes-provider`.
 */
export async function configureProviderKubernetes(kube: Kube, cluster: ClusterInfo): Promise<void> {
  // Core's set-up makes the namespace too, in parallel; whichever comes first.
  await apply(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: CROSSPLANE_NAMESPACE } });
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: PROVIDER_KUBECONFIG_SECRET, namespace: CROSSPLANE_NAMESPACE },
    stringData: { kubeconfig: readFileSync(cluster.kubeconfig, 'utf8') },
  });
  const spec = {
    credentials: {
      source: 'Secret',
      secretRef: { namespace: CROSSPLANE_NAMESPACE, name: PROVIDER_KUBECONFIG_SECRET, key: 'kubeconfig' },
    },
  };
  await Promise.all([
    apply(kube, {
      apiVersion: 'kubernetes.crossplane.io/v1alpha1',
      kind: 'ProviderConfig',
      metadata: { name: KUBERNETES_PROVIDER_CONFIG },
      spec,
    }),
    apply(kube, {
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'ClusterProviderConfig',
      metadata: { name: KUBERNETES_PROVIDER_CONFIG },
      spec,
    }),
  ]);
}

/**
 * Our Function package through Crossplane's package manager: the package in the cache, its TLS Secret (the
 * establisher reads it even with the External runtime), the Function with `packagePullPolicy: Never`; then, as an
 * external runtime would, the active FunctionRevision's `status.endpoint` set to the running function. Resolves
 * when the Function is Healthy and the endpoint is in place.
 */
async function installFunction(
  kube: Kube,
  o: {
    cacheDir: string;
    files: ReadonlyMap<string, string>;
    packageRef: string;
    name: string;
    endpoint: string;
    pki: CrossplanePki;
    crossplane: Proc;
    /** @default 'v1' */
    version?: CrossplaneLine;
  },
): Promise<void> {
  const pkg = [...o.files.keys()].filter((p) => p.startsWith(`${FUNCTION_PACKAGE_DIR}/`) && p.endsWith('.yaml')).sort(metaFirst);
  const ref = storePackage(
    o.cacheDir,
    o.packageRef,
    pkg.map((p) => o.files.get(p)!),
    o.version,
  );
  await apply(kube, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${o.name}-tls-server`, namespace: CROSSPLANE_NAMESPACE },
    type: 'kubernetes.io/tls',
    stringData: {
      'tls.crt': readFileSync(join(o.pki.functionServer, 'tls.crt'), 'utf8'),
      'tls.key': readFileSync(join(o.pki.functionServer, 'tls.key'), 'utf8'),
      'ca.crt': o.pki.ca,
    },
  });
  await apply(kube, {
    apiVersion: 'pkg.crossplane.io/v1',
    kind: 'Function',
    metadata: { name: o.name },
    spec: { package: ref, packagePullPolicy: 'Never' },
  });
  const revision = await until(o.crossplane, `the active FunctionRevision of Function ${o.name}`, async () => {
    const list = await getIfExists(kube, `/apis/pkg.crossplane.io/v1/functionrevisions?labelSelector=pkg.crossplane.io/package=${o.name}`);
    return (list?.items as Obj[] | undefined)?.find((r) => r.spec?.desiredState === 'Active')?.metadata.name as string | undefined;
  });
  const path = `/apis/pkg.crossplane.io/v1/functionrevisions/${revision}`;
  if (o.version === 'v2') await externalRuntimeV2(kube, path, o.endpoint, `${o.name}-tls-server`, o.crossplane);
  else {
    const patched = await kube.request('PATCH', `${path}/status`, { status: { endpoint: o.endpoint } }, PatchStrategy.MergePatch);
    if (patched.code !== 200)
      throw new Error(`cannot set status.endpoint of FunctionRevision ${revision}: ${JSON.stringify(patched.body)}`);
  }
  await healthy(kube, `/apis/pkg.crossplane.io/v1/functions/${o.name}`, `Function ${o.name}`, o.crossplane);
  // A status update of the revision reconciler that raced the patch fails on its stale resourceVersion; check anyway.
  await until(o.crossplane, `status.endpoint ${o.endpoint} on FunctionRevision ${revision}`, async () =>
    (await getIfExists(kube, path))?.status?.endpoint === o.endpoint ? true : undefined,
  );
}

/**
 * What v2's runtime controller writes on a FunctionRevision it runs, done by the setup (the external runtime): the
 * endpoint, `status.tlsServerSecretName` (the establisher reads the TLS Secret it names before it installs anything;
 * with External, nothing fills the revision's `spec.tlsServerSecretName` either, so it is `<function>-tls-server`, the
 * Secret the setup wrote) and `RuntimeHealthy` (v2's Function is Healthy only when its revision's runtime is). An
 * update with the resourceVersion read, retried on conflict: a merge patch would replace the reconciler's conditions.
 */
async function externalRuntimeV2(kube: Kube, path: string, endpoint: string, tlsSecret: string, crossplane: Proc): Promise<void> {
  await until(crossplane, `the external runtime status on ${path}`, async () => {
    const rev = await getIfExists(kube, path);
    if (!rev) return undefined;
    const conditions = ((rev.status?.conditions ?? []) as Obj[]).filter((c) => c.type !== 'RuntimeHealthy');
    conditions.push({
      type: 'RuntimeHealthy',
      status: 'True',
      reason: 'HealthyPackageRevision',
      lastTransitionTime: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    rev.status = { ...rev.status, endpoint, tlsServerSecretName: tlsSecret, conditions };
    const r = await kube.request('PUT', `${path}/status`, rev);
    if (r.code === 409) return undefined;
    if (r.code !== 200)
      throw new Error(`cannot set the external runtime status of ${path}: ${r.code} ${JSON.stringify(r.body.message ?? r.body)}`);
    return true;
  });
}

/**
 * Our Configuration through the package manager: `crossplane.yaml` and every XRD and Composition in the cache, the
 * Configuration with `packagePullPolicy: Never` and `skipDependencyResolution` (the resolver would otherwise fetch
 * provider-anynines and provider-kubernetes from a registry; here provider-kubernetes runs out of cluster and
 * provider-anynines not at all). Resolves when it is Healthy and every XRD is Established and Offered.
 */
async function installConfiguration(
  kube: Kube,
  o: { cacheDir: string; files: ReadonlyMap<string, string>; crossplane: Proc; version?: CrossplaneLine; wait?: boolean },
): Promise<void> {
  const pkg = [...o.files.keys()]
    .filter((p) => p === `${PACKAGE_DIR}/crossplane.yaml` || (p.startsWith(`${PACKAGE_DIR}/apis/`) && p.endsWith('.yaml')))
    .sort(metaFirst);
  const ref = storePackage(
    o.cacheDir,
    CONFIGURATION_PACKAGE,
    pkg.map((p) => o.files.get(p)!),
    o.version,
  );
  await apply(kube, {
    apiVersion: 'pkg.crossplane.io/v1',
    kind: 'Configuration',
    metadata: { name: CONFIGURATION_NAME },
    spec: { package: ref, packagePullPolicy: 'Never', skipDependencyResolution: true },
  });
  const path = `/apis/pkg.crossplane.io/v1/configurations/${CONFIGURATION_NAME}`;
  if (o.wait === false) return;
  await healthy(kube, path, `Configuration ${CONFIGURATION_NAME}`, o.crossplane);
  const xrds = pkg.map((p) => parseYaml(o.files.get(p)!)[0] as Obj).filter((d) => d.kind === 'CompositeResourceDefinition');
  await Promise.all(
    xrds.map((xrd) =>
      until(o.crossplane, `XRD ${xrd.metadata.name} to be Established and Offered`, async () => {
        const live = await getIfExists(kube, `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/${xrd.metadata.name}`);
        const want = xrd.spec.claimNames ? ['Established', 'Offered'] : ['Established'];
        return want.every((t) => condition(live, t) === 'True') ? true : undefined;
      }),
    ),
  );
  // Re-establishing an XRD right after its CRD appeared can be refused by Crossplane's own XRD webhook (a cache miss
  // makes it dry-run a create of the existing CRD, internal/validation/apiextensions/v1/xrd/handler.go); the revision
  // turns unhealthy and heals on its next reconcile. Ready means healthy after every XRD is offered.
  await healthy(kube, path, `Configuration ${CONFIGURATION_NAME}`, o.crossplane);
}

// ---------------------------------------------------------------------------------------------------------------------
// All steps together.

/**
 * Brings up Crossplane core, our function and provider-kubernetes on `cluster` (one of startControlPlanes), installs
 * our Function and Configuration through the package manager and configures the provider. Use a cluster of its
 * own: Crossplane installs cluster-wide CRDs and webhooks.
 */
export async function startCrossplane(cluster: ClusterInfo, o: CrossplaneOptions = {}): Promise<Crossplane> {
  requireSetpriv();
  const log = o.log ?? ((line: string) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const runDir = o.runDir ?? join(dirname(cluster.kubeconfig), 'crossplane');
  mkdirSync(runDir, { recursive: true });
  const started = Date.now();
  const version = o.version ?? 'v1';
  // One Go build at a time: they compete for the same cores.
  const crossplaneBin = await ensureCrossplane(log, version);
  const providerBin = await ensureProviderKubernetes(log);
  const files = o.files ?? synthOutput(join(runDir, 'synth'));
  const bundle = await bundleDeployable(ROOT, deployable('function'));
  const functionName = functionRefName(files);
  const kube = kubeFor(cluster);

  const procs: Proc[] = [];
  const track: Track = (p) => procs.push(p);
  const stop = async (): Promise<void> => {
    // Crossplane first: it stops calling the function and composing; then the provider; the function last.
    const order = ['crossplane', 'provider-kubernetes', 'function'];
    for (const role of order) await Promise.all(procs.filter((p) => p.role === role).map((p) => p.stop()));
    await Promise.all(procs.map((p) => p.stop()));
    rmSync(join(runDir, 'pki'), { recursive: true, force: true });
    rmSync(join(runDir, 'xpkg-cache'), { recursive: true, force: true });
  };
  try {
    log(
      `starting Crossplane ${crossplaneVersion(version)}, the function and provider-kubernetes on cluster ${cluster.name}; logs in ${runDir}`,
    );
    const pki = await crossplanePki(join(runDir, 'pki'));
    const xpSource = crossplaneSource(version);
    const pkSource = providerKubernetesSource();
    // Each part in parallel where nothing orders them; the timings go into the progress line.
    const timings: string[] = [];
    const lap = async <T>(what: string, p: Promise<T>): Promise<T> => {
      const t = Date.now();
      const v = await p;
      timings.push(`${what} ${((Date.now() - t) / 1000).toFixed(1)}s`);
      return v;
    };
    const [core, fn, provider] = await Promise.all([
      lap(
        'crossplane',
        initCore(kube, xpSource).then(() =>
          startCrossplaneCore(crossplaneBin, cluster, runDir, pki, { debug: o.debug?.crossplane ?? true }, track),
        ),
      ),
      lap('function', startFunction(bundle, cluster, runDir, pki, track)),
      lap(
        'provider',
        startProviderKubernetes(
          providerBin,
          pkSource,
          kube,
          cluster,
          runDir,
          pki,
          { poll: o.providerPoll, debug: o.debug?.provider, args: o.providerArgs ?? PROVIDER_KUBERNETES_ARGS },
          track,
        ).then(async (p) => {
          await configureProviderKubernetes(kube, cluster);
          return p;
        }),
      ),
    ]);
    await registerWebhooks(kube, xpSource, core.webhookPort, pki.ca);
    let coreProc = core.proc;
    const coreDebug = { debug: o.debug?.crossplane ?? true };
    const cacheDir = join(runDir, 'xpkg-cache');
    await Promise.all([
      o.packages === false
        ? undefined
        : lap(
            'Function package',
            installFunction(kube, {
              cacheDir,
              files,
              packageRef: o.functionPackage ?? DEFAULT_FUNCTION_PACKAGE,
              name: functionName,
              endpoint: fn.endpoint,
              pki,
              crossplane: core.proc,
              version,
            }),
          ),
      o.packages === false
        ? undefined
        : lap('Configuration package', installConfiguration(kube, { cacheDir, files, crossplane: core.proc, version })),
    ]);
    log(`Crossplane ready for claims on cluster ${cluster.name} in ${((Date.now() - started) / 1000).toFixed(1)}s (${timings.join(', ')})`);
    return {
      runDir,
      version,
      release: crossplaneVersion(version),
      get crossplane() {
        return coreProc;
      },
      stopCore: async () => {
        await coreProc.stop();
      },
      startCore: async () => {
        const c = await startCrossplaneCore(crossplaneBin, cluster, runDir, pki, coreDebug, track);
        await registerWebhooks(kube, xpSource, c.webhookPort, pki.ca);
        coreProc = c.proc;
      },
      switchConfiguration: (next, w) => installConfiguration(kube, { cacheDir, files: next, crossplane: coreProc, version, wait: w?.wait }),
      fn: fn.proc,
      provider: provider.proc,
      get pids() {
        return procs.map((p) => p.pid);
      },
      functionName,
      functionEndpoint: fn.endpoint,
      metrics: { crossplane: core.metrics, fn: fn.metrics, provider: provider.metrics },
      files,
      stop,
    };
  } catch (err) {
    await stop();
    throw err;
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Helpers.

/** Whether setpriv was found: a prerequisite is checked once per process, not at every start. */
let setpriv = false;
function requireSetpriv(): void {
  if (setpriv) return;
  const r = spawnSync('setpriv', ['--version'], { encoding: 'utf8' });
  if (r.error || r.status !== 0) {
    throw new Error(
      'setpriv (util-linux) is needed to start Crossplane and its providers so that they die with the test run; install util-linux',
    );
  }
  setpriv = true;
}

/** A process that gets SIGTERM when the process that started it dies (a killed test run leaves nothing behind). */
function guarded(bin: string, role: string, cluster: ClusterInfo, dir: string, args: string[], env: NodeJS.ProcessEnv = {}): Proc {
  return launch({
    command: 'setpriv',
    args: ['--pdeathsig', 'TERM', '--', bin, ...args],
    role,
    owner: cluster.name,
    logDir: dir,
    env: { ...process.env, KUBECONFIG: cluster.kubeconfig, ...env },
  });
}

/**
 * Polls `check` until it returns a value, backing off as `eventually` does (`pollDelay`: 200 ms, then a tenth of the
 * time waited, at most 1 s; the eleven XRD waits of a Configuration asked 55 times a second). Fails when `proc` exits
 * first or after `timeoutMs`; the error names what was awaited, the process, its log file and the log's tail.
 */
async function until<T>(proc: Proc, what: string, check: () => Promise<T | undefined>, timeoutMs = WAIT_MS): Promise<T> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let last: unknown;
  for (;;) {
    const exit = proc.exited();
    if (exit !== undefined) {
      throw new Error(
        `${proc.role} of ${proc.owner} exited (${exit}) while waiting for ${what}; its log is ${proc.logPath}:\n${tail(proc.logPath)}`,
      );
    }
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? ` (last error: ${String(last)})` : ''}; ` +
          `${proc.role} of ${proc.owner} logs to ${proc.logPath}:\n${tail(proc.logPath)}`,
      );
    }
    await sleep(pollDelay(Date.now() - started));
  }
}

async function healthy(kube: Kube, path: string, what: string, crossplane: Proc): Promise<void> {
  let seen: Obj | undefined;
  await until(crossplane, `${what} to be Installed and Healthy`, async () => {
    seen = await getIfExists(kube, path);
    return condition(seen, 'Installed') === 'True' && condition(seen, 'Healthy') === 'True' ? true : undefined;
  }).catch((err: Error) => {
    err.message = `${err.message}\n${what} conditions: ${JSON.stringify(seen?.status?.conditions ?? [])}`;
    throw err;
  });
}

/**
 * What `npm run synth -- --out <dir>` writes, as path → content: the packages a user builds and installs. (A bundled
 * bench cannot import the catalog's .ts files itself; the synth script can.)
 */
function synthOutput(dir: string, args: readonly string[] = []): Map<string, string> {
  const r = runSynth(['--out', dir, '--quiet', ...args]);
  if (r.status !== 0) throw new Error(`npm run synth -- --out ${dir} ${args.join(' ')} failed (${r.status}):\n${r.stderr || r.stdout}`);
  return readOutput(dir);
}

/** `synthOutput` without blocking the process meanwhile; `args` are more synth options (`--crossplane v2`). */
export async function synthOutputAsync(dir: string, args: readonly string[] = []): Promise<Map<string, string>> {
  const r = await runSynthAsync(['--out', dir, '--quiet', ...args]);
  if (r.status !== 0) throw new Error(`npm run synth -- --out ${dir} ${args.join(' ')} failed (${r.status}):\n${r.stderr || r.stdout}`);
  return readOutput(dir);
}

/** The YAML files under `dir`, by path relative to it. */
function readOutput(dir: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.yaml')) files.set(relative(dir, join(d, e.name)), readFileSync(join(d, e.name), 'utf8'));
    }
  };
  walk(dir);
  return files;
}

/** Installs every CRD of a folder (upstream files, their `status` dropped) as installCrds does. */
export async function installCrdDir(kube: Kube, dir: string): Promise<void> {
  await installCrds(
    kube,
    yamlDir(dir).map(({ status: _, ...crd }) => crd),
  );
}

/** Every YAML document of a folder's `*.yaml` files, in file order. */
function yamlDir(dir: string): Obj[] {
  return readdirSync(dir)
    .filter((f) => f.endsWith('.yaml'))
    .sort()
    .flatMap((f) => parseYaml(readFileSync(join(dir, f), 'utf8')))
    .filter((d) => d !== null && typeof d === 'object') as Obj[];
}

/**
 * Puts a package where Crossplane's package cache looks for `packagePullPolicy: Never`, the gzipped YAML stream an
 * image's package.yaml holds (meta first), and returns the reference to install it by.
 * - v1.20 looks the reference up as it is: `xpkg.BuildPath(cacheDir, ref, ".gz")`, which replaces the last extension
 *   of the reference (`...:v1.2.3` → `...:v1.2.gz`).
 * - v2 first resolves a tag to a digest with a HEAD to the registry, even with `Never` (internal/xpkg/client.go), so
 *   the reference is `<source>@sha256:<digest of the stream>`, and the cache key is `FriendlyID(source, digest)`.
 */
function storePackage(cacheDir: string, ref: string, documents: readonly string[], version: CrossplaneLine = 'v1'): string {
  const content = gzipSync(documents.map((d) => (d.startsWith('---') ? d : `---\n${d}`)).join('\n'));
  let path: string;
  if (version === 'v2') {
    const source = ref.replace(/[:@][^:@/]*$/, '');
    const digest = `sha256:${createHash('sha256').update(content).digest('hex')}`;
    ref = `${source}@${digest}`;
    path = join(cacheDir, `${friendlyId(source, digest)}.gz`);
  } else {
    const full = join(cacheDir, ref);
    path = full.slice(0, full.length - extname(full).length) + '.gz';
  }
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, content);
  return ref;
}

/** Crossplane v2's `xpkg.FriendlyID(name, hash)`: the package's cache key (internal/xpkg/name.go). */
function friendlyId(name: string, hash: string): string {
  const s = `${name.slice(0, 50)}-${hash.slice(0, 12)}`;
  let cut = '';
  for (let i = 0; i < s.length; i++) {
    const b = s[i]!;
    if (/[a-z0-9]/.test(b)) cut += b;
    if ('./:-'.includes(b) && i !== 0 && i !== 62 && i !== s.length - 1) cut += '-';
    if (i === 62) break;
  }
  return cut.replace(/^-+|-+$/g, '');
}

/** `crossplane.yaml` (the package's meta) first, then the rest in path order. */
function metaFirst(a: string, b: string): number {
  const meta = (p: string) => (p.endsWith('/crossplane.yaml') ? 0 : 1);
  return meta(a) - meta(b) || a.localeCompare(b);
}

/** The `functionRef.name` every synthesized Composition uses. */
function functionRefName(files: ReadonlyMap<string, string>): string {
  const names = new Set<string>();
  for (const [p, text] of files) {
    if (!/\/composition(-[^/]+)?\.yaml$/.test(p)) continue;
    for (const step of (parseYaml(text)[0] as Obj).spec.pipeline as Obj[]) names.add(step.functionRef.name as string);
  }
  if (names.size !== 1)
    throw new Error(`the synthesized Compositions call ${names.size} functions (${[...names].join(', ')}); expected one`);
  return [...names][0]!;
}

function b64(pem: string): string {
  return Buffer.from(pem).toString('base64');
}
