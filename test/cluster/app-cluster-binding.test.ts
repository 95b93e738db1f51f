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
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse, stringify } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exportTemplateManifest } from '../../exports/bind-api';
import { BindBackend } from '../../backend/deploy/bind-backend';
import { AppClusterRole } from '../../konnector/deploy/app-cluster-role';
import { PG, SB } from '../../harness/backend-suite';
import { installBindCrds, installClaimApi, launchBackendBundle, waitEstablished } from '../../harness/bind-backend';
import { ROOT } from '../../harness/catalog';
import { cluster, controlPlanes } from '../support/cluster';
import { kubeconfigYaml, type ClusterInfo } from '../../harness/control-plane';
import { applyConstruct, launchKonnectorBundle } from '../../harness/konnector';
import { applyAt, eventually, getObject, kubeFor, requireOk, type Kube, type WireObject } from '../../harness/kube';
import { removeLeftoverCrd } from '../support/bind-cleanup';
import { freePorts, probe, type Proc, waitReady } from '../../harness/processes';

type O = WireObject;
const id = randomBytes(3).toString('hex');
const BIND = '/apis/klutch.anynines.com/v1alpha1';
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

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let logDir: string;
let backend: Proc;
let probeUrl: string;
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
  return kubeconfigYaml(c.name, c.server, c.ca, `system:serviceaccount:${namespace}:${name}`, r.status.token as string);
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
    const binding = (await getObject(ka, `${BIND}/namespaces/klutch-bind-${ops}-${name}/apiservicebindings/${PG_API}`))?.status;
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
  const [port] = await freePorts(1);
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
    for (const ns of [ops, 'default']) {
      const list = ((await getObject(ka, ACBS(ns)))?.items ?? []) as O[];
      for (const o of list.filter((x) => ns === ops || x.metadata.name === 'my-app-cluster')) {
        await ka.request('PATCH', ACBS(ns, o.metadata.name), { metadata: { finalizers: null } }, 'application/merge-patch+json');
        await ka.request('DELETE', ACBS(ns, o.metadata.name));
      }
    }
  }
  await Promise.all(procs.map((p) => p.stop(10_000)));
  if (ka) for (const ns of [ops, templates]) await ka.request('DELETE', `/api/v1/namespaces/${ns}`);
  if (kb) await kb.request('DELETE', `/api/v1/namespaces/${app}`);
}, 120_000);

