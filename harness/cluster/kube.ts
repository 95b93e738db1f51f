/**
 * Clients for the test control planes, built on @kubernetes/client-node.
 *
 * `typed` API classes for what they cover, `objects` for any kind (server-side apply included), and `request` for
 * the raw calls tests make to see exactly what the API server answers (dry runs, strict field validation, the text of
 * a refusal).
 */
import https from 'node:https';
import { Writable } from 'node:stream';
import {
  AuthenticationV1Api,
  CoreV1Api,
  Exec,
  KubeConfig,
  KubernetesObjectApi,
  RbacAuthorizationV1Api,
  type KubernetesObject,
  loadYaml,
  PatchStrategy,
  type V1Status,
} from '@kubernetes/client-node';
import { keepAliveAgent, keepAliveConfiguration } from '../../controller';
import { ADMIN, type ClusterInfo, bearerKubeconfigYaml } from './control-plane';
import { jsonSubset } from '../../konnector/kube/objects';
import { sleep } from '../../lib/abort';

export interface RawResponse {
  readonly code: number;
  readonly body: Record<string, unknown>;
  /** The API server's `Warning` headers (a deprecated version, a field it dropped), as kubectl prints them. */
  readonly warnings: readonly string[];
}

export interface Kube {
  readonly config: KubeConfig;
  readonly core: CoreV1Api;
  readonly rbac: RbacAuthorizationV1Api;
  readonly authn: AuthenticationV1Api;
  readonly objects: KubernetesObjectApi;
  /** One HTTP call; any status comes back as it is. `path` starts with `/api` or `/apis`. */
  request(method: string, path: string, body?: unknown, contentType?: string): Promise<RawResponse>;
}

/** A client for `identity` (a name of `cluster.tokens`, default the admin) or for a bearer token of your own. */
export function kubeFor(cluster: ClusterInfo, identity: string = ADMIN, bearer?: string): Kube {
  const token = bearer ?? cluster.tokens[identity];
  if (token === undefined)
    throw new Error(`cluster ${cluster.name} has no identity "${identity}"; it has ${Object.keys(cluster.tokens).join(', ')}`);
  return kubeFromConfig(bearerKubeconfigYaml(cluster.name, cluster.server, cluster.ca, bearer ? 'token' : identity, token));
}

/**
 * Runs `send` again (at most `tries` times in all, a second apart) when the connection closed before TLS was
 * established: the request was never sent, so even a POST is safe to repeat. Seen when an overloaded machine stalls
 * the API server (its etcd) and it drops handshakes; one such error used to fail the shared Pod platform's start.
 */
export async function resendUnsent<T>(send: () => Promise<T>, tries = 4): Promise<T> {
  for (let i = 1; ; i++) {
    try {
      return await send();
    } catch (e) {
      if (i >= tries || !/before secure TLS connection was established/.test(String((e as Error)?.message))) throw e;
      await sleep(1_000);
    }
  }
}

/** KubernetesObjectApi on a given configuration, with the kubeconfig's namespace as `makeApiClient` gives it. */
class KeptObjectApi extends KubernetesObjectApi {
  constructor(configuration: ConstructorParameters<typeof KubernetesObjectApi>[0], kc: KubeConfig) {
    super(configuration);
    this.setDefaultNamespace(kc);
  }
}

/**
 * A client from kubeconfig YAML. All its calls share one pool of kept connections (controller/clients.ts): client-node
 * would open a new TLS connection for every call, and each costs the API server a handshake.
 */
