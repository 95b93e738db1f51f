/**
 * The bind backend for suites, benches and the sandbox: the real bundle (dist/backend/backend.mjs, built by the one
 * bundle step) in a process of its own against a harness cluster and a test OpenID provider, plus what it needs on
 * the provider (the bind CRDs, a namespace of its own) and a loopback callback server that receives BindingResponses
 * the way kubectl bind's does.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname, join } from 'node:path';
import { bindApiCrds } from '../../exports/bind-api';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { synthCatalog } from '../crossplane/catalog';
import { repoRoot } from '../root';
import type { ClusterInfo } from '../cluster/control-plane';
import { applyAt, type Kube, kubeFor } from '../cluster/kube';
import type { OidcTestProvider } from '../login/oidc';
import { type BundleLaunch, launchBundle } from './bundle-process';
import { freePorts, launch, probe, type Proc, waitReady } from '../cluster/processes';
import type { KeyPairPem } from '../cluster/pki';
import { claimCrd, type XrdObject } from '../../lib/xcrd';
import { sleep } from '../../lib/abort';

export const BACKEND_CLIENT = { clientId: 'klutch-bind', clientSecret: 'klutch-bind-test-secret' } as const;

export interface BindBackendOptions {
  readonly cluster: ClusterInfo;
  readonly idp: Pick<OidcTestProvider, 'issuer' | 'caFile'>;
  /** The backend's kubeconfig. @default the cluster admin's */
  readonly kubeconfig?: string;
  /** The backend's own namespace (created if missing). @default a new `bk-<random>` */
  readonly namespace?: string;
  /** @default a free port; fixed, the redirect URI registered at the provider must name it */
  readonly port?: number;
  /** Extra flags (`--token-lifetime=10m`, ...). */
  readonly args?: readonly string[];
  /** Keys file content. @default one new key */
  readonly keys?: string;
  /** @default a new folder under $TMPDIR */
  readonly dir?: string;
  /** Wait for /readyz. @default true */
  readonly waitReady?: boolean;
  /** Serve the bind endpoints over HTTPS with this pair (the callback URL becomes https, so cookies are Secure). */
  readonly tls?: KeyPairPem;
  /** The backend bundle to run (bench/backend runs an earlier revision's beside this tree's). @default this tree's */
  readonly bundle?: string;
  /** Node flags before the bundle (`--cpu-prof`, which NODE_OPTIONS does not take). @default none */
  readonly nodeArgs?: readonly string[];
}

export interface RunningBindBackend {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly probeUrl: string;
  readonly namespace: string;
  readonly keysFile: string;
  readonly dir: string;
  readonly proc: Proc;
  stop(): Promise<void>;
}

/** The redirect URI to register at the OpenID provider for a backend on `port`. */
export function callbackUri(port: number, tls = false): string {
  return `${tls ? 'https' : 'http'}://127.0.0.1:${port}/callback`;
}

/** A new keys file line (32 random bytes, base64). */
export function newKey(): string {
  return randomBytes(32).toString('base64');
}

