/**
 * Klutch's own Deployments start our deployables (issue 22): the example-backend's (insecure/, letsencrypt/,
 * control-plane-mode/) and the konnector's, read from the fixture copies of Klutch's manifests, run as processes with
 * exactly the container's command line and env — only the image is our bundle. What a Pod would get from Kubernetes
 * is given as a process gets it: `$(VAR)` expanded from the container's env, Secret/ConfigMap values filled with test
 * values where they are placeholders or addresses (the test OpenID provider, the harness cluster), volume mounts as
 * folders, the in-cluster ServiceAccount as $KUBECONFIG (context namespace = the Pod's namespace), and the Pod's own
 * network by giving the backend's probe port through its variable. On the shared clusters `a` (provider) and `b` (app).
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { installBindCrds, launchBackendBundle } from '../../harness/parts/bind-backend';
import { parseYaml, ROOT } from '../../harness/crossplane/catalog';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { konnectorKubeconfig, launchKonnectorBundle } from '../../harness/parts/konnector';
import { eventually, getObject, kubeFor, requireOk, type Kube } from '../../harness/cluster/kube';
import { startOidcProvider, type OidcTestProvider } from '../../harness/login/oidc';
import { freePorts, probe, type Proc, waitReady } from '../../harness/cluster/processes';
import { sleep } from '../../lib/abort';

const FIXTURES = join(ROOT, 'test', 'fixtures', 'klutch-bind-deploy', 'example-backend');
/**
 * The entrypoints Klutch's Deployments name in `command` (its ko-built images). Our image's ENTRYPOINT runs the bundle;
 * a Pod whose `command` overrides it needs these paths in our image too (not a process matter: see the report).
 */
const KLUTCH_ENTRYPOINTS = ['/example-backend', '/ko-app/example-backend'];

interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string };
    configMapKeyRef?: { name: string; key: string };
    fieldRef?: { fieldPath: string };
  };
}
interface Container {
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  volumeMounts?: { name: string; mountPath: string }[];
  readinessProbe?: { httpGet?: { path: string; port: number } };
}
interface Manifest {
  container: Container;
  /** Volume name → Secret or ConfigMap name. */
  volumes: Map<string, string>;
  objects: Record<string, unknown>[];
}

function manifest(path: string): Manifest {
  const objects = parseYaml(readFileSync(join(FIXTURES, path), 'utf8')).filter(Boolean);
  const deployment = objects.find((o) => o.kind === 'Deployment') as {
    spec: {
      template: {
        spec: { containers: Container[]; volumes?: { name: string; secret?: { secretName: string }; configMap?: { name: string } }[] };
      };
    };
  };
  const pod = deployment.spec.template.spec;
  return {
    container: pod.containers[0]!,
    volumes: new Map((pod.volumes ?? []).map((v) => [v.name, v.secret?.secretName ?? v.configMap?.name ?? ''])),
    objects,
  };
}

/** The data of a Secret or ConfigMap of the manifest (stringData, data, or base64 data), or undefined. */
function dataOf(m: Manifest, kind: 'Secret' | 'ConfigMap', name: string): Record<string, string> | undefined {
  const o = m.objects.find((x) => x.kind === kind && (x.metadata as { name: string }).name === name) as
    { data?: Record<string, string>; stringData?: Record<string, string> } | undefined;
  if (!o) return undefined;
  const data = Object.fromEntries(
    Object.entries(o.data ?? {}).map(([k, v]) => [k, kind === 'Secret' ? Buffer.from(v, 'base64').toString() : v]),
  );
  return { ...data, ...o.stringData };
}

/**
 * The container's env as the kubelet makes it: values from Secrets and ConfigMaps (the manifest's, overridden by
 * `fill` — `<secret or configmap>/<key>` — for placeholders and addresses), fieldRefs from `fields`. A reference that
 * resolves to nothing fails the test: the Pod would not start either.
 */
