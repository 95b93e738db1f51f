/**
 * AppClusterBinding end to end (issue 21), on two harness clusters: `a` is the control plane (our bundled backend in
 * --control-plane-mode: controllers only, no OIDC; running as the ServiceAccount of the shipped BindBackend RBAC),
 * `b` the app cluster. The platform operator registers `b` with an
 * AppClusterBinding whose kubeconfig is NOT cluster-admin: a token of the ServiceAccount that the synthesized
 * AppClusterRole (dist/app-cluster/control-plane-konnector/clusterrole.yaml) binds.
 *
 * The test clusters run no Pods, so the konnector Deployment the controller writes on the control plane never starts:
 * the test runs the same konnector bundle as a process with exactly that Deployment's arguments and environment and a
 * token of its ServiceAccount (klutch-binder in the binding root namespace) — only --probe-address is moved to a free
 * loopback port, since :8080 is shared on this machine — as the sandbox does for the app-cluster konnector.
 *
 * Tenants attack each other here too (issue 34): an AppClusterBinding whose Klutch root namespace name collides with
 * another's, and konnector overrides that would run another image or command on the control plane.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, BIND_API_VERSION, exportTemplateManifest } from '../../exports/bind-api';
import { hashedRootNamespace, klutchRootNamespace } from '../../backend/app-cluster-binding/app-cluster-binding.root';
import { BindBackend } from '../../backend/deploy/bind-backend';
import { AppClusterRole } from '../../konnector/deploy/app-cluster-role';
import { PG, SB } from '../../harness/parts/backend-suite';
import { installBindCrds, installClaimApi, launchBackendBundle, waitEstablished } from '../../harness/parts/bind-backend';
import { ROOT } from '../../harness/crossplane/catalog';
import { Labels, MANAGED_BY } from '../../backend/labels';
import { cluster, controlPlanes } from '../support/cluster';
import { bearerKubeconfigYaml, type ClusterInfo } from '../../harness/cluster/control-plane';
import { applyConstruct, launchKonnectorBundle } from '../../harness/parts/konnector';
import { applyAt, eventually, getObject, kubeFor, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { removeLeftoverCrd } from '../support/bind-cleanup';
import { admitsIngress } from '../support/network-policy';
import { freePorts, probe, type Proc, waitReady } from '../../harness/cluster/processes';
import { releaseDoc } from '../../lib/version';

type O = WireObject;
const id = randomBytes(3).toString('hex');
const BIND = '/apis/klutch.anynines.com/v1alpha1';
/** The backend's --max-app-cluster-bindings here. */
const ACB_LIMIT = 6;
const ACBS = (ns: string, name = '') => `${BIND}/namespaces/${ns}/appclusterbindings${name ? `/${name}` : ''}`;
const PG_API = `${PG.resource}.${PG.group}`;
const SB_API = `${SB.resource}.${SB.group}`;
/** An API whose template lets only group `dba` bind it: AppClusterBindings of `ops` are not in it. */
const WIDGETS = { group: `acb${id}.klutch-kit.test`, resource: 'widgets' } as const;
const WIDGETS_API = `${WIDGETS.resource}.${WIDGETS.group}`;
const ops = `acb-${id}`; // where the platform team keeps AppClusterBindings and kubeconfig Secrets on a
const app = `acba-${id}`; // the app's namespace in b
const templates = `acbt-${id}`;
const prefix = `acb${id}`;
/** The namespace of the backend's ServiceAccount and Lease, as BindBackend makes it. */
const BACKEND_NS = 'klutch-bind-backend';
const pgPath = (namespace: string, name = '') => `/apis/anynines.com/v1/namespaces/${namespace}/${PG.resource}${name ? `/${name}` : ''}`;
const crdPath = (name: string) => `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`;
/** The root namespace of an AppClusterBinding here: every namespace of this file has a dash, so it is the hashed one. */
const rootOf = (namespace: string, name: string) => hashedRootNamespace({ metadata: { namespace, name } });
/** Where a colliding team keeps its AppClusterBindings: `<ops>-app`, so that its `<id>` makes Klutch's name of `<ops>/app-<id>`. */
const rival = `${ops}-app`;

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let logDir: string;
let backend: Proc;
let probeUrl: string;
/** A loopback port nothing listens on, among the ports the root namespaces' NetworkPolicy opens (the unreachable app cluster). */
let deadPort: number;
const procs: Proc[] = [];
/** The control-plane konnector of the first AppClusterBinding, as its Pod would run. */
let konnector: Proc;

const condition = (o: O | undefined, type: string) => (o?.status?.conditions as O[] | undefined)?.find((c) => c.type === type);

/** A kubeconfig of a ServiceAccount's token (TokenRequest). */
async function saKubeconfig(kube: Kube, c: ClusterInfo, namespace: string, name: string): Promise<string> {
  const r = await requireOk(kube, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 7200 },
  });
  return bearerKubeconfigYaml(c.name, c.server, c.ca, `system:serviceaccount:${namespace}:${name}`, r.status.token as string);
}

async function putSecret(namespace: string, name: string, kubeconfig: string): Promise<void> {
  await applyAt(ka, `/api/v1/namespaces/${namespace}/secrets/${name}`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
  });
}

function acb(name: string, secret: string, apis: readonly { group: string; resource: string }[]): O {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'AppClusterBinding',
    metadata: { name, namespace: ops },
    spec: {
      kubeconfigSecretRef: { namespace: ops, name: secret, key: 'kubeconfig' },
      apiExports: apis.map((x) => ({ group: x.group, resource: x.resource })),
      konnector: { deploy: true },
    },
  };
}

/**
 * The konnector Deployment's Pod, as a process: its container's args and env (fieldRefs resolved as the kubelet
 * would), and the token of its ServiceAccount on the control plane.
 */
