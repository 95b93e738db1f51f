/**
 * The app side of konnector suites and benches: the konnector's RBAC as synthesized (the Konnector construct and a
 * KonnectorApiAccess per API, applied for real), a token of its ServiceAccount, the bundled konnector as a process,
 * and what `kubectl bind` leaves in the app cluster (kubeconfig Secret, APIServiceBinding).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { PatchStrategy } from '@kubernetes/client-node';
import { BIND_API_VERSION, Kinds, KUBECONFIG_SECRET_KEY, type AcceptablePermissionClaim } from '../../exports/bind-api';
import { KonnectorApiAccess, type KonnectorApiAccessProps } from '../../konnector/deploy/access';
import { Konnector, KONNECTOR_RUNTIME_ENV } from '../../konnector/deploy/konnector';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { ROOT } from '../crossplane/catalog';
import { bearerKubeconfigYaml, type ClusterInfo } from '../cluster/control-plane';
import { kubeFor, type Kube } from '../cluster/kube';
import { type BundleLaunch, launchBundle } from './bundle-process';
import { freePorts, launch, probe, waitReady, type Proc } from '../cluster/processes';
import type { ProviderSide } from './provider-side';
import { sleep } from '../../lib/abort';

/** Server-side applies the objects a construct renders. */
export async function applyConstruct(kube: Kube, build: (scope: Construct) => void, skip: readonly string[] = []): Promise<void> {
  const chart = new Chart(new App(), 'c');
  build(chart);
  for (const o of chart.toJson() as { kind: string; metadata: { name: string } }[]) {
    if (skip.includes(o.kind)) continue;
    await kube.objects.patch(o, undefined, undefined, 'klutch-kit-test', true, PatchStrategy.ServerSideApply);
  }
}

/**
 * Installs the konnector's Namespace, ServiceAccount and RBAC (not its Deployment: the test clusters run no Pods) in
 * `namespace` of the app cluster, with access to `apis`; returns a kubeconfig of its ServiceAccount (TokenRequest).
 */
export async function installKonnectorAccess(
  app: ClusterInfo,
  namespace: string,
  apis: readonly Omit<KonnectorApiAccessProps, 'namespace'>[],
): Promise<string> {
  await applyConstruct(kubeFor(app), (c) => new Konnector(c, 'konnector', { namespace, apis }), ['Deployment']);
  return konnectorKubeconfig(app, namespace);
}

/**
 * A kubeconfig of the konnector's ServiceAccount `<namespace>/konnector` (a TokenRequest token): what its Pod would
 * run with. The test clusters run no Pods, so suites start the bundled konnector with it in the Deployment's stead.
 */
export async function konnectorKubeconfig(app: ClusterInfo, namespace: string, expirationSeconds = 7200): Promise<string> {
  const r = await kubeFor(app).request('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/konnector/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds },
  });
  if (r.code >= 300) throw new Error(`cannot get a token of ServiceAccount ${namespace}/konnector: ${JSON.stringify(r.body.message)}`);
  return bearerKubeconfigYaml(
    app.name,
    app.server,
    app.ca,
    `system:serviceaccount:${namespace}:konnector`,
    (r.body.status as { token: string }).token,
  );
}

/** Grants the konnector of `namespace` access to one more API (the documented way). */
export async function grantApi(app: ClusterInfo, namespace: string, api: Omit<KonnectorApiAccessProps, 'namespace'>): Promise<void> {
  await applyConstruct(kubeFor(app), (c) => new KonnectorApiAccess(c, 'access', { ...api, namespace }));
}