export function kubeFromConfig(yaml: string): Kube {
  const config = new KubeConfig();
  config.loadFromString(yaml);
  const server = config.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig names no cluster server');
  const kept = keepAliveConfiguration(config);
  const objects = new KeptObjectApi(kept, config);
  const agentFor = keepAliveAgent();
  return {
    config,
    core: new CoreV1Api(kept),
    rbac: new RbacAuthorizationV1Api(kept),
    authn: new AuthenticationV1Api(kept),
    objects,
    request: async (method, path, body, contentType = 'application/json') => {
      const url = new URL(new URL(server).pathname.replace(/\/$/, '') + path, server);
      const opts: https.RequestOptions = { method, headers: { Accept: 'application/json' } };
      await config.applyToHTTPSOptions(opts);
      opts.agent = agentFor(opts);
      const data = body === undefined ? undefined : JSON.stringify(body);
      if (data !== undefined) opts.headers = { ...opts.headers, 'Content-Type': contentType, 'Content-Length': Buffer.byteLength(data) };
      return resendUnsent(
        () =>
          new Promise<RawResponse>((resolve, reject) => {
            const req = https.request(url, opts, (res) => {
              const chunks: Buffer[] = [];
              res.on('data', (c: Buffer) => chunks.push(c));
              res.on('end', () => {
                const text = Buffer.concat(chunks).toString();
                let parsed: Record<string, unknown>;
                try {
                  parsed = JSON.parse(text) as Record<string, unknown>;
                } catch {
                  parsed = { message: text };
                }
                const warning = res.headers.warning;
                const warnings = (Array.isArray(warning) ? warning : warning ? [warning] : []).map((w) =>
                  // RFC 7234's form the API server sends: 299 - "<text>".
                  w.replace(/^299 - "(.*)"$/s, '$1').replace(/\\"/g, '"'),
                );
                resolve({ code: res.statusCode ?? 0, body: parsed, warnings });
              });
            });
            req.on('error', reject);
            if (data !== undefined) req.write(data);
            req.end();
          }),
      );
    },
  };
}

/** A wire object, as tests read one. */
export type WireObject = Record<string, any>;

/** GET `path`: the object, or undefined when the answer is not 200. */
export async function getObject(kube: Kube, path: string): Promise<WireObject | undefined> {
  const r = await kube.request('GET', path);
  return r.code === 200 ? (r.body as WireObject) : undefined;
}

/** One call that must succeed; the error names the call, the status and the API server's message. */
export async function requireOk(kube: Kube, method: string, path: string, body?: unknown, contentType?: string): Promise<WireObject> {
  const r = await kube.request(method, path, body, contentType);
  if (r.code >= 300) throw new Error(`${method} ${path}: ${r.code} ${JSON.stringify(r.body.message)}`);
  return r.body as WireObject;
}

/** What an API server answers for a while after a CRD is installed, before it serves the new kind. */
const NOT_SERVED_YET = [404, 429, 503];

/**
 * Creates `obj` in its namespace as `kubectl create` does (a claim in an app cluster, whose CRD the konnector may just
 * have installed). 404, 429 and 503 are waited out for a minute; any other refusal fails at once with the API server's
 * message, except 409 when `existing` is 'ok' (an object left by an interrupted run).
 */
export async function createWhenServed(
  kube: Kube,
  plural: string,
  obj: WireObject,
  o: { readonly existing?: 'ok' | 'refused' } = {},
): Promise<void> {
  const where = `${obj.apiVersion.includes('/') ? '/apis' : '/api'}/${obj.apiVersion}/namespaces/${obj.metadata.namespace}/${plural}`;
  const what = `${obj.kind} ${obj.metadata.namespace}/${obj.metadata.name}`;
  const r = await eventually(
    `${what} to be created`,
    async () => {
      const res = await kube.request('POST', where, obj);
      return NOT_SERVED_YET.includes(res.code) ? undefined : res;
    },
    60_000,
  );
  if (r.code < 300 || (r.code === 409 && o.existing === 'ok')) return;
  throw new Error(`cannot create ${what}: ${r.code} ${JSON.stringify(r.body.message)}`);
}

/**
 * Server-side apply of `body` at `path` (the object's own URL), forcing our field manager: suites that share a cluster
 * may apply the same object. The error names the path and the API server's answer.
 */
export async function applyAt(kube: Kube, path: string, body: unknown, fieldManager = 'klutch-kit-tests'): Promise<WireObject> {
  const r = await kube.request('PATCH', `${path}?fieldManager=${fieldManager}&force=true`, body, 'application/apply-patch+yaml');
  if (r.code >= 300) throw new Error(`cannot apply ${path}: ${r.code} ${JSON.stringify(r.body.message ?? r.body)}`);
  return r.body as WireObject;
}

/** The field manager of the harness's setup steps (Crossplane, its packages, the stand-ins' CRDs). */
const SETUP_FIELD_MANAGER = 'klutch-kit-crossplane-setup';
/** How long a CRD may take to be Established and served. */
const CRD_WAIT_MS = 120_000;

/**
 * Server-side apply of a whole object (its URL from its kind), as `fieldManager`. The object goes through the client's own deserializer first: its
 * serializer expects the typed models' property names and would drop wire names such as `x-kubernetes-int-or-string`.
 */
export async function apply(kube: Kube, obj: WireObject, fieldManager = SETUP_FIELD_MANAGER): Promise<void> {
  await resendUnsent(() =>
    kube.objects.patch(
      loadYaml<KubernetesObject>(JSON.stringify(obj)),
      undefined,
      undefined,
      fieldManager,
      true,
      PatchStrategy.ServerSideApply,
    ),
  );
}

/** A GET; undefined when the object does not exist, an error naming any other refusal (getObject hides it). */
export async function getIfExists(kube: Kube, path: string): Promise<WireObject | undefined> {
  const r = await kube.request('GET', path);
  if (r.code === 404) return undefined;
  if (r.code !== 200) throw new Error(`GET ${path}: ${r.code} ${JSON.stringify(r.body.message ?? r.body)}`);
  return r.body as WireObject;
}

/** The status of a condition of an object (`True`, `False`, `Unknown`), else undefined. */
export function condition(obj: WireObject | undefined, type: string): string | undefined {
  return (obj?.status?.conditions as WireObject[] | undefined)?.find((c) => c.type === type)?.status;
}

/**
 * Resolves when the CRD `name` is Established and discovery lists it in every served version: discovery lags behind
 * Established a little, and a client resolving the kind in between is told the kind does not exist.
 */
export async function established(kube: Kube, name: string, timeoutMs = CRD_WAIT_MS): Promise<void> {
  const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
  const deadline = Date.now() + timeoutMs;
  const served = async (): Promise<boolean> => {
    const crd = await getIfExists(kube, path);
    if (condition(crd, 'Established') !== 'True') return false;
    for (const v of (crd!.spec.versions as WireObject[]).filter((x) => x.served)) {
      const list = await getIfExists(kube, `/apis/${crd!.spec.group}/${v.name}`);
      if (!(list?.resources as WireObject[] | undefined)?.some((r) => r.name === crd!.spec.names.plural)) return false;
    }
    return true;
  };
  while (!(await served())) {
    if (Date.now() > deadline) throw new Error(`CRD ${name} was not Established and served after ${timeoutMs / 1000}s`);
    await sleep(100);
  }
}

/**
 * Applies CRDs and resolves when each is Established and served (`established`). Only a CRD missing or different is
 * applied: any update of a CRD (a new field manager is one) makes the API server rebuild its storage, which fails
 * requests of suites sharing the cluster with "apiserver is shutting down".
 */
export async function installCrds(kube: Kube, crds: readonly WireObject[]): Promise<void> {
  for (const crd of crds) {
    const path = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${crd.metadata.name}`;
    const existing = await getObject(kube, path);
    if (existing && jsonSubset(crd.spec, existing.spec)) continue;
    await applyAt(kube, path, crd);
  }
  await Promise.all(crds.map((crd) => established(kube, crd.metadata.name)));
}

/**
 * How long `eventually` sleeps between polls `elapsedMs` into its wait: 200 ms at first, then a tenth of the time
 * waited so far, at most a second. A short wait stays quick; a long one (a database coming up, minutes) costs the API
 * servers a request a second instead of five, and ends at most 10% later than a tight poll would see it.
 */
export const pollDelay = (elapsedMs: number): number => Math.min(1_000, Math.max(200, Math.round(elapsedMs / 10)));

/** Polls `check` until it returns a value other than undefined; the error names `what` and the last value seen. */
export async function eventually<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const started = Date.now();
  const deadline = started + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out after ${timeoutMs / 1000}s waiting for ${what}${last ? `; last error: ${String(last)}` : ''}`);
    await sleep(pollDelay(Date.now() - started));
  }
}