async function runKonnectorOf(deployment: O): Promise<{ proc: Proc; url: string }> {
  const ns = deployment.metadata.namespace as string;
  const pod = `${deployment.metadata.name}-${id}`;
  const spec = deployment.spec.template.spec as O;
  const container = (spec.containers as O[])[0]!;
  const env: Record<string, string> = {};
  for (const e of container.env as O[])
    env[e.name] =
      e.value ??
      ({ 'metadata.name': pod, 'metadata.namespace': ns } as Record<string, string>)[e.valueFrom?.fieldRef?.fieldPath as string]!;
  const [port] = await freePorts(1);
  const args = (container.args as string[])
    .map((x) => x.replace(/\$\((\w+)\)/g, (_, v: string) => env[v] ?? ''))
    .map((x) => (x.startsWith('--probe-address=') ? `--probe-address=127.0.0.1:${port}` : x));
  const dir = join(logDir, 'konnector');
  mkdirSync(dir, { recursive: true });
  const kubeconfig = join(dir, `${ns}.kubeconfig`);
  writeFileSync(kubeconfig, await saKubeconfig(ka, a, ns, spec.serviceAccountName as string), { mode: 0o600 });
  const proc = await launchKonnectorBundle({
    args: [...args, `--kubeconfig=${kubeconfig}`],
    env: { ...env, PATH: process.env.PATH },
    logDir: dir,
    role: `konnector-${ns}`,
  });
  procs.push(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitReady(proc, () => probe(`${url}/healthz`).then((r) => r.code === 200), 30_000);
  return { proc, url };
}

/** Waits until the first AppClusterBinding's PostgresqlInstance is bound; on a timeout says what its status and binding said. */
async function boundAgain(when: string): Promise<void> {
  const name = `app-${id}`;
  try {
    await eventually(`bound ${when}`, async () =>
      condition(await getObject(ka, ACBS(ops, name)), PG_API)?.status === 'True' ? true : undefined,
    );
  } catch (e) {
    const acbStatus = (await getObject(ka, ACBS(ops, name)))?.status;
    const binding = (await getObject(ka, `${BIND}/namespaces/${rootOf(ops, name)}/apiservicebindings/${PG_API}`))?.status;
    throw new Error(
      `${(e as Error).message}\nAppClusterBinding status: ${JSON.stringify(acbStatus)}\nAPIServiceBinding status: ${JSON.stringify(binding)}`,
    );
  }
}

beforeAll(async () => {
  [a, b] = await Promise.all([cluster('a'), cluster('b')]);
  ka = kubeFor(a);
  kb = kubeFor(b);
  logDir = join((await controlPlanes()).runDir, 'app-cluster-binding', id);
  mkdirSync(logDir, { recursive: true });
  await installBindCrds(ka);
  for (const ns of [ops, templates]) await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  await requireOk(kb, 'POST', '/api/v1/namespaces', { metadata: { name: app } });
  await installClaimApi(ka, PG.resource, templates);
  await installClaimApi(ka, SB.resource, templates);
  await applyAt(ka, crdPath(WIDGETS_API), {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: WIDGETS_API },
    spec: {
      group: WIDGETS.group,
      scope: 'Namespaced',
      names: { plural: WIDGETS.resource, singular: 'widget', kind: 'Widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  });
  await waitEstablished(ka, [WIDGETS_API]);
  const widgets = exportTemplateManifest({ name: WIDGETS.resource, namespace: templates, ...WIDGETS });
  widgets.metadata.annotations = { 'klutch-kit.anynines.com/bind-allowed-groups': 'dba' };
  await requireOk(
    ka,
    'POST',
    `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${templates}/apiserviceexporttemplates`,
    widgets,
  );

  // The app cluster: the minimal ClusterRole as synth writes it, for the APIs here.
  await applyConstruct(kb, (c) => {
    new AppClusterRole(c, 'role', {
      apis: [{ ...PG, claimed: ['secrets'] }, { ...SB, claimed: ['secrets', 'configmaps'] }, { ...WIDGETS }],
    });
  });
  // An earlier suite of this worker may have left these APIs' CRDs in b (owned by its bindings).
  for (const name of [PG_API, SB_API]) await removeLeftoverCrd(kb, name);

  // The backend's RBAC as synth ships it (BindBackend; not its Deployment: no Pods here), and a token of its
  // ServiceAccount: the controller must get by with exactly what the shipped ClusterRole grants.
  await applyConstruct(
    ka,
    (c) => {
      new BindBackend(c, 'backend', {
        issuerUrl: 'https://issuer.invalid',
        clientId: 'klutch-bind',
        publicUrl: 'https://bind.invalid',
        externalAddress: a.server,
      });
    },
    ['Deployment', 'Service', 'NetworkPolicy', 'PodMonitor', 'ServiceMonitor'],
  );
  const backendKubeconfig = join(logDir, 'backend.kubeconfig');
  writeFileSync(backendKubeconfig, await saKubeconfig(ka, a, BACKEND_NS, 'klutch-bind-backend'), { mode: 0o600 });
  // The backend as Klutch's control-plane-mode Deployment runs it, plus where it is and what consumers reach.
  const [port, dead] = await freePorts(2);
  deadPort = dead!;
  probeUrl = `http://127.0.0.1:${port}`;
  const caFile = join(logDir, 'control-plane-ca.crt');
  writeFileSync(caFile, a.ca);
  backend = await launchBackendBundle({
    args: [
      '--control-plane-mode',
      `--namespace-prefix=${prefix}`,
      '--pretty-name=MangoDB',
      '--consumer-scope=Namespaced',
      `--kubeconfig=${backendKubeconfig}`,
      `--namespace=${BACKEND_NS}`,
      `--external-address=${a.server}`,
      `--external-ca-file=${caFile}`,
      `--probe-address=127.0.0.1:${port}`,
      // The app cluster's API server port (a loopback one here) and the dead one, and Klutch's konnector image, which
      // its example names.
      `--konnector-api-ports=443,6443,${new URL(b.server).port},${deadPort}`,
      '--konnector-allowed-images=public.ecr.aws/w5n9a2g2/klutch/konnector:*',
      // Two PostgresqlInstances per provider namespace: the tests make 'first' and 'second'; a third is refused.
      `--claim-quota=count/${PG_API}=2`,
      // Prometheus' namespace: the only one whose Pods reach a root konnector's probe port.
      '--monitoring-namespace=monitoring',
      // Above what any test holds at once in one namespace; the crowded namespace's test goes past it.
      `--max-app-cluster-bindings=${ACB_LIMIT}`,
    ],
    env: { PATH: process.env.PATH },
    logDir,
    role: 'backend-control-plane-mode',
  });
  procs.push(backend);
  await waitReady(backend, () => probe(`${probeUrl}/readyz`).then((r) => r.code === 200), 60_000);
}, 180_000);

afterAll(async () => {
  // Whatever a failed test left: AppClusterBindings and bindings lose their finalizers, so the namespaces can go.
  if (ka) {
    for (const ns of [ops, rival, 'default']) {
      const list = ((await getObject(ka, ACBS(ns)))?.items ?? []) as O[];
      for (const o of list.filter((x) => ns !== 'default' || x.metadata.name === 'my-app-cluster')) {
        await ka.request('PATCH', ACBS(ns, o.metadata.name), { metadata: { finalizers: null } }, 'application/merge-patch+json');
        await ka.request('DELETE', ACBS(ns, o.metadata.name));
      }
    }
  }
  await Promise.all(procs.map((p) => p.stop(10_000)));
  if (ka) for (const ns of [ops, rival, templates]) await ka.request('DELETE', `/api/v1/namespaces/${ns}`);
  if (kb) await kb.request('DELETE', `/api/v1/namespaces/${app}`);
}, 120_000);

/** The cluster namespace (consumer) of an AppClusterBinding, by the identity recorded on it. */
async function clusterNamespaceOf(namespace: string, name: string): Promise<string> {
  const id = `system:appclusterbinding:${namespace}:${name}#`;
  const found = await eventually(`the consumer namespace of ${namespace}/${name}`, async () =>
    (((await requireOk(ka, 'GET', '/api/v1/namespaces')).items ?? []) as O[]).find(
      (n) => (n.metadata.annotations?.[Annotations.identity] as string | undefined)?.startsWith(id) && !n.metadata.deletionTimestamp,
    ),
  );
  return found.metadata.name as string;
}

describe('AppClusterBinding', () => {
  const name = `app-${id}`;
  /** Its root namespace, as its status records it. */
  let root = '';

  it('binds an app cluster with the minimal kubeconfig: konnector on the control plane, claim up, status down; a forbidden API refused', async () => {
    await putSecret(ops, 'app-kubeconfig', await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector'));
    await requireOk(ka, 'POST', ACBS(ops), acb(name, 'app-kubeconfig', [PG, SB, WIDGETS]));
    root = await eventually(
      'the root namespace recorded',
      async () => (await getObject(ka, ACBS(ops, name)))?.status?.rootNamespace as string,
    );
    // Asked of the app cluster: the minimal kubeconfig may not do everything, so it is not flagged ClusterAdmin.
    expect(condition(await getObject(ka, ACBS(ops, name)), 'AppClusterAccess')).toMatchObject({ status: 'True', reason: 'Allowed' });

    // Klutch's names: the Deployment with Klutch's arguments, the labelled bindings.
    const deployment = await eventually('the konnector Deployment', () =>
      getObject(ka, `/apis/apps/v1/namespaces/${root}/deployments/konnector-${name}`),
    );
    const container = deployment.spec.template.spec.containers[0] as O;
    expect(deployment.spec.template.spec.serviceAccountName).toBe('klutch-binder');
    expect(container.args).toEqual(
      expect.arrayContaining([
        '--control-plane-mode',
        '--app-cluster-kubeconfig-secret-name=app-cluster-kubeconfig',
        `--app-cluster-kubeconfig-secret-namespace=${root}`,
        '--app-cluster-kubeconfig-secret-key=kubeconfig',
        `--binding-root-namespace=${root}`,
        '--lease-namespace=$(POD_NAMESPACE)',
      ]),
    );
    const { url, proc } = await runKonnectorOf(deployment);
    konnector = proc;

    const bound = await eventually(
      'PostgresqlInstance bound (its APIServiceBinding Ready)',
      async () => {
        const o = await getObject(ka, ACBS(ops, name));
        return condition(o, PG_API)?.status === 'True' ? o : undefined;
      },
      90_000,
    );
    for (const t of ['SecretValid', 'AppClusterAccess', 'KonnectorDeployed']) expect(condition(bound, t)?.status, t).toBe('True');
    const binding = await requireOk(ka, 'GET', `${BIND}/namespaces/${root}/apiservicebindings/${PG_API}`);
    expect(binding.metadata.labels).toMatchObject({
      'klutch.anynines.com/appclusterbinding-name': name,
      'klutch.anynines.com/appclusterbinding-namespace': ops,
    });
    expect(await getObject(kb, crdPath(PG_API))).toBeDefined();

    // The forbidden API: refused with a condition naming it and the group, counted and audited; never bound.
    const widgets = condition(bound, WIDGETS_API) as O;
    expect(widgets).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect(widgets.message).toContain(`only a member of group "dba" may bind ${WIDGETS_API}`);
    expect(condition(bound, 'Ready')?.status).toBe('False');
    expect(await getObject(ka, `${BIND}/namespaces/${root}/apiservicebindings/${WIDGETS_API}`)).toBeUndefined();
    expect(await getObject(kb, crdPath(WIDGETS_API))).toBeUndefined();
    const metrics = await (await fetch(`${probeUrl}/metrics`)).text();
    expect(metrics).toContain(`klutch_backend_bind_refusals_total{api="${WIDGETS_API}",reason="not-allowed"} 1`);
    const audit = readFileSync(backend.logPath, 'utf8')
      .split('\n')
      .filter((l) => l.includes('"event":"bind-refused"'))
      .map((l) => JSON.parse(l) as O);
    expect(audit).toEqual([
      expect.objectContaining({
        audit: true,
        path: 'appclusterbinding',
        api: WIDGETS_API,
        subject: `system:appclusterbinding:${ops}:${name}`,
      }),
    ]);
    expect((await probe(`${url}/readyz`)).code).toBe(200);

    // A claim in the app cluster goes up to the control plane; its status comes down.
    const clusterNs = await clusterNamespaceOf(ops, name);
    expect(clusterNs.startsWith(`${prefix}-`)).toBe(true);
    const claim = {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'first', namespace: app },
      spec: { service: 'a9s-postgresql17', plan: 'postgresql-single-nano', compositionRef: { name: 'a9s-postgresql' } },
    };
    await requireOk(kb, 'POST', pgPath(app), claim);
    const pns = await eventually(
      'the provider namespace of the app namespace',
      async () =>
        (await getObject(ka, `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`))?.status?.namespace as string | undefined,
    );
    const up = await eventually('the claim upstream', () => getObject(ka, pgPath(pns, 'first')));
    expect(up.spec).toMatchObject(claim.spec);
    await requireOk(
      ka,
      'PATCH',
      `${pgPath(pns, 'first')}/status`,
      { status: { managed: { state: 'ready' } } },
      'application/merge-patch+json',
    );
    await eventually('the status in the app cluster', async () =>
      (await getObject(kb, pgPath(app, 'first')))?.status?.managed?.state === 'ready' ? true : undefined,
    );
  }, 240_000);

  it("names its root namespace injectively (this one's Klutch name is ambiguous: it has dashes), labels it with its uid, fences it with a NetworkPolicy", async () => {
    expect(root).toBe(rootOf(ops, name));
    const mine = await requireOk(ka, 'GET', ACBS(ops, name));
    expect((await requireOk(ka, 'GET', `/api/v1/namespaces/${root}`)).metadata.labels).toMatchObject({
      'klutch-kit.anynines.com/appclusterbinding-uid': mine.metadata.uid,
    });
    for (const path of [
      `${BIND}/namespaces/${root}/apiservicebindings/${PG_API}`,
      `/apis/apps/v1/namespaces/${root}/deployments/konnector-${name}`,
      `/api/v1/namespaces/${root}/secrets/kubeconfig`,
      `/api/v1/namespaces/${root}/secrets/app-cluster-kubeconfig`,
    ])
      expect((await requireOk(ka, 'GET', path)).metadata.labels['klutch-kit.anynines.com/appclusterbinding-uid'], path).toBe(
        mine.metadata.uid,
      );
    // Nothing in it but DNS and the API servers' ports goes out, nothing but the monitoring namespace's scrapes come in.
    // These clusters run no Pods: the object, as the API server keeps it, is checked here; network-policies.test.ts
    // sends real connections through the same policy on the Pod platform.
    const policy = await requireOk(ka, 'GET', `/apis/networking.k8s.io/v1/namespaces/${root}/networkpolicies/klutch-bind-root`);
    const anywhere = [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }];
    // --konnector-api-ports as given above, and --external-address's port.
    const apiPorts = [...new Set([443, 6443, Number(new URL(b.server).port), deadPort, Number(new URL(a.server).port)])].sort(
      (x, y) => x - y,
    );
    expect(policy.spec).toEqual({
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } }],
          ports: [{ protocol: 'TCP', port: 8080 }],
        },
      ],
      egress: [
        {
          to: [{ namespaceSelector: {} }, ...anywhere],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        { to: anywhere, ports: apiPorts.map((port) => ({ protocol: 'TCP', port })) },
      ],
    });
    // Issue 34, item 10: the konnector's probe and metrics listener, reached from another tenant's Pods before.
    const konnectorPod = { namespace: root, labels: { app: `konnector-${name}` } };
    const from = (namespace: string) => ({ namespace, namespaceLabels: { 'kubernetes.io/metadata.name': namespace }, ip: '10.0.0.7' });
    const admitted = (namespace: string) => admitsIngress([policy], konnectorPod, from(namespace), 8080);
    expect({ tenant: admitted(`${prefix}-x7k2p`), otherRoot: admitted(rootOf(ops, 'other')), monitoring: admitted('monitoring') }).toEqual({
      tenant: false,
      otherRoot: false,
      monitoring: true,
    });
  });

  it('removing an API from apiExports unbinds it: its binding, its CRD in the app cluster, then its export', async () => {
    const before = await requireOk(ka, 'GET', ACBS(ops, name));
    await eventually(
      'ServiceBinding bound',
      async () => (condition(await getObject(ka, ACBS(ops, name)), SB_API)?.status === 'True' ? true : undefined),
      60_000,
    );
    expect(await getObject(kb, crdPath(SB_API))).toBeDefined();
    await requireOk(ka, 'PATCH', ACBS(ops, name), { spec: { apiExports: [PG, WIDGETS] } }, 'application/merge-patch+json');
    await eventually('the ServiceBinding binding gone', async () =>
      (await getObject(ka, `${BIND}/namespaces/${root}/apiservicebindings/${SB_API}`)) ? undefined : true,
    );
    await eventually('its CRD gone from the app cluster', async () => ((await getObject(kb, crdPath(SB_API))) ? undefined : true));
    const clusterNs = await clusterNamespaceOf(ops, name);
    await eventually('its export gone', async () =>
      (await getObject(ka, `${BIND}/namespaces/${clusterNs}/apiserviceexports/${SB_API}`)) ? undefined : true,
    );
    expect(await getObject(ka, `${BIND}/namespaces/${clusterNs}/apiserviceexports/${PG_API}`)).toBeDefined();
    expect(before.metadata.uid).toBe((await requireOk(ka, 'GET', ACBS(ops, name))).metadata.uid);
  }, 120_000);

  it("follows a rotated app cluster kubeconfig: the root namespace's copy is updated, the konnector restarts its sync with it", async () => {
    const rotated = await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector'); // a new token
    await putSecret(ops, 'app-kubeconfig', rotated);
    await eventually('the copy in the root namespace updated', async () => {
      const copy = await getObject(ka, `/api/v1/namespaces/${root}/secrets/app-cluster-kubeconfig`);
      return copy && Buffer.from(copy.data.kubeconfig as string, 'base64').toString() === rotated ? true : undefined;
    });
    await eventually('the konnector restarted its sync', async () =>
      readFileSync(konnector.logPath, 'utf8').includes("the app cluster's kubeconfig changed: restarting the sync with it")
        ? true
        : undefined,
    );
    // Still syncing, with the new credentials: a second claim goes up.
    const clusterNs = await clusterNamespaceOf(ops, name);
    const pns = (await requireOk(ka, 'GET', `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`)).status.namespace as string;
    const first = await requireOk(kb, 'GET', pgPath(app, 'first'));
    await requireOk(kb, 'POST', pgPath(app), { ...first, metadata: { name: 'second', namespace: app }, status: undefined });
    await eventually('the second claim upstream', () => getObject(ka, pgPath(pns, 'second')));
    await boundAgain('after the restart');
  }, 90_000);

  /** The konnector's first event `reason` on the claim `claim` in the app cluster, waited for. */
  const warningOn = (claim: string, reason: string) =>
    eventually(`the ${reason} event on ${claim} in the app cluster`, async () => {
      const selector = encodeURIComponent(`involvedObject.name=${claim},reason=${reason}`);
      return ((await requireOk(kb, 'GET', `/api/v1/namespaces/${app}/events?fieldSelector=${selector}`)).items as O[])[0];
    });

  it('refuses a claim beyond the provider namespace quota (--claim-quota) and names the refusal on the claim in the app cluster', async () => {
    const clusterNs = await clusterNamespaceOf(ops, name);
    const pns = (await requireOk(ka, 'GET', `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`)).status.namespace as string;
    expect((await requireOk(ka, 'GET', `/api/v1/namespaces/${pns}/resourcequotas/klutch-claims`)).spec.hard).toEqual({
      [`count/${PG_API}`]: '2',
    });
    const first = await requireOk(kb, 'GET', pgPath(app, 'first'));
    await requireOk(kb, 'POST', pgPath(app), { ...first, metadata: { name: 'third', namespace: app }, status: undefined });
    const event = await warningOn('third', 'QuotaExceeded');
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(`the provider refused PostgresqlInstance ${app}/third`);
    expect(event.message).toContain('exceeded quota: klutch-claims');
    expect(await getObject(ka, pgPath(pns, 'third'))).toBeUndefined();
    // Its deletion goes through: nothing of it exists upstream.
    await requireOk(kb, 'DELETE', pgPath(app, 'third'));
    await eventually('the refused claim gone', async () => ((await getObject(kb, pgPath(app, 'third'))) ? undefined : true));
    expect(await getObject(ka, pgPath(pns, 'second'))).toBeDefined();
  });

  it("refuses a claim that picks its Composition by labels (Crossplane's field: the shipped admission policy) and names the refusal on the claim in the app cluster", async () => {
    const clusterNs = await clusterNamespaceOf(ops, name);
    const pns = (await requireOk(ka, 'GET', `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`)).status.namespace as string;
    const first = await requireOk(kb, 'GET', pgPath(app, 'first'));
    // Valid in the app cluster (its CRD is the claim's), as Klutch's control plane would take it.
    const spec = {
      ...first.spec,
      compositionSelector: { matchLabels: { 'klutch.anynines.com/backend': 'cnpg' } },
    };
    await requireOk(kb, 'POST', pgPath(app), { ...first, metadata: { name: 'picky', namespace: app }, spec, status: undefined });
    const event = await warningOn('picky', 'UpstreamRefused');
    expect(event.type).toBe('Warning');
    expect(event.message).toContain(`the provider refused PostgresqlInstance ${app}/picky`);
    expect(event.message).toContain('may not set or change spec.compositionSelector');
    expect(await getObject(ka, pgPath(pns, 'picky'))).toBeUndefined();
    await requireOk(kb, 'DELETE', pgPath(app, 'picky'));
    await eventually('the refused claim gone', async () => ((await getObject(kb, pgPath(app, 'picky'))) ? undefined : true));
  });

  it("attack: an AppClusterBinding whose Klutch root namespace collides with this one's, created and deleted, touches nothing of it", async () => {
    // Another team: `<id>` in `<ops>-app` makes Klutch's klutch-bind-<ops>-app-<id>, this binding's Klutch name.
    const attacker = id;
    expect(klutchRootNamespace({ metadata: { namespace: rival, name: attacker } })).toBe(
      klutchRootNamespace({ metadata: { namespace: ops, name } }),
    );
    const clusterNs = await clusterNamespaceOf(ops, name);
    const pns = (await requireOk(ka, 'GET', `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`)).status.namespace as string;
    /** What of the victim's root namespace, bindings and claims must not change. */
    const victim = async () => {
      const get = (path: string) => getObject(ka, path);
      const ns = await get(`/api/v1/namespaces/${root}`);
      const binding = await get(`${BIND}/namespaces/${root}/apiservicebindings/${PG_API}`);
      const deployment = await get(`/apis/apps/v1/namespaces/${root}/deployments/konnector-${name}`);
      return {
        namespace: ns && { uid: ns.metadata.uid, labels: ns.metadata.labels, deleting: Boolean(ns.metadata.deletionTimestamp) },
        secrets: await Promise.all(
          ['app-cluster-kubeconfig', 'kubeconfig'].map(async (n) => (await get(`/api/v1/namespaces/${root}/secrets/${n}`))?.data),
        ),
        binding: binding && {
          uid: binding.metadata.uid,
          labels: binding.metadata.labels,
          spec: binding.spec,
          deleting: Boolean(binding.metadata.deletionTimestamp),
        },
        deployment: deployment && { uid: deployment.metadata.uid, labels: deployment.metadata.labels },
        claims: await Promise.all(
          [
            getObject(kb, pgPath(app, 'first')),
            getObject(kb, pgPath(app, 'second')),
            get(pgPath(pns, 'first')),
            get(pgPath(pns, 'second')),
          ].map(async (c) => (await c)?.metadata.uid as string | undefined),
        ),
      };
    };
    const before = await victim();
    expect(before.claims.every(Boolean), 'the claims exist before').toBe(true);
    expect(before.binding?.deleting).toBe(false);

    await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name: rival } });
    await putSecret(rival, 'app-kubeconfig', await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector'));
    const theirs = acb(attacker, 'app-kubeconfig', [PG]);
    await requireOk(ka, 'POST', ACBS(rival), {
      ...theirs,
      metadata: { name: attacker, namespace: rival },
      spec: { ...theirs.spec, kubeconfigSecretRef: { namespace: rival, name: 'app-kubeconfig', key: 'kubeconfig' } },
    });
    const provisioned = await eventually(
      "the attacker's konnector Deployment written",
      async () => {
        const o = await getObject(ka, ACBS(rival, attacker));
        return condition(o, 'KonnectorDeployed')?.status === 'True' ? o : undefined;
      },
      60_000,
    ).catch(async (e: Error) => {
      throw new Error(`${e.message}\nits status: ${JSON.stringify((await getObject(ka, ACBS(rival, attacker)))?.status)}`);
    });
    // Soft: with the boundary removed, what the deletion does below is the worse half of the story.
    expect.soft(await victim(), "the victim's objects while the attacker exists").toEqual(before);

    await requireOk(ka, 'DELETE', ACBS(rival, attacker));
    await eventually('the attacker gone', async () => ((await getObject(ka, ACBS(rival, attacker))) ? undefined : true), 60_000);
    expect(await victim(), "the victim's objects after the attacker was deleted").toEqual(before);
    // It had a root namespace of its own.
    expect(provisioned.status.rootNamespace).toBe(rootOf(rival, attacker));
    expect(provisioned.status.rootNamespace).not.toBe(root);
    await boundAgain('after a colliding AppClusterBinding came and went');
    await ka.request('DELETE', `/api/v1/namespaces/${rival}`);
  }, 120_000);

  it("attack: konnector overrides outside the operator's allowlist (another image, a command, resources above the ceiling) are refused with a condition; no Deployment runs them", async () => {
    const evil = `evil-${id}`;
    const evilRoot = rootOf(ops, evil);
    const deploymentPath = `/apis/apps/v1/namespaces/${evilRoot}/deployments/konnector-${evil}`;
    const konnectorCondition = async (want: (c: O) => boolean) =>
      (await eventually('KonnectorDeployed judged', async () => {
        const c = condition(await getObject(ka, ACBS(ops, evil)), 'KonnectorDeployed');
        return c && want(c) ? c : undefined;
      })) as O;
    const withOverrides = (overrides: O) => ({
      ...acb(evil, 'app-kubeconfig', [WIDGETS]),
      spec: { ...acb(evil, 'app-kubeconfig', [WIDGETS]).spec, konnector: { deploy: true, overrides } },
    });

    // An image of the attacker's choosing.
    await requireOk(ka, 'POST', ACBS(ops), withOverrides({ image: 'evil.example.com/konnector:v1' }));
    const image = await konnectorCondition((c) => c.status !== 'Unknown');
    expect(image.reason).toBe('OverridesRefused');
    expect(image.message).toContain(
      'spec.konnector.overrides.image "evil.example.com/konnector:v1" is not an image the platform operator allows',
    );
    expect(image.message).toContain('--konnector-allowed-images');
    expect(await getObject(ka, deploymentPath)).toBeUndefined();

    // Allowed tuning deploys; then a command is refused, and the Deployment that ran goes.
    await requireOk(
      ka,
      'PATCH',
      ACBS(ops, evil),
      { spec: { konnector: { overrides: { image: null, args: ['--workers=2'] } } } },
      'application/merge-patch+json',
    );
    await konnectorCondition((c) => c.status === 'True');
    const tuned = await requireOk(ka, 'GET', deploymentPath);
    expect(tuned.spec.template.spec.containers[0].args).toContain('--workers=2');
    await requireOk(
      ka,
      'PATCH',
      ACBS(ops, evil),
      { spec: { konnector: { overrides: { command: ['/bin/sh', '-c', 'cat /var/run/secrets/kubernetes.io/serviceaccount/token'] } } } },
      'application/merge-patch+json',
    );
    const command = await konnectorCondition((c) => c.status === 'False');
    expect(command.reason).toBe('OverridesRefused');
    expect(command.message).toContain('spec.konnector.overrides.command may not be set');
    await eventually('the Deployment gone', async () => ((await getObject(ka, deploymentPath)) ? undefined : true));

    // More of the control plane's nodes than the operator lets one team's konnector have: refused, nothing runs.
    await requireOk(
      ka,
      'PATCH',
      ACBS(ops, evil),
      { spec: { konnector: { overrides: { command: null, resources: { requests: { memory: '64Gi' }, limits: { memory: '64Gi' } } } } } },
      'application/merge-patch+json',
    );
    const greedy = await konnectorCondition((c) => c.status === 'False' && !String(c.message).includes('command'));
    expect(greedy.reason).toBe('OverridesRefused');
    expect(greedy.message).toContain(
      `spec.konnector.overrides.resources.limits.memory "64Gi" is more than the platform operator lets a konnector have (1Gi, the backend's --konnector-max-resources)`,
    );
    expect(await getObject(ka, deploymentPath)).toBeUndefined();
    await requireOk(ka, 'DELETE', ACBS(ops, evil));
    await eventually('it is gone', async () => ((await getObject(ka, ACBS(ops, evil))) ? undefined : true), 60_000);
  }, 120_000);

  it("attack: one team's AppClusterBindings beyond --max-app-cluster-bindings wait, with nothing made for them, until an older one goes", async () => {
    const crowded = `crowded-${id}`;
    await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name: crowded } });
    // Each names a Secret that does not exist: admitted ones stop there (SecretValid), cheaply. Made one after the
    // other, so by creation time (a second's resolution) and then by name, c0 is the oldest and c6 the youngest.
    const names = Array.from({ length: ACB_LIMIT + 1 }, (_, i) => `c${i}`);
    for (const n of names) {
      const o = acb(n, 'absent-kubeconfig', [PG]);
      await requireOk(ka, 'POST', ACBS(crowded), {
        ...o,
        metadata: { name: n, namespace: crowded },
        spec: { ...o.spec, kubeconfigSecretRef: { namespace: crowded, name: 'absent-kubeconfig', key: 'kubeconfig' } },
      });
    }
    const last = names[ACB_LIMIT]!;
    const judged = async (n: string, type: string) =>
      (await eventually(`${n} judged`, async () =>
        condition(await getObject(ka, ACBS(crowded, n)), type)?.status === 'False' ? await getObject(ka, ACBS(crowded, n)) : undefined,
      )) as O;
    const waiting = await judged(last, 'WithinLimit');
    expect(condition(waiting, 'WithinLimit')).toMatchObject({ reason: 'TooManyAppClusterBindings' });
    expect(condition(waiting, 'WithinLimit')!.message).toContain(
      `namespace ${crowded} has ${ACB_LIMIT} older AppClusterBindings and the platform operator allows ${ACB_LIMIT}`,
    );
    expect(condition(waiting, 'Ready')).toMatchObject({ status: 'False', reason: 'TooManyAppClusterBindings' });
    expect(waiting.status.rootNamespace).toBeUndefined();
    // Every older one was let through (and stopped at its missing Secret).
    for (const n of names.slice(0, ACB_LIMIT)) expect(condition(await judged(n, 'SecretValid'), 'WithinLimit')).toBeUndefined();
    // The oldest goes: the youngest is let through.
    await requireOk(ka, 'DELETE', ACBS(crowded, names[0]!));
    const through = await judged(last, 'SecretValid');
    expect(condition(through, 'SecretValid')).toMatchObject({ reason: 'SecretNotFound' });
    expect(condition(through, 'WithinLimit')).toBeUndefined();
    for (const n of names.slice(1)) await requireOk(ka, 'DELETE', ACBS(crowded, n));
    await requireOk(ka, 'DELETE', `/api/v1/namespaces/${crowded}`);
  }, 120_000);

  it('reports an unreachable app cluster and retries it, and the other AppClusterBindings stay bound', async () => {
    const port = deadPort; // nothing listens there
    await putSecret(ops, 'gone-kubeconfig', bearerKubeconfigYaml('gone', `https://127.0.0.1:${port}`, b.ca, 'someone', 'token'));
    const gone = `gone-${id}`;
    await requireOk(ka, 'POST', ACBS(ops), acb(gone, 'gone-kubeconfig', [PG]));
    const o = await eventually('Unreachable reported', async () => {
      const x = await getObject(ka, ACBS(ops, gone));
      return condition(x, 'AppClusterAccess')?.reason === 'Unreachable' ? x : undefined;
    });
    expect(condition(o, 'AppClusterAccess')?.message).toContain(`cannot reach the app cluster https://127.0.0.1:${port}`);
    expect(condition(o, 'AppClusterAccess')?.message).toContain('retrying with backoff');
    expect(condition(o, 'Ready')?.status).toBe('False');
    expect(await getObject(ka, `/api/v1/namespaces/${rootOf(ops, gone)}`)).toBeUndefined();
    await boundAgain('while another is unreachable');
    await requireOk(ka, 'DELETE', ACBS(ops, gone));
    await eventually('the unreachable one deleted', async () => ((await getObject(ka, ACBS(ops, gone))) ? undefined : true));
  }, 60_000);

  it('refuses a kubeconfig with too little, naming what is missing, and deploys nothing for it', async () => {
    await requireOk(kb, 'POST', `/api/v1/namespaces/${app}/serviceaccounts`, { metadata: { name: 'weak' } });
    await putSecret(ops, 'weak-kubeconfig', await saKubeconfig(kb, b, app, 'weak'));
    const weak = `weak-${id}`;
    await requireOk(ka, 'POST', ACBS(ops), acb(weak, 'weak-kubeconfig', [PG]));
    const o = await eventually('AppClusterAccess refused', async () => {
      const x = await getObject(ka, ACBS(ops, weak));
      return condition(x, 'AppClusterAccess')?.status === 'False' ? x : undefined;
    });
    const c = condition(o, 'AppClusterAccess') as O;
    expect(c.reason).toBe('Forbidden');
    expect(c.message).toContain('may not get namespaces, list namespaces, watch namespaces');
    expect(c.message).toContain('create customresourcedefinitions.apiextensions.k8s.io');
    expect(c.message).toContain(
      `bind its user there to ClusterRole klutch-control-plane-konnector (${releaseDoc('docs/app-cluster-binding.md')})`,
    );
    expect(condition(o, 'Ready')?.status).toBe('False');
    expect(await getObject(ka, `/api/v1/namespaces/${rootOf(ops, weak)}`)).toBeUndefined();
    await requireOk(ka, 'DELETE', ACBS(ops, weak));
    await eventually('the refused AppClusterBinding gone', async () => ((await getObject(ka, ACBS(ops, weak))) ? undefined : true));
  }, 90_000);

  it('deleting it strands nothing: the claim goes in both clusters, then the CRD, the konnector, the consumer and the root namespace', async () => {
    const clusterNs = await clusterNamespaceOf(ops, name);
    const pns = (await requireOk(ka, 'GET', `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`)).status.namespace as string;
    expect(await getObject(ka, pgPath(pns, 'first'))).toBeDefined();
    await requireOk(ka, 'DELETE', ACBS(ops, name));
    await eventually('the AppClusterBinding gone', async () => ((await getObject(ka, ACBS(ops, name))) ? undefined : true), 90_000);
    expect(await getObject(kb, pgPath(app, 'first'))).toBeUndefined();
    expect(await getObject(ka, pgPath(pns, 'first'))).toBeUndefined();
    expect(await getObject(kb, crdPath(PG_API))).toBeUndefined();
    expect(await getObject(ka, `/apis/apps/v1/namespaces/${root}/deployments/konnector-${name}`)).toBeUndefined();
    for (const ns of [root, clusterNs]) {
      const n = await getObject(ka, `/api/v1/namespaces/${ns}`);
      expect(n === undefined || Boolean(n.metadata.deletionTimestamp), ns).toBe(true);
    }
  }, 120_000);

  it('refuses a kubeconfig Secret of another namespace, one not of type Opaque, and a kubeconfig that would run a program: nothing copied, nothing run', async () => {
    // Whoever may create AppClusterBindings in `ops` must not make the backend use a Secret elsewhere.
    const other = `acbo-${id}`;
    await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name: other } });
    await putSecret(other, 'theirs', await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector'));
    const stolen = `stolen-${id}`;
    await requireOk(ka, 'POST', ACBS(ops), {
      ...acb(stolen, 'theirs', [PG]),
      spec: { kubeconfigSecretRef: { namespace: other, name: 'theirs', key: 'kubeconfig' }, apiExports: [PG], konnector: { deploy: true } },
    });
    const refused = await eventually('SecretValid refused', async () => {
      const x = await getObject(ka, ACBS(ops, stolen));
      return condition(x, 'SecretValid')?.status === 'False' ? x : undefined;
    });
    expect(condition(refused, 'SecretValid')).toMatchObject({ reason: 'SecretNamespaceForbidden' });
    expect(condition(refused, 'SecretValid')?.message).toContain(`move the Secret into ${ops}`);
    // And a Warning Event beside it, which `kubectl describe appclusterbinding` shows.
    const warned = await eventually('a Warning Event on it', async () => {
      const list = await ka.request('GET', `/api/v1/namespaces/${ops}/events?fieldSelector=involvedObject.name=${stolen}`);
      return (list.body.items as O[]).find((e) => e.reason === 'SecretNamespaceForbidden');
    });
    expect(warned).toMatchObject({
      type: 'Warning',
      source: { component: 'klutch-bind-backend' },
      involvedObject: { kind: 'AppClusterBinding', namespace: ops, uid: refused!.metadata.uid },
    });
    expect(warned!.message).toContain(`move the Secret into ${ops}`);
    expect(await getObject(ka, `/api/v1/namespaces/${rootOf(ops, stolen)}`)).toBeUndefined();

    // An exec plugin would run in the backend's (and the konnector's) Pod on the control plane: refused, never run.
    const marker = join(logDir, `exec-ran-${id}`);
    const doc = parse(bearerKubeconfigYaml('app', b.server, b.ca, 'op', 'unused')) as O;
    doc.users[0].user = { exec: { apiVersion: 'client.authentication.k8s.io/v1', command: '/bin/sh', args: ['-c', `touch ${marker}`] } };
    const exec = stringify(doc);
    expect(exec).toContain('exec:');
    await putSecret(ops, 'exec-kubeconfig', exec);
    const runs = `exec-${id}`;
    await requireOk(ka, 'POST', ACBS(ops), acb(runs, 'exec-kubeconfig', [PG]));
    const unsafe = await eventually('SecretValid refused', async () => {
      const x = await getObject(ka, ACBS(ops, runs));
      return condition(x, 'SecretValid')?.status === 'False' ? x : undefined;
    });
    expect(condition(unsafe, 'SecretValid')).toMatchObject({ reason: 'KubeconfigUnsafe' });
    expect(condition(unsafe, 'SecretValid')?.message).toContain('exec runs a program on the control plane');
    expect(existsSync(marker)).toBe(false);

    // A Secret not made for it, though kubeconfig-shaped (issue 34, item 10): a token Secret of the namespace with a
    // working kubeconfig beside the token the token controller fills in. Only Opaque Secrets are read as kubeconfigs.
    await requireOk(ka, 'POST', `/api/v1/namespaces/${ops}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'token-kubeconfig', namespace: ops, annotations: { 'kubernetes.io/service-account.name': 'default' } },
      type: 'kubernetes.io/service-account-token',
      data: { kubeconfig: Buffer.from(await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector')).toString('base64') },
    });
    const typed = `typed-${id}`;
    await requireOk(ka, 'POST', ACBS(ops), acb(typed, 'token-kubeconfig', [PG]));
    const notOpaque = await eventually('SecretValid judged', async () => {
      const x = await getObject(ka, ACBS(ops, typed));
      return condition(x, 'SecretValid') ? x : undefined;
    });
    expect(condition(notOpaque, 'SecretValid')).toMatchObject({ status: 'False', reason: 'SecretTypeNotOpaque' });
    expect(condition(notOpaque, 'SecretValid')?.message).toContain(
      `Secret ${ops}/token-kubeconfig (spec.kubeconfigSecretRef.name "token-kubeconfig") is of type kubernetes.io/service-account-token`,
    );
    expect(await getObject(ka, `/api/v1/namespaces/${rootOf(ops, typed)}`)).toBeUndefined();
    for (const n of [stolen, runs, typed]) await requireOk(ka, 'DELETE', ACBS(ops, n));
    await ka.request('DELETE', `/api/v1/namespaces/${ops}/secrets/token-kubeconfig`);
    await ka.request('DELETE', `/api/v1/namespaces/${other}`);
  }, 60_000);

  it("accepts Klutch's AppClusterBinding example from its manifests' README as written, and says so when its kubeconfig is cluster-admin", async () => {
    const readme = readFileSync(join(ROOT, 'test', 'fixtures', 'klutch-bind-deploy', 'example-backend', 'README.md'), 'utf8');
    const example = parse(/## AppClusterBinding Integration[\s\S]*?```yaml\n([\s\S]*?)```/.exec(readme)![1]!) as O;
    expect(example.kind).toBe('AppClusterBinding');
    await requireOk(ka, 'POST', ACBS('default'), example);
    const missing = await eventually('SecretValid reported', async () => {
      const o = await getObject(ka, ACBS('default', 'my-app-cluster'));
      return condition(o, 'SecretValid') ? o : undefined;
    });
    expect(condition(missing, 'SecretValid')).toMatchObject({ status: 'False', reason: 'SecretNotFound' });
    await putSecret('default', 'app-cluster-kubeconfig', await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector'));
    const o = await eventually('its APIs judged', async () => {
      const x = await getObject(ka, ACBS('default', 'my-app-cluster'));
      return condition(x, 'postgresqls.database.example.com') ? x : undefined;
    });
    expect(condition(o, 'SecretValid')?.status).toBe('True');
    expect(condition(o, 'postgresqls.database.example.com')).toMatchObject({ status: 'False', reason: 'NotExported' });
    expect(condition(o, 'redisinstances.cache.example.com')).toMatchObject({ status: 'False', reason: 'NotExported' });
    // Its name has dashes, so its root namespace is the hashed one (Klutch's could be another's); its image is Klutch's
    // konnector, which this backend's operator allows (--konnector-allowed-images).
    expect(o.status.rootNamespace).toBe(rootOf('default', 'my-app-cluster'));
    const dep = await eventually('its konnector Deployment', () =>
      getObject(ka, `/apis/apps/v1/namespaces/${rootOf('default', 'my-app-cluster')}/deployments/konnector-my-app-cluster`),
    );
    expect(dep.spec.template.spec.containers[0].image).toBe('public.ecr.aws/w5n9a2g2/klutch/konnector:v1.4.0');
    // Klutch's README hands over the app cluster's admin kubeconfig: taken, but said, since the control plane now
    // stores a credential that may do everything in the app cluster (issue 34, item 10).
    await applyAt(kb, '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/klutch-example-admin', {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'ClusterRoleBinding',
      metadata: { name: 'klutch-example-admin' },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', namespace: 'klutch-control-plane', name: 'klutch-example-admin' }],
    });
    await applyAt(kb, '/api/v1/namespaces/klutch-control-plane/serviceaccounts/klutch-example-admin', {
      apiVersion: 'v1',
      kind: 'ServiceAccount',
      metadata: { name: 'klutch-example-admin', namespace: 'klutch-control-plane' },
    });
    await putSecret('default', 'app-cluster-kubeconfig', await saKubeconfig(kb, b, 'klutch-control-plane', 'klutch-example-admin'));
    const admin = await eventually('the admin kubeconfig judged', async () => {
      const x = await getObject(ka, ACBS('default', 'my-app-cluster'));
      return condition(x, 'AppClusterAccess')?.reason === 'ClusterAdmin' ? x : undefined;
    });
    expect(condition(admin, 'AppClusterAccess')).toMatchObject({ status: 'True' });
    expect(condition(admin, 'AppClusterAccess')?.message).toContain(
      'the kubeconfig in Secret default/app-cluster-kubeconfig may do everything in the app cluster; it is stored on the control plane',
    );
    await kb.request('DELETE', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/klutch-example-admin');
    await kb.request('DELETE', '/api/v1/namespaces/klutch-control-plane/serviceaccounts/klutch-example-admin');
    await requireOk(ka, 'DELETE', ACBS('default', 'my-app-cluster'));
    await eventually('it is gone', async () => ((await getObject(ka, ACBS('default', 'my-app-cluster'))) ? undefined : true));
    await ka.request('DELETE', '/api/v1/namespaces/default/secrets/app-cluster-kubeconfig');
  }, 90_000);

  it("holds the backend's Deployments, Leases and NetworkPolicies to binding root namespaces, its events to its namespaces (its admission policies): no Pod as another ServiceAccount", async () => {
    const asBackend = await backendKube();
    const deployment = (namespace: string, serviceAccountName: string) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: { name: `attack-${id}`, namespace },
      spec: {
        selector: { matchLabels: { app: 'x' } },
        template: { metadata: { labels: { app: 'x' } }, spec: { serviceAccountName, containers: [{ name: 'x', image: 'x' }] } },
      },
    });
    const lease = (namespace: string) => ({
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      metadata: { name: `attack-${id}`, namespace },
    });
    const networkPolicy = (namespace: string) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'NetworkPolicy',
      metadata: { name: `attack-${id}`, namespace },
      spec: { podSelector: {}, policyTypes: ['Ingress'], ingress: [{}] },
    });
    const event = (namespace: string) => ({
      apiVersion: 'v1',
      kind: 'Event',
      metadata: { name: `attack-${id}`, namespace },
      involvedObject: { kind: 'Pod', name: 'x', namespace },
      reason: 'Forged',
      message: 'a warning the backend never meant',
      type: 'Warning',
    });
    const root = `klutch-bind-${ops}-attack`;
    // A consumer's cluster namespace, as the backend makes them (`<--namespace-prefix>-…`, not a root namespace).
    const consumerNs = `cluster-${ops}-attack`;
    for (const name of [root, consumerNs])
      await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name, labels: { [Labels.managedBy]: MANAGED_BY } } });
    try {
      const attempts: [string, string, unknown][] = [
        ['a Deployment in kube-system', '/apis/apps/v1/namespaces/kube-system/deployments', deployment('kube-system', 'default')],
        // Its own namespace begins with klutch-bind- too.
        [
          "a Deployment in the backend's own namespace",
          `/apis/apps/v1/namespaces/${BACKEND_NS}/deployments`,
          deployment(BACKEND_NS, 'klutch-binder'),
        ],
        [
          'a Deployment in a root namespace as another ServiceAccount',
          `/apis/apps/v1/namespaces/${root}/deployments`,
          deployment(root, 'default'),
        ],
        ['a Lease in kube-system', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', lease('kube-system')],
        // Warnings forged into another team's namespace.
        ['an Event in kube-system', '/api/v1/namespaces/kube-system/events', event('kube-system')],
        // Where AppClusterBindings are, only Events about one of them, beside it.
        ["an Event about a Pod of a team's namespace", `/api/v1/namespaces/${ops}/events`, event(ops)],
        // Another namespace's traffic opened (an allow-all policy beside its default-deny).
        [
          'a NetworkPolicy in kube-system',
          '/apis/networking.k8s.io/v1/namespaces/kube-system/networkpolicies',
          networkPolicy('kube-system'),
        ],
      ];
      // The API server loads a new policy within a second or so: wait until the first refusal, then all must be refused.
      await eventually('the admission policy in force', async () => {
        const r = await asBackend.request('POST', `${attempts[0]![1]}?dryRun=All`, attempts[0]![2]);
        return r.code === 403 ? true : undefined;
      });
      for (const [what, path, body] of attempts) {
        const r = await asBackend.request('POST', `${path}?dryRun=All`, body);
        expect(r.code, what).toBe(403);
        expect(String(r.body.message), what).toMatch(/the bind backend (writes|runs)/);
      }
      // What the controller does is still allowed: a konnector Deployment as klutch-binder in a root namespace, a Lease there.
      expect(
        (await asBackend.request('POST', `/apis/apps/v1/namespaces/${root}/deployments?dryRun=All`, deployment(root, 'klutch-binder')))
          .code,
      ).toBe(201);
      expect((await asBackend.request('POST', `/apis/coordination.k8s.io/v1/namespaces/${root}/leases?dryRun=All`, lease(root))).code).toBe(
        201,
      );
      expect(
        (await asBackend.request('POST', `/apis/networking.k8s.io/v1/namespaces/${root}/networkpolicies?dryRun=All`, networkPolicy(root)))
          .code,
      ).toBe(201);
      // Its Warning Events, in a namespace it made (a consumer's) and in its own, and about an AppClusterBinding beside it.
      for (const ns of [consumerNs, root, BACKEND_NS]) {
        const r = await asBackend.request('POST', `/api/v1/namespaces/${ns}/events?dryRun=All`, event(ns));
        expect(r.code, `an Event in ${ns}: ${String(r.body.message)}`).toBe(201);
      }
      const onAcb = {
        ...event(ops),
        involvedObject: { apiVersion: BIND_API_VERSION, kind: 'AppClusterBinding', name: 'x', namespace: ops },
      };
      const r = await asBackend.request('POST', `/api/v1/namespaces/${ops}/events?dryRun=All`, onAcb);
      expect(r.code, `an Event about an AppClusterBinding in ${ops}: ${String(r.body.message)}`).toBe(201);
      // One about another namespace's AppClusterBinding: the API server's own validation refuses it before the policy.
      const elsewhere = { ...onAcb, involvedObject: { ...onAcb.involvedObject, namespace: 'kube-system' } };
      expect((await asBackend.request('POST', `/api/v1/namespaces/${ops}/events?dryRun=All`, elsewhere)).code).toBe(422);
    } finally {
      await ka.request('DELETE', `/api/v1/namespaces/${consumerNs}`);
      await ka.request('DELETE', `/api/v1/namespaces/${root}`);
    }
  });

  it("bounds every write of the backend to namespaces it made or adopted (its containment policy): no token of kube-system, no Pod Security label loosened, no ClusterRole or binding beyond its consumers'", async () => {
    const asBackend = await backendKube();
    // Someone else's namespace, and one as the backend makes them (its label), each with a ServiceAccount.
    const victim = `acbv-${id}`;
    const mine = `acbm-${id}`;
    const psa = 'pod-security.kubernetes.io/enforce';
    await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name: victim, labels: { [psa]: 'restricted' } } });
    await requireOk(ka, 'POST', '/api/v1/namespaces', {
      metadata: { name: mine, labels: { [Labels.managedBy]: MANAGED_BY, [psa]: 'baseline' } },
    });
    await requireOk(ka, 'POST', `/api/v1/namespaces/${mine}/serviceaccounts`, { metadata: { name: 'klutch-binder' } });
    await requireOk(ka, 'POST', `/api/v1/namespaces/${mine}/serviceaccounts`, { metadata: { name: 'other' } });
    const tokenRequest = { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } };
    const secret = (namespace: string) => ({ metadata: { name: `attack-${id}`, namespace }, stringData: { x: 'y' } });
    const patch = (labels: Record<string, string | null>) => ({ metadata: { labels } });
    try {
      const attempts: [string, string, string, unknown][] = [
        // A token of a kube-system controller is cluster-admin without any Pod.
        [
          "a token of kube-system's default ServiceAccount",
          'POST',
          '/api/v1/namespaces/kube-system/serviceaccounts/default/token',
          tokenRequest,
        ],
        [
          'a token of another ServiceAccount of its own namespace',
          'POST',
          `/api/v1/namespaces/${mine}/serviceaccounts/other/token`,
          tokenRequest,
        ],
        ['a Secret in kube-system', 'POST', '/api/v1/namespaces/kube-system/secrets?dryRun=All', secret('kube-system')],
        ["a Secret in the backend's own namespace", 'POST', `/api/v1/namespaces/${BACKEND_NS}/secrets?dryRun=All`, secret(BACKEND_NS)],
        [
          "a label on someone else's namespace",
          'PATCH',
          `/api/v1/namespaces/${victim}?dryRun=All`,
          patch({ [Labels.managedBy]: MANAGED_BY }),
        ],
        ["someone else's namespace deleted", 'DELETE', `/api/v1/namespaces/${victim}?dryRun=All`, undefined],
        ['a namespace without its label', 'POST', '/api/v1/namespaces?dryRun=All', { metadata: { name: `acbx-${id}` } }],
        ['Pod Security loosened on its own namespace', 'PATCH', `/api/v1/namespaces/${mine}?dryRun=All`, patch({ [psa]: 'privileged' })],
        ['Pod Security removed from its own namespace', 'PATCH', `/api/v1/namespaces/${mine}?dryRun=All`, patch({ [psa]: null })],
        // Its own ClusterRole bound to a ServiceAccount whose token it may request: every power of the backend under
        // another name, which this policy does not match (then a token of kube-system's, and cluster-admin).
        [
          'its own ClusterRole bound cluster-wide to klutch-binder',
          'POST',
          `${RBAC}/clusterrolebindings?dryRun=All`,
          clusterRoleBinding(`attack-${id}`, 'klutch-bind-backend', mine),
        ],
        [
          "its own ClusterRole bound under a consumer's binding name",
          'POST',
          `${RBAC}/clusterrolebindings?dryRun=All`,
          clusterRoleBinding(`klutch-binder-${mine}:list-watch`, 'klutch-bind-backend', mine),
        ],
        // A ClusterRole bound cluster-wide that reads Secrets: every legacy token of the cluster.
        [
          'a cluster-wide-bound ClusterRole that reads Secrets',
          'POST',
          `${RBAC}/clusterroles?dryRun=All`,
          clusterRole(`klutch-binder-${mine}:list-watch`, [{ apiGroups: [''], resources: ['secrets'], verbs: ['list', 'watch'] }]),
        ],
        // Aggregated into view: every holder of view, in every namespace it is bound in, gains it.
        [
          'a ClusterRole aggregated into view',
          'POST',
          `${RBAC}/clusterroles?dryRun=All`,
          clusterRole(`klutch-binder-${mine}`, [{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }], {
            'rbac.authorization.k8s.io/aggregate-to-view': 'true',
          }),
        ],
        ['a ClusterRole not of its names', 'POST', `${RBAC}/clusterroles?dryRun=All`, clusterRole(`attack-${id}`, [])],
        [
          "someone else's ClusterRoleBinding deleted",
          'DELETE',
          `${RBAC}/clusterrolebindings/system:public-info-viewer?dryRun=All`,
          undefined,
        ],
        // In a namespace of its own: a role that runs workloads, or its own ClusterRole, for klutch-binder, whose token
        // it may mint: Pods outside the root-namespace policy, which matches only the backend's name.
        [
          'a Role that creates Deployments',
          'POST',
          `${RBAC}/namespaces/${mine}/roles?dryRun=All`,
          role(mine, 'klutch-binder', [{ apiGroups: ['apps'], resources: ['deployments'], verbs: ['create'] }]),
        ],
        [
          "a Role that opens a root namespace's NetworkPolicies",
          'POST',
          `${RBAC}/namespaces/${mine}/roles?dryRun=All`,
          role(mine, 'klutch-binder', [{ apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['create'] }]),
        ],
        [
          "a consumer's ClusterRole that mints tokens",
          'POST',
          `${RBAC}/clusterroles?dryRun=All`,
          clusterRole(`klutch-binder-${mine}`, [{ apiGroups: [''], resources: ['serviceaccounts/token'], verbs: ['create'] }]),
        ],
        [
          'its own ClusterRole bound in its namespace',
          'POST',
          `${RBAC}/namespaces/${mine}/rolebindings?dryRun=All`,
          roleBinding(mine, { kind: 'ClusterRole', name: 'klutch-bind-backend' }),
        ],
      ];
      // The API server loads a new policy within a second or so: wait until the first refusal, then all must be refused.
      await eventually('the containment policy in force', async () => {
        const [, verb, path, body] = attempts[2]!;
        return (await asBackend.request(verb, path, body, contentType(verb))).code === 403 ? true : undefined;
      });
      for (const [what, verb, path, body] of attempts) {
        const r = await asBackend.request(verb, path, body, contentType(verb));
        expect(r.code, `${what}: ${JSON.stringify(r.body)}`).toBe(403);
        expect(String(r.body.message), what).toMatch(/the bind backend (writes|requests tokens|creates|never|binds|deletes)/);
      }
      // What provisioning does is still allowed there: a Secret, klutch-binder's token, Pod Security made restricted.
      const allowed: [string, string, string, unknown][] = [
        ['a Secret in its namespace', 'POST', `/api/v1/namespaces/${mine}/secrets?dryRun=All`, secret(mine)],
        ["klutch-binder's token", 'POST', `/api/v1/namespaces/${mine}/serviceaccounts/klutch-binder/token`, tokenRequest],
        ['Pod Security made restricted', 'PATCH', `/api/v1/namespaces/${mine}?dryRun=All`, patch({ [psa]: 'restricted' })],
        [
          'a namespace with its label',
          'POST',
          '/api/v1/namespaces?dryRun=All',
          { metadata: { name: `acbx-${id}`, labels: { [Labels.managedBy]: MANAGED_BY } } },
        ],
        [
          "a consumer's list-watch ClusterRole of the exported claims",
          'POST',
          `${RBAC}/clusterroles?dryRun=All`,
          clusterRole(`klutch-binder-${mine}:list-watch`, [
            { apiGroups: ['anynines.com'], resources: ['postgresqlinstances'], verbs: ['list', 'watch'] },
          ]),
        ],
        [
          "a consumer's claimed Role: Secrets by name",
          'POST',
          `${RBAC}/namespaces/${mine}/roles?dryRun=All`,
          role(mine, 'klutch-binder-claimed', [{ apiGroups: [''], resources: ['secrets'], resourceNames: ['x-creds'], verbs: ['get'] }]),
        ],
        [
          "its consumers' ClusterRole klutch-binder bound in its namespace",
          'POST',
          `${RBAC}/namespaces/${mine}/rolebindings?dryRun=All`,
          roleBinding(mine, { kind: 'ClusterRole', name: 'klutch-binder' }),
        ],
        [
          "a consumer's ClusterRole, bound only in its namespaces",
          'POST',
          `${RBAC}/clusterroles?dryRun=All`,
          clusterRole(`klutch-binder-${mine}`, [
            { apiGroups: ['anynines.com'], resources: ['postgresqlinstances'], verbs: ['get', 'create', 'delete'] },
          ]),
        ],
      ];
      for (const [what, verb, path, body] of allowed) {
        const r = await asBackend.request(verb, path, body, contentType(verb));
        expect(r.code, `${what}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
      }
      expect((await getObject(ka, `/api/v1/namespaces/${victim}`))?.metadata?.labels?.[Labels.managedBy]).toBeUndefined();
    } finally {
      await ka.request('DELETE', `/api/v1/namespaces/${victim}`);
      await ka.request('DELETE', `/api/v1/namespaces/${mine}`);
    }
  });
});