/** What `kubectl bind` leaves in the app cluster: a kubeconfig Secret and the APIServiceBinding. */
export async function bindApp(
  app: ClusterInfo,
  namespace: string,
  provider: Pick<ProviderSide, 'kubeconfig'>,
  exportName: string,
  claims: readonly AcceptablePermissionClaim[] = [],
): Promise<{ secret: string }> {
  const kube = kubeFor(app);
  const secret = `kubeconfig-${randomBytes(3).toString('hex')}`;
  const s = await kube.request('POST', `/api/v1/namespaces/${namespace}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: secret, namespace },
    data: { [KUBECONFIG_SECRET_KEY]: Buffer.from(provider.kubeconfig()).toString('base64') },
  });
  if (s.code >= 300) throw new Error(`cannot create Secret ${namespace}/${secret}: ${JSON.stringify(s.body.message)}`);
  await createBinding(kube, namespace, exportName, secret, claims);
  return { secret };
}

export async function createBinding(
  kube: Kube,
  namespace: string,
  exportName: string,
  secret: string,
  claims: readonly AcceptablePermissionClaim[] = [],
): Promise<void> {
  // A client retries what the API server answers while it reloads a CRD (503) or is busy (429), as kubectl bind would.
  let b = { code: 0, body: {} as Record<string, unknown> };
  for (let i = 0; i < 50 && (b.code === 0 || b.code === 503 || b.code === 429); i++) {
    if (i) await sleep(200);
    b = await kube.request('POST', `/apis/klutch.anynines.com/v1alpha1/namespaces/${namespace}/apiservicebindings`, {
      apiVersion: BIND_API_VERSION,
      kind: Kinds.APIServiceBinding,
      metadata: { name: exportName, namespace },
      spec: {
        kubeconfigSecretRef: { name: secret, namespace, key: KUBECONFIG_SECRET_KEY },
        ...(claims.length ? { permissionClaims: claims } : {}),
      },
    });
  }
  if (b.code >= 300) throw new Error(`cannot create APIServiceBinding ${namespace}/${exportName}: ${JSON.stringify(b.body.message)}`);
}

export interface KonnectorProcess {
  readonly proc: Proc;
  readonly port: number;
  readonly url: string;
}

export interface StartKonnectorOptions {
  /** Kubeconfig YAML of the app cluster (the konnector's ServiceAccount). */
  readonly kubeconfig: string;
  /** Bindings, Lease and kubeconfig Secrets live here. */
  readonly namespace: string;
  readonly logDir: string;
  /** Names the replica (its log file and Lease identity). @default konnector */
  readonly identity?: string;
  readonly args?: readonly string[];
  /** The repository (benches run from a bundle, where the module's own location says nothing). @default ROOT */
  readonly root?: string;
  /** A konnector bundle to run instead of the working tree's (a bench's fixed program). @default the tree's, bundled */
  readonly bundle?: string;
  /** The node binary. @default the test runner's */
  readonly node?: string;
  /** NODE_OPTIONS. @default the Deployment's (KONNECTOR_RUNTIME_ENV) */
  readonly nodeOptions?: string;
}

/** The bundled konnector as a Deployment runs it (harness/parts/bundle-process.ts). */
export function launchKonnectorBundle(o: BundleLaunch): Promise<Proc> {
  return launchBundle('konnector', o, 'KILL');
}

/** Starts the bundled konnector (dist/konnector/konnector.mjs) and waits until /healthz answers. */
export async function startKonnector(o: StartKonnectorOptions): Promise<KonnectorProcess> {
  const bundle = o.bundle ?? (await bundleDeployable(o.root ?? ROOT, deployable('konnector')));
  const identity = o.identity ?? 'konnector';
  mkdirSync(o.logDir, { recursive: true });
  const kubeconfig = join(o.logDir, `${identity}.kubeconfig`);
  writeFileSync(kubeconfig, o.kubeconfig, { mode: 0o600 });
  const [port] = await freePorts(1);
  const proc = launch({
    // Dies with the test runner, however it ends.
    command: 'setpriv',
    args: [
      '--pdeathsig',
      'KILL',
      o.node ?? process.execPath,
      bundle,
      `--kubeconfig=${kubeconfig}`,
      `--binding-namespace=${o.namespace}`,
      `--lease-namespace=${o.namespace}`,
      `--identity=${identity}`,
      `--probe-address=127.0.0.1:${port}`,
      ...(o.args ?? []),
    ],
    role: identity,
    owner: `app namespace ${o.namespace}`,
    logDir: o.logDir,
    // As the Deployment runs it.
    env: { ...process.env, ...KONNECTOR_RUNTIME_ENV, ...(o.nodeOptions ? { NODE_OPTIONS: o.nodeOptions } : {}) },
  });
  const url = `http://127.0.0.1:${port}`;
  await waitReady(proc, () => probe(`${url}/healthz`).then((r) => r.code === 200), 30_000);
  return { proc, port: port!, url };
}