function containerEnv(m: Manifest, fill: Record<string, string>, fields: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of m.container.env ?? []) {
    const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
    const kind = e.valueFrom?.secretKeyRef ? 'Secret' : 'ConfigMap';
    const v =
      e.value ??
      (ref ? (fill[`${ref.name}/${ref.key}`] ?? dataOf(m, kind, ref.name)?.[ref.key]) : undefined) ??
      (e.valueFrom?.fieldRef ? fields[e.valueFrom.fieldRef.fieldPath] : undefined);
    if (v === undefined || v.includes('<redacted>')) throw new Error(`env ${e.name}: no test value for ${JSON.stringify(e.valueFrom)}`);
    env[e.name] = v;
  }
  return env;
}

/** `$(VAR)` in an argument, expanded from the container's env as Kubernetes does (`$$` escapes; unknown stays). */
function expand(arg: string, env: Record<string, string>): string {
  return arg.replace(/\$\$|\$\(([-._a-zA-Z0-9]+)\)/g, (all, name: string | undefined) => (name === undefined ? '$' : (env[name] ?? all)));
}

/** The command line: command (Klutch's entrypoint, which our bundle stands in for) plus args, expanded. */
function commandLine(m: Manifest, env: Record<string, string>, rewrite: (arg: string) => string = (a) => a): string[] {
  for (const c of m.container.command ?? []) expect(KLUTCH_ENTRYPOINTS).toContain(c);
  expect(m.container.command?.length ?? 0).toBeLessThanOrEqual(1);
  return (m.container.args ?? []).map((a) => rewrite(expand(a, env)));
}

/** A kubeconfig standing in for the in-cluster ServiceAccount: the cluster's admin, its context namespace the Pod's. */
function inClusterKubeconfig(c: ClusterInfo, namespace: string | undefined, file: string): string {
  writeFileSync(
    file,
    stringify({
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'in-cluster', cluster: { server: c.server, 'certificate-authority-data': Buffer.from(c.ca).toString('base64') } }],
      users: [{ name: 'sa', user: { token: c.tokens.admin } }],
      contexts: [{ name: 'in-cluster', context: { cluster: 'in-cluster', user: 'sa', ...(namespace ? { namespace } : {}) } }],
      'current-context': 'in-cluster',
    }),
    { mode: 0o600 },
  );
  return file;
}

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let idp: OidcTestProvider;
let logDir: string;
const id = randomBytes(3).toString('hex');
const procs: Proc[] = [];
const namespaces: [Kube, string][] = [];
const CLIENTS = { mangodb: 'mangodb-93f3e8d86fd1fc4c9c50c74643b87d1cfce8dd5ef25f8722187fe002', 'kube-bind': `secret-${id}` };

async function namespace(kube: Kube, name: string): Promise<string> {
  await requireOk(kube, 'POST', '/api/v1/namespaces', { metadata: { name, labels: { 'klutch-kit.test/namespace': 'true' } } });
  namespaces.push([kube, name]);
  return name;
}

/**
 * Holds the backend's Lease for another replica: these backends run Klutch's `--namespace-prefix=cluster`, and must
 * not run controllers over `cluster-*` namespaces other suites on the shared cluster may make. Serving needs no Lease.
 */