const contentType = (verb: string) => (verb === 'PATCH' ? 'application/merge-patch+json' : undefined);

const RBAC = '/apis/rbac.authorization.k8s.io/v1';

function clusterRole(name: string, rules: unknown[], labels: Record<string, string> = {}): WireObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name, labels: { [Labels.managedBy]: MANAGED_BY, ...labels } },
    rules,
  };
}

function role(namespace: string, name: string, rules: unknown[]): WireObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name, namespace, labels: { [Labels.managedBy]: MANAGED_BY } },
    rules,
  };
}

function roleBinding(namespace: string, roleRef: { kind: string; name: string }): WireObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: `attack-${roleRef.name}`, namespace, labels: { [Labels.managedBy]: MANAGED_BY } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', ...roleRef },
    subjects: [{ kind: 'ServiceAccount', name: 'klutch-binder', namespace }],
  };
}

function clusterRoleBinding(name: string, role: string, namespace: string): WireObject {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: { [Labels.managedBy]: MANAGED_BY } },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: 'klutch-binder', namespace }],
  };
}

/** A client with a token of the backend's ServiceAccount, as its Pods have. */
async function backendKube(): Promise<Kube> {
  const token = (
    await requireOk(ka, 'POST', `/api/v1/namespaces/${BACKEND_NS}/serviceaccounts/klutch-bind-backend/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 600 },
    })
  ).status.token as string;
  return kubeFor(a, undefined, token);
}
