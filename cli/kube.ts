/**
 * Clusters as kubectl-bind sees them: the app cluster from the user's kubeconfig (`--kubeconfig`, else `$KUBECONFIG`,
 * else `~/.kube/config`; `--context`), and the provider from the kubeconfig the bind backend handed out. Plain
 * @kubernetes/client-node clients; errors name the cluster and what to do.
 */
import {
  ApiextensionsV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  KubernetesObjectApi,
} from '@kubernetes/client-node';
import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { keepAliveConfiguration } from '../controller';
import { CliError, ExitCode } from './errors';
import { providerKubeconfig } from './provider-kubeconfig';
import { sleep } from '../lib/abort';
import { isNotFound, statusOf } from '../lib/kube-errors';

export interface Cluster {
  readonly kc: KubeConfig;
  /** `https://…`, for messages. */
  readonly server: string;
  readonly core: CoreV1Api;
  readonly custom: CustomObjectsApi;
  readonly crds: ApiextensionsV1Api;
  readonly coordination: CoordinationV1Api;
  readonly objects: KubernetesObjectApi;
}

function clusterOf(kc: KubeConfig, what: string): Cluster {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new CliError(`the kubeconfig of ${what} names no cluster server`, 'check the kubeconfig and its current context');
  // One pool of kept connections for all of a run's calls: client-node would open a new one per call, each a TLS
  // handshake for the API server (docs/decisions/test-control-plane-cost.md).
  const kept = keepAliveConfiguration(kc);
  return {
    kc,
    server,
    core: new CoreV1Api(kept),
    custom: new CustomObjectsApi(kept),
    crds: new ApiextensionsV1Api(kept),
    coordination: new CoordinationV1Api(kept),
    objects: new KeptObjectApi(kept, kc),
  };
}

/** KubernetesObjectApi on a given configuration, with the kubeconfig's namespace as `makeApiClient` gives it. */
class KeptObjectApi extends KubernetesObjectApi {
  constructor(configuration: ConstructorParameters<typeof KubernetesObjectApi>[0], kc: KubeConfig) {
    super(configuration);
    this.setDefaultNamespace(kc);
  }
}

/**
 * The kubeconfig kubectl would use: `--kubeconfig`, else every file of `$KUBECONFIG` merged as kubectl merges them
 * (the first file to name a cluster, user or context wins, and so does the first current-context; files that do
 * not exist are skipped), else `~/.kube/config`.
 */
export function loadKubeconfig(file: string | undefined, env: NodeJS.ProcessEnv): KubeConfig {
  const kc = new KubeConfig();
  const listed = (env.KUBECONFIG ?? '').split(delimiter).filter(Boolean);
  const present = listed.filter((f) => existsSync(f));
  const files = file ? [file] : present.length ? present : listed.slice(0, 1);
  if (!files.length) {
    kc.loadFromDefault();
    return kc;
  }
  kc.loadFromFile(files[0]!);
  for (const f of files.slice(1)) {
    const next = new KubeConfig();
    next.loadFromFile(f);
    const have = (list: readonly { name: string }[], name: string) => list.some((x) => x.name === name);
    for (const c of next.clusters) if (!have(kc.clusters, c.name)) kc.addCluster(c);
    for (const u of next.users) if (!have(kc.users, u.name)) kc.addUser(u);
    for (const c of next.contexts) if (!have(kc.contexts, c.name)) kc.addContext(c);
    if (!kc.currentContext && next.currentContext) kc.setCurrentContext(next.currentContext);
  }
  return kc;
}

/** The app cluster: the kubeconfig kubectl would use. */
export function appCluster(o: { readonly kubeconfig?: string; readonly context?: string }, env: NodeJS.ProcessEnv): Cluster {
  let kc: KubeConfig;
  try {
    kc = loadKubeconfig(o.kubeconfig, env);
  } catch (e) {
    throw new CliError(
      `cannot read the kubeconfig ${o.kubeconfig ?? env.KUBECONFIG ?? '~/.kube/config'}: ${(e as Error).message}`,
      'pass --kubeconfig <file> for the app cluster',
      ExitCode.Failed,
      { cause: e },
    );
  }
  if (o.context) {
    if (!kc.getContextObject(o.context))
      throw new CliError(
        `the kubeconfig has no context "${o.context}"`,
        `use one of: ${kc
          .getContexts()
          .map((c) => c.name)
          .join(', ')}`,
      );
    kc.setCurrentContext(o.context);
  }
  return clusterOf(kc, 'the app cluster');
}

/**
 * The provider, through a provider kubeconfig (a BindingResponse's, --remote-kubeconfig, a kubeconfig Secret) reduced
 * to server, CA, namespace and token first: nothing in it can run a program or read a file here. `namespace` is the
 * consumer's cluster namespace (the context's, or `namespaceOverride`).
 */
export function providerCluster(
  kubeconfig: string,
  namespaceOverride?: string,
  where = 'the provider kubeconfig',
): { cluster: Cluster; namespace: string } {
  const reduced = providerKubeconfig(kubeconfig, where, namespaceOverride);
  const kc = new KubeConfig();
  kc.loadFromString(reduced.yaml);
  return { cluster: clusterOf(kc, 'the provider'), namespace: reduced.namespace };
}

/** The server-side-apply field manager of what the plugin applies in the app cluster (the konnector). */
export const KUBECTL_BIND_FIELD_MANAGER = 'kubectl-bind';

/** A call's result, or undefined when the object does not exist. */
export async function getOrUndefined<T>(call: Promise<T>): Promise<T | undefined> {
  try {
    return await call;
  } catch (e) {
    if (isNotFound(e)) return undefined;
    throw e;
  }
}

/** Answers worth another try: busy (429, also while a CRD's storage (re)initializes) or unavailable (503). */
export const isBusy = (err: unknown) => statusOf(err) === 429 || statusOf(err) === 503;

/**
 * `call`, tried again while the API server is busy (as client-go retries a 429), at most `attempts` times over about
 * 10 s. Other errors, and the last busy one, are thrown.
 */
export async function retryBusy<T>(call: () => Promise<T>, signal?: AbortSignal, attempts = 20): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await call();
    } catch (e) {
      if (!isBusy(e) || i >= attempts || signal?.aborted) throw e;
    }
    await sleep(Math.min(100 * i, 1_000), signal);
  }
}

/** Waits `ms`, or less when `signal` aborts (the project's one abortable sleep). */
export { sleep };