async function holdLease(ns: string): Promise<void> {
  await ka.request('DELETE', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/klutch-bind-backend`);
  await requireOk(ka, 'POST', `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases`, {
    metadata: { name: 'klutch-bind-backend', namespace: ns },
    spec: { holderIdentity: 'another-replica', leaseDurationSeconds: 3600, renewTime: new Date().toISOString().replace('Z', '000Z') },
  });
}

/** Starts one example-backend Deployment's command line; resolves with its URLs once /readyz answers. */
async function startExampleBackend(
  path: string,
  /** The port its --listen-address is pointed at (the one registered at the OpenID provider). */
  listen: number,
  fill: Record<string, string>,
  /** Started outside a Pod: a kubeconfig whose context names no namespace, the Lease held in `default`. */
  outsidePod = false,
): Promise<{ proc: Proc; url: string; probeUrl: string; args: string[]; log: () => string }> {
  const m = manifest(path);
  const [probePort] = (await freePorts(1)) as [number];
  const role = `backend-${path.split('/')[0]}${outsidePod ? '-outside-pod' : ''}`;
  const dir = join(logDir, role);
  mkdirSync(dir, { recursive: true });
  const ns = outsidePod ? undefined : await namespace(ka, `kcl-${id}-${path.split('/')[0]!.slice(0, 6)}`);
  await holdLease(ns ?? 'default');
  // Volume mounts as folders: the Secrets the Deployment mounts, with the harness cluster's CA as kube-bind-ca.
  const mounts = new Map<string, string>();
  for (const v of m.container.volumeMounts ?? []) {
    const local = join(dir, 'mounts', v.mountPath);
    mkdirSync(local, { recursive: true });
    if (m.volumes.get(v.name) === 'kube-bind-ca') writeFileSync(join(local, 'ca.crt'), a.ca);
    mounts.set(v.mountPath, local);
  }
  const env = containerEnv(m, fill);
  const args = commandLine(m, env, (arg) => {
    const [flag, value] = arg.split(/=(.*)/s) as [string, string | undefined];
    if (flag === '--listen-address') return `${flag}=127.0.0.1:${listen}`;
    if (flag === '--external-address') return `${flag}=${a.server}`;
    for (const [mountPath, local] of mounts)
      if (value?.startsWith(`${mountPath}/`)) return `${flag}=${local}${value.slice(mountPath.length)}`;
    return arg;
  });
  const proc = await launchBackendBundle({
    args,
    env: {
      ...env,
      PATH: process.env.PATH,
      HOSTNAME: `example-backend-${id}`,
      KUBECONFIG: inClusterKubeconfig(a, ns, join(dir, 'in-cluster.kubeconfig')),
      // The Pod's own network: its probe port cannot collide with another's.
      BACKEND_PROBE_ADDRESS: `127.0.0.1:${probePort}`,
      // The image's trust store would hold a public issuer's CA; the test issuer's is ours.
      NODE_EXTRA_CA_CERTS: idp.caFile,
    },
    logDir: dir,
    role,
  });
  procs.push(proc);
  const probeUrl = `http://127.0.0.1:${probePort}`;
  await waitReady(proc, () => probe(`${probeUrl}/readyz`).then((r) => r.code === 200), 60_000);
  return { proc, url: `http://127.0.0.1:${listen}`, probeUrl, args, log: () => readFileSync(proc.logPath, 'utf8') };
}

async function exportDocument(
  url: string,
): Promise<{ providerPrettyName: string; authenticationMethods: { oauth2CodeGrant: { authenticatedURL: string } }[] }> {
  const r = await fetch(`${url}/export`);
  expect(r.status).toBe(200);
  return (await r.json()) as never;
}

beforeAll(async () => {
  [a, b] = await Promise.all([cluster('a'), cluster('b')]);
  ka = kubeFor(a);
  kb = kubeFor(b);
  logDir = join((await controlPlanes()).runDir, 'klutch-commandlines', id);
  mkdirSync(logDir, { recursive: true });
  await installBindCrds(ka);
}, 60_000);

afterAll(async () => {
  await Promise.all(procs.map((p) => p.stop(5_000)));
  await idp?.stop();
  for (const [kube, name] of namespaces) await kube.request('DELETE', `/api/v1/namespaces/${name}`);
});

describe("Klutch's example-backend Deployments start our backend", () => {
  // The redirect URIs name the backends' ports, which are only known once they start: one provider, registered late.
  const ports: Record<string, number> = {};
  beforeAll(async () => {
    const [insecure, letsencrypt] = (await freePorts(2)) as [number, number];
    ports.insecure = insecure;
    ports.letsencrypt = letsencrypt;
    idp = await startOidcProvider({
      logDir: join(logDir, 'oidc'),
      clients: [
        { clientId: 'mangodb', clientSecret: CLIENTS.mangodb, redirectUris: [`http://127.0.0.1:${insecure}/callback`] },
        { clientId: 'kube-bind', clientSecret: CLIENTS['kube-bind'], redirectUris: [`http://127.0.0.1:${letsencrypt}/callback`] },
      ],
      users: [{ sub: 'alice' }],
    });
  }, 30_000);

  it("insecure/: Klutch's flags (--cookie-signing-key, --listen-address, no --external-address) serve /healthz, /readyz and /export", async () => {
    const cookieKey = randomBytes(32).toString('base64');
    const ex = await startExampleBackend('insecure/example-backend.yaml', ports.insecure!, {
      'oidc-config/oidc-issuer-url': idp.issuer,
      'oidc-config/oidc-callback-url': `http://127.0.0.1:${ports.insecure}/callback`,
      // Referenced by the Deployment, not in Klutch's manifest (README: "Required secrets: cookie-config").
      'cookie-config/signing-key': cookieKey,
    });
    expect(ex.args).toContain(`--cookie-signing-key=${cookieKey}`);
    expect(ex.args).toContain('--consumer-scope=Namespaced');
    expect((await probe(`${ex.probeUrl}/healthz`)).code).toBe(200);
    expect(await exportDocument(ex.url)).toMatchObject({
      providerPrettyName: 'MangoDB',
      authenticationMethods: [{ oauth2CodeGrant: { authenticatedURL: `http://127.0.0.1:${ports.insecure}/authorize` } }],
    });
    // Klutch's form, mapped, and the log says what it became and what to prefer.
    const log = ex.log();
    expect(log).toContain("--cookie-signing-key (Klutch's form) became one key sealing cookies and state");
    expect(log).toContain('prefer --cookie-keys-file from a mounted Secret');
    expect(log).toContain('no --external-address');
    expect(log).not.toContain(cookieKey);
  });

  it('insecure/ outside a Pod, as an operator migrating from Klutch starts it: the Lease goes to `default`, no warning', async () => {
    // Klutch's backend elects no leader, so its command line names no Lease namespace; outside a Pod there is no
    // Pod namespace either, and a namespace like klutch-bind need not exist (issue 42: the backend never led).
    const [listen] = (await freePorts(1)) as [number];
    const ex = await startExampleBackend(
      'insecure/example-backend.yaml',
      listen,
      {
        'oidc-config/oidc-issuer-url': idp.issuer,
        'oidc-config/oidc-callback-url': `http://127.0.0.1:${listen}/callback`,
        'cookie-config/signing-key': randomBytes(32).toString('base64'),
      },
      true,
    );
    try {
      const campaign = await eventually('the campaign', async () =>
        ex
          .log()
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as { msg: string; lease?: string; level: string })
          .find((l) => l.msg === 'campaigning for leadership'),
      );
      expect(campaign.lease).toBe('default/klutch-bind-backend');
      // A few retry periods: it reads the Lease (held for another replica here) without a failure to report.
      await sleep(6_000);
      expect(ex.log()).not.toMatch(/cannot (create|read|update) Lease/);
    } finally {
      await ka.request('DELETE', '/apis/coordination.k8s.io/v1/namespaces/default/leases/klutch-bind-backend');
    }
  });

  it('letsencrypt/: --oidc-authorize-url, --external-address/-ca-file/-server-name from a mounted Secret serve /export', async () => {
    const ex = await startExampleBackend('letsencrypt/example-backend.yaml', ports.letsencrypt!, {
      'oidc-config/oidc-issuer-url': idp.issuer,
      'oidc-config/oidc-authorize-url': `http://127.0.0.1:${ports.letsencrypt}/authorize`,
      'oidc-config/oidc-callback-url': `http://127.0.0.1:${ports.letsencrypt}/callback`,
      'oidc-secret/oidc-issuer-client-secret': CLIENTS['kube-bind'],
      'oidc-secret/cookie-signing-key': randomBytes(64).toString('base64'),
    });
    expect(ex.args).toContain('--external-server-name=78615b03-d644-4fb7-8395-8a60efd388f2.k8s.ondigitalocean.com');
    expect((await probe(`${ex.probeUrl}/healthz`)).code).toBe(200);
    expect(await exportDocument(ex.url)).toMatchObject({
      providerPrettyName: 'MangoDB',
      authenticationMethods: [{ oauth2CodeGrant: { authenticatedURL: `http://127.0.0.1:${ports.letsencrypt}/authorize` } }],
    });
    expect(ex.log()).not.toContain('no --external-address');
  });

  it('control-plane-mode/: runs as written: the controllers only (no bind endpoints, OIDC or cookies), ready, and stops on SIGTERM', async () => {
    const m = manifest('control-plane-mode/example-backend.yaml');
    const args = commandLine(m, containerEnv(m, {}));
    expect(args).toContain('--control-plane-mode');
    const [probePort] = (await freePorts(1)) as [number];
    const dir = join(logDir, 'backend-control-plane-mode');
    mkdirSync(dir, { recursive: true });
    const ns = await namespace(ka, `kcl-${id}-cpm`);
    // Klutch's --namespace-prefix=cluster: no controllers over other suites' cluster-* namespaces (see holdLease).
    await holdLease(ns);
    const proc = await launchBackendBundle({
      args,
      env: {
        PATH: process.env.PATH,
        HOSTNAME: `example-backend-${id}-cpm`,
        KUBECONFIG: inClusterKubeconfig(a, ns, join(dir, 'in-cluster.kubeconfig')),
        BACKEND_PROBE_ADDRESS: `127.0.0.1:${probePort}`,
      },
      logDir: dir,
      role: 'backend-control-plane-mode',
    });
    procs.push(proc);
    await waitReady(proc, () => probe(`http://127.0.0.1:${probePort}/readyz`).then((r) => r.code === 200), 60_000);
    const log = readFileSync(proc.logPath, 'utf8');
    expect(log).toContain('--control-plane-mode: no bind endpoints, OIDC or cookies');
    expect(log).not.toContain('serving the bind endpoints');
    await proc.stop(10_000);
    expect(proc.exited()).toBe('code 0');
  });
});