describe('AppClusterBinding', () => {
  const name = `app-${id}`;
  const root = `klutch-bind-${ops}-${name}`;

  it('binds an app cluster with the minimal kubeconfig: konnector on the control plane, claim up, status down; a forbidden API refused', async () => {
    await putSecret(ops, 'app-kubeconfig', await saKubeconfig(kb, b, 'klutch-control-plane', 'konnector'));
    await requireOk(ka, 'POST', ACBS(ops), acb(name, 'app-kubeconfig', [PG, SB, WIDGETS]));

    // Klutch's names: the root namespace, the Deployment with Klutch's arguments, the labelled bindings.
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
    const clusterNs = (
      await eventually('the consumer namespace', async () =>
        (((await requireOk(ka, 'GET', '/api/v1/namespaces')).items ?? []) as O[]).find((n) => n.metadata.name.startsWith(`${prefix}-`)),
      )
    ).metadata.name as string;
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
    const clusterNs = (
      (((await requireOk(ka, 'GET', '/api/v1/namespaces')).items ?? []) as O[]).find((n) => n.metadata.name.startsWith(`${prefix}-`)) as O
    ).metadata.name as string;
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
    const clusterNs = (
      (((await requireOk(ka, 'GET', '/api/v1/namespaces')).items ?? []) as O[]).find((n) => n.metadata.name.startsWith(`${prefix}-`)) as O
    ).metadata.name as string;
    const pns = (await requireOk(ka, 'GET', `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}`)).status.namespace as string;
    const first = await requireOk(kb, 'GET', pgPath(app, 'first'));
    await requireOk(kb, 'POST', pgPath(app), { ...first, metadata: { name: 'second', namespace: app }, status: undefined });
    await eventually('the second claim upstream', () => getObject(ka, pgPath(pns, 'second')));
    await boundAgain('after the restart');
  }, 90_000);

  it('reports an unreachable app cluster and retries it, and the other AppClusterBindings stay bound', async () => {
    const [port] = await freePorts(1); // nothing listens there
    await putSecret(ops, 'gone-kubeconfig', kubeconfigYaml('gone', `https://127.0.0.1:${port}`, b.ca, 'someone', 'token'));
    const gone = `gone-${id}`;
    await requireOk(ka, 'POST', ACBS(ops), acb(gone, 'gone-kubeconfig', [PG]));
    const o = await eventually('Unreachable reported', async () => {
      const x = await getObject(ka, ACBS(ops, gone));
      return condition(x, 'AppClusterAccess')?.reason === 'Unreachable' ? x : undefined;
    });
    expect(condition(o, 'AppClusterAccess')?.message).toContain(`cannot reach the app cluster https://127.0.0.1:${port}`);
    expect(condition(o, 'AppClusterAccess')?.message).toContain('retrying with backoff');
    expect(condition(o, 'Ready')?.status).toBe('False');
    expect(await getObject(ka, `/api/v1/namespaces/klutch-bind-${ops}-${gone}`)).toBeUndefined();
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
    expect(c.message).toContain('dist/app-cluster/control-plane-konnector/clusterrole.yaml');
    expect(condition(o, 'Ready')?.status).toBe('False');
    expect(await getObject(ka, `/api/v1/namespaces/klutch-bind-${ops}-${weak}`)).toBeUndefined();
    await requireOk(ka, 'DELETE', ACBS(ops, weak));
    await eventually('the refused AppClusterBinding gone', async () => ((await getObject(ka, ACBS(ops, weak))) ? undefined : true));
  }, 90_000);

  it('deleting it strands nothing: the claim goes in both clusters, then the CRD, the konnector, the consumer and the root namespace', async () => {
    const clusterNs = (
      (((await requireOk(ka, 'GET', '/api/v1/namespaces')).items ?? []) as O[]).find((n) => n.metadata.name.startsWith(`${prefix}-`)) as O
    ).metadata.name as string;
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

  it('refuses a kubeconfig Secret of another namespace, and a kubeconfig that would run a program: nothing copied, nothing run', async () => {
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
    expect(await getObject(ka, `/api/v1/namespaces/klutch-bind-${ops}-${stolen}`)).toBeUndefined();

    // An exec plugin would run in the backend's (and the konnector's) Pod on the control plane: refused, never run.
    const marker = join(logDir, `exec-ran-${id}`);
    const doc = parse(kubeconfigYaml('app', b.server, b.ca, 'op', 'unused')) as O;
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
    for (const n of [stolen, runs]) await requireOk(ka, 'DELETE', ACBS(ops, n));
    await ka.request('DELETE', `/api/v1/namespaces/${other}`);
  }, 60_000);

  it("accepts Klutch's AppClusterBinding example from its manifests' README as written", async () => {
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
    const dep = await eventually('its konnector Deployment', () =>
      getObject(ka, '/apis/apps/v1/namespaces/klutch-bind-default-my-app-cluster/deployments/konnector-my-app-cluster'),
    );
    expect(dep.spec.template.spec.containers[0].image).toBe('public.ecr.aws/w5n9a2g2/klutch/konnector:v1.4.0');
    await requireOk(ka, 'DELETE', ACBS('default', 'my-app-cluster'));
    await eventually('it is gone', async () => ((await getObject(ka, ACBS('default', 'my-app-cluster'))) ? undefined : true));
    await ka.request('DELETE', '/api/v1/namespaces/default/secrets/app-cluster-kubeconfig');
  }, 90_000);

  it("holds the backend's Deployments, Leases and events to binding root namespaces (its admission policy): no Pod as another ServiceAccount", async () => {
    const token = (
      await requireOk(ka, 'POST', `/api/v1/namespaces/${BACKEND_NS}/serviceaccounts/klutch-bind-backend/token`, {
        apiVersion: 'authentication.k8s.io/v1',
        kind: 'TokenRequest',
        spec: { expirationSeconds: 600 },
      })
    ).status.token as string;
    const asBackend = kubeFor(a, undefined, token);
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
    const root = `klutch-bind-${ops}-attack`;
    await requireOk(ka, 'POST', '/api/v1/namespaces', { metadata: { name: root } });
    try {
      const attempts: [string, string, unknown][] = [
        ['a Deployment in kube-system', '/apis/apps/v1/namespaces/kube-system/deployments', deployment('kube-system', 'default')],
        [
          'a Deployment in a root namespace as another ServiceAccount',
          `/apis/apps/v1/namespaces/${root}/deployments`,
          deployment(root, 'default'),
        ],
        ['a Lease in kube-system', '/apis/coordination.k8s.io/v1/namespaces/kube-system/leases', lease('kube-system')],
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
    } finally {
      await ka.request('DELETE', `/api/v1/namespaces/${root}`);
    }
  });
});