/**
 * Runs `command` in a container of a Pod through the API server (`kubectl exec`; the images have no shell, so name the
 * program) and returns what it printed, stdout and stderr together; the error names the command, the Pod and the output.
 */
export async function execIn(kube: Kube, ns: string, pod: string, container: string, command: readonly string[]): Promise<string> {
  let out = '';
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      out += chunk.toString();
      done();
    },
  });
  const status = await new Promise<V1Status>((resolve, reject) => {
    new Exec(kube.config).exec(ns, pod, container, [...command], sink, sink, null, false, resolve).catch(reject);
  });
  if (status.status !== 'Success')
    throw new Error(`${command.join(' ')} in ${ns}/${pod} (container ${container}) failed: ${JSON.stringify(status)}\n${out}`);
  return out;
}

/** What the API server lets the kubeconfig's user do (a SelfSubjectAccessReview). */
export async function can(
  kube: Kube,
  verb: string,
  resource: string,
  o: { namespace?: string; group?: string; name?: string } = {},
): Promise<boolean> {
  const r = await kube.request('POST', '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews', {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SelfSubjectAccessReview',
    spec: {
      resourceAttributes: {
        verb,
        resource,
        group: o.group ?? '',
        ...(o.namespace ? { namespace: o.namespace } : {}),
        ...(o.name ? { name: o.name } : {}),
      },
    },
  });
  if (r.code !== 201) throw new Error(`access review: ${r.code} ${JSON.stringify(r.body)}`);
  return (r.body.status as { allowed: boolean }).allowed;
}