/** Applies the bind CRDs (server-side apply, so suites may share a cluster) and waits until they are served. */
export async function installBindCrds(kube: Kube): Promise<void> {
  for (const crd of bindApiCrds()) {
    await applyAt(kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${(crd.metadata as { name: string }).name}`, crd);
  }
  await waitEstablished(
    kube,
    bindApiCrds().map((c) => (c.metadata as { name: string }).name),
  );
}

export async function waitEstablished(kube: Kube, names: readonly string[]): Promise<void> {
  const deadline = Date.now() + 30_000;
  for (const name of names) {
    for (;;) {
      const r = await kube.request('GET', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
      const conds = (r.body.status as { conditions?: { type: string; status: string }[] } | undefined)?.conditions ?? [];
      if (conds.some((c) => c.type === 'Established' && c.status === 'True')) break;
      if (Date.now() > deadline) throw new Error(`CRD ${name} is not Established after 30s: ${JSON.stringify(r.body.status)}`);
      await sleep(100);
    }
  }
}

/** Starts the bundled backend; resolves once /readyz answers 200 (unless told not to wait). */
export async function startBindBackend(o: BindBackendOptions): Promise<RunningBindBackend> {
  // Beside the cluster's logs (kept for reading a failure, pruned with the run); its key files go when it stops.
  const dir = o.dir ?? mkdtempSync(join(dirname(o.cluster.kubeconfig), 'backend-'));
  const [port, probePort] = (o.port ? [o.port, (await freePorts(1))[0]!] : await freePorts(2)) as [number, number];
  const kube = kubeFor(o.cluster);
  const namespace = o.namespace ?? `bk-${randomBytes(3).toString('hex')}`;
  const ns = await kube.request('POST', '/api/v1/namespaces', { metadata: { name: namespace } });
  if (ns.code >= 300 && ns.code !== 409) throw new Error(`cannot create namespace ${namespace}: ${JSON.stringify(ns.body)}`);
  const keysFile = join(dir, 'cookie-keys');
  writeFileSync(keysFile, o.keys ?? `${newKey()}\n`, { mode: 0o600 });
  const caFile = join(dir, 'provider-ca.crt');
  writeFileSync(caFile, o.cluster.ca);
  const bundle = o.bundle ?? (await bundleDeployable(repoRoot(), deployable('backend')));
  const url = `${o.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
  const tlsArgs: string[] = [];
  if (o.tls) {
    writeFileSync(join(dir, 'tls.crt'), o.tls.cert);
    writeFileSync(join(dir, 'tls.key'), o.tls.key, { mode: 0o600 });
    tlsArgs.push(`--tls-cert-file=${join(dir, 'tls.crt')}`, `--tls-key-file=${join(dir, 'tls.key')}`);
  }
  const args = [
    `--listen-address=127.0.0.1:${port}`,
    `--probe-address=127.0.0.1:${probePort}`,
    `--oidc-issuer-url=${o.idp.issuer}`,
    `--oidc-issuer-client-id=${BACKEND_CLIENT.clientId}`,
    `--oidc-callback-url=${callbackUri(port, Boolean(o.tls))}`,
    ...tlsArgs,
    `--oidc-ca-file=${o.idp.caFile}`,
    `--cookie-keys-file=${keysFile}`,
    `--kubeconfig=${o.kubeconfig ?? o.cluster.kubeconfig}`,
    `--namespace=${namespace}`,
    `--external-address=${o.cluster.server}`,
    `--external-ca-file=${caFile}`,
    ...(o.args ?? []),
  ];
  // setpriv: the backend gets SIGTERM when the process that started it dies, so nothing outlives a killed test run.
  const proc = launch({
    command: 'setpriv',
    args: ['--pdeathsig', 'TERM', process.execPath, ...(o.nodeArgs ?? []), bundle, ...args],
    role: 'backend',
    owner: url,
    logDir: dir,
    env: { ...process.env, BACKEND_OIDC_ISSUER_CLIENT_SECRET: BACKEND_CLIENT.clientSecret },
  });
  const probeUrl = `http://127.0.0.1:${probePort}`;
  const stop = async (timeoutMs: number) => {
    await proc.stop(timeoutMs);
    for (const f of [keysFile, join(dir, 'tls.key')]) rmSync(f, { force: true });
  };
  try {
    const path = o.waitReady !== false ? '/readyz' : '/healthz';
    await waitReady(proc, () => probe(`${probeUrl}${path}`).then((r) => r.code === 200), 60_000);
  } catch (e) {
    await stop(5_000);
    throw e;
  }
  return { url, probeUrl, namespace, keysFile, dir, proc, stop: () => stop(15_000) };
}

/** The bundled backend as a Deployment runs it (harness/parts/bundle-process.ts). */
export function launchBackendBundle(o: BundleLaunch): Promise<Proc> {
  return launchBundle('backend', o, 'TERM');
}

export interface LoopbackCallback {
  /** `http://127.0.0.1:<port>/callback` */
  readonly url: string;
  readonly port: number;
  /** Every `response` parameter received, in order. */
  readonly responses: string[];
  close(): Promise<void>;
}

/** A loopback callback like kubectl bind's: takes `?response=`, answers with an "authenticated" page. */
export async function startLoopbackCallback(): Promise<LoopbackCallback> {
  const responses: string[] = [];
  const server = http.createServer((req, res) => {
    const u = new URL(req.url ?? '/', 'http://127.0.0.1');
    const r = u.searchParams.get('response');
    if (u.pathname !== '/callback' || !r) {
      res.writeHead(400).end('no response parameter');
      return;
    }
    responses.push(r);
    res.writeHead(200, { 'Content-Type': 'text/html' }).end('<html><body><h1>authenticated</h1></body></html>');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}/callback`,
    port,
    responses,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}

/**
 * The provider side of one synthesized API: its claim CRD (as Crossplane makes it from the XRD) and its export
 * template in `templateNamespace`. Applied with server-side apply; resolves when the CRD is served.
 */
export async function installClaimApi(
  kube: Kube,
  plural: string,
  templateNamespace: string,
  /** The synth output (path → objects). @default the catalog rendered in this process (synthCatalog) */
  synthOutput?: Map<string, Record<string, unknown>[]>,
): Promise<{ crd: Record<string, unknown>; template: Record<string, unknown> }> {
  const files = synthOutput ?? (await synthCatalog());
  let crd: Record<string, unknown> | undefined;
  for (const [path, objects] of files) {
    if (!/^packages\/dataservices\/apis\/[^/]+\/definition\.yaml$/.test(path)) continue;
    const xrd = objects[0] as unknown as XrdObject;
    if (xrd.spec.claimNames?.plural === plural) crd = claimCrd(xrd) as unknown as Record<string, unknown>;
  }
  const template = files.get(`control-plane/export-templates/${plural}.yaml`)?.[0];
  if (!crd || !template) throw new Error(`the synthesized catalog has no claim API "${plural}"`);
  const name = (crd.metadata as { name: string }).name;
  await applyAt(kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, crd);
  await waitEstablished(kube, [name]);
  const t = { ...template, metadata: { ...(template.metadata as object), namespace: templateNamespace } };
  const applied = await applyAt(
    kube,
    `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${templateNamespace}/apiserviceexporttemplates/${plural}`,
    t,
  );
  return { crd, template: applied };
}

export interface LoadBalancer {
  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  readonly port: number;
  /** How many requests each upstream answered. */
  readonly served: Map<string, number>;
  close(): Promise<void>;
}

/**
 * What a Service does for several replicas: each request goes to the next upstream in turn (an upstream that refuses
 * the connection is skipped), so consecutive requests of one browser land on different replicas.
 */
export async function startLoadBalancer(upstreams: () => readonly string[], port = 0): Promise<LoadBalancer> {
  const served = new Map<string, number>();
  let next = 0;
  const forward = (req: http.IncomingMessage, res: http.ServerResponse, body: Buffer, tries: number): void => {
    const list = upstreams();
    if (tries >= list.length) {
      res.writeHead(502).end('no upstream answered');
      return;
    }
    const target = new URL(list[next++ % list.length]!);
    const up = http.request({ host: target.hostname, port: target.port, method: req.method, path: req.url, headers: req.headers }, (r) => {
      served.set(target.origin, (served.get(target.origin) ?? 0) + 1);
      res.writeHead(r.statusCode ?? 502, r.headers);
      r.pipe(res);
    });
    up.on('error', () => forward(req, res, body, tries + 1));
    up.end(body);
  };
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => forward(req, res, Buffer.concat(chunks), 0));
  });
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  const bound = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${bound}`,
    port: bound,
    served,
    close: () => new Promise<void>((r) => (server.closeAllConnections(), server.close(() => r()))),
  };
}