describe("Klutch's konnector Deployment starts our konnector", () => {
  it('no arguments, POD_NAME and POD_NAMESPACE: /healthz on 8080 (its readiness probe), the Lease klutch-bind held by the Pod', async () => {
    const m = manifest('../konnector/90-deployment.yaml');
    expect(m.container.readinessProbe?.httpGet).toEqual({ path: '/healthz', port: 8080 });
    const ns = await namespace(kb, `kcl-${id}-konnector`);
    // Its ServiceAccount may take the Lease in its namespace and nothing else: with Klutch's */*/* ClusterRole (or
    // ours) a konnector serving every namespace would sync the bindings of the other suites on this shared cluster.
    await requireOk(kb, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: 'konnector' } });
    await requireOk(kb, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/roles`, {
      metadata: { name: 'konnector-lease' },
      rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] }],
    });
    await requireOk(kb, 'POST', `/apis/rbac.authorization.k8s.io/v1/namespaces/${ns}/rolebindings`, {
      metadata: { name: 'konnector-lease' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'konnector-lease' },
      subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: ns }],
    });
    const dir = join(logDir, 'konnector');
    mkdirSync(dir, { recursive: true });
    const kubeconfig = join(dir, 'in-cluster.kubeconfig');
    writeFileSync(kubeconfig, await konnectorKubeconfig(b, ns), { mode: 0o600 });
    const pod = `konnector-${id}-x7k2p`;
    const env = containerEnv(m, {}, { 'metadata.name': pod, 'metadata.namespace': ns });
    const health = await probe('http://127.0.0.1:8080/healthz').catch(() => undefined);
    expect(health, 'port 8080 is taken on this machine: the konnector must listen there').toBeUndefined();
    const proc = await launchKonnectorBundle({
      args: commandLine(m, env),
      env: { ...env, PATH: process.env.PATH, HOSTNAME: pod, KUBECONFIG: kubeconfig },
      logDir: dir,
      role: 'konnector',
    });
    procs.push(proc);
    await waitReady(proc, () => probe('http://127.0.0.1:8080/healthz').then((r) => r.code === 200), 30_000);
    const lease = await eventually('the Lease held by the Pod', async () => {
      const l = await getObject(kb, `/apis/coordination.k8s.io/v1/namespaces/${ns}/leases/klutch-bind`);
      return l?.spec?.holderIdentity === pod ? l : undefined;
    });
    expect(lease.spec.leaseDurationSeconds).toBe(15);
    await proc.stop(10_000);
    expect(proc.exited()).toBe('code 0');
  });
});
