/**
 * Migrating a live Klutch installation in place (docs/migrating-from-klutch.md): cluster `a` is the control plane,
 * `b` the app cluster. No Klutch Go binary runs here, so the "before" state is written object by object as Klutch's
 * backend and konnector write it (the facts of ../shared/reference/klutch-bind.md, repeated where they are used):
 *
 * - provider: cluster namespace `<prefix>-…` with the identity annotation, ServiceAccount `klutch-binder` with a
 *   legacy token Secret (filled by kube-controller-manager's token controller), `kubeconfig` Secret with that token,
 *   RoleBinding `klutch-binder`, ClusterRole `klutch-binder-<ns>` (export and claimed resources, namespace-wide) and
 *   the ClusterRoleBinding of the same name that Klutch leaves in Namespaced scope, ClusterBinding, APIServiceExport,
 *   APIServiceNamespace with its provider namespace and RoleBinding; claims copied up with the `bound` annotation and
 *   field manager `klutch.anynines.com`, and their `<claim>-creds` Secrets;
 * - app cluster: Klutch's konnector RBAC (ServiceAccount `konnector`, ClusterRole `<ns>-konnector` with `*` on
 *   everything, bound to it), kubeconfig Secret and APIServiceBinding, the claim CRD owned by the binding, claims with
 *   finalizer `klutch.anynines.com/syncer` and the `bound` annotation, status copied down, and the `<claim>-creds`
 *   copies marked only by the annotation `klutch.anynines.com/resource-owner: Provider`.
 *
 * The ClusterRole `klutch-binder` itself is the one our backend applies (written by provision/rbac.ts): Klutch's is
 * wider, and this cluster is shared with the suite's other files in this worker.
 *
 * Then the konnector is switched (our RBAC applied as kubectl bind applies it, our konnector started) and then the
 * backend (ours started with the same prefix), each while claims are created, updated and deleted in the app cluster;
 * after each switch every claim is accounted for on both sides, and kept claims keep their provider-side objects.
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { binderClusterRole } from '../../backend/provision/rbac';
import {
  Annotations,
  BIND_API_VERSION,
  bindApiCrds,
  CLUSTER_BINDING_NAME,
  KUBECONFIG_SECRET_KEY,
  Kinds,
  providerKubeconfigYaml,
  SYNCER_FINALIZER,
  type PermissionClaim,
} from '../../exports/bind-api';
import { Labels } from '../../backend/labels';
import { render } from '../../synth/synth';
import { PG, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { bindFlow } from '../../harness/parts/bind-flow';
import { loadCatalog, parseYaml } from '../../harness/crossplane/catalog';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { createBinding, installKonnectorAccess, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { applyAt, eventually, getObject, kubeFor, kubeFromConfig, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { releaseBindings } from '../support/bind-cleanup';
import { installCrds } from '../../harness/cluster/kube';
import { claimCrd, type XrdObject } from '../../lib/xcrd';
import { sleep } from '../../lib/abort';

const files = render({ apis: await loadCatalog(), outdir: 'unused' });
const crd = claimCrd(parseYaml(files.get('packages/dataservices/apis/postgresql/definition.yaml')!)[0] as unknown as XrdObject);
const EXPORT = 'postgresqlinstances.anynines.com';
const CLAIMS: PermissionClaim[] = [
  { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } },
  { group: '', resource: 'configmaps', version: 'v1', selector: { owner: 'Provider' } },
];
const BIND = '/apis/klutch.anynines.com/v1alpha1';
const RBAC = '/apis/rbac.authorization.k8s.io/v1';
const SA = 'klutch-binder';

const id = randomBytes(3).toString('hex');
const prefix = `kl${id}`; // the backend's --namespace-prefix, Klutch's and ours
const kns = `klk${id}`; // the konnector's namespace in b (Klutch's klutch-bind)
const app = `kla${id}`; // the app's claims in b
const identity = `alice-${id}#${id}`;

let a: ClusterInfo;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let clusterNs: string;
let pns: string;
let legacyKubeconfig: string;
let appSecret: string;
let konnector: KonnectorProcess | undefined;
let backend: BackendSuite | undefined;
/** A second Klutch consumer, made after our backend's first sweep. */
let latecomer: string | undefined;

const pg = (namespace: string, name = '') => `/apis/anynines.com/v1/namespaces/${namespace}/postgresqlinstances${name ? `/${name}` : ''}`;
const secretPath = (namespace: string, name = '') => `/api/v1/namespaces/${namespace}/secrets${name ? `/${name}` : ''}`;
const spec = (maxConnections: number) => ({
  service: 'a9s-postgresql17',
  plan: 'postgresql-single-nano',
  parameters: { maxConnections },
  compositionRef: { name: 'a9s-postgresql' },
});
const ready = { conditions: [{ type: 'Ready', status: 'True', reason: 'Available', lastTransitionTime: '2025-01-01T00:00:00Z' }] };
const b64 = (s: string) => Buffer.from(s).toString('base64');

/** The claims that must exist after a switch, by name, with their maxConnections. */
const expected = new Map<string, number>();

async function create(kube: Kube, path: string, body: unknown): Promise<WireObject> {
  return requireOk(kube, 'POST', path, body);
}

/** Klutch's konnector copied claim `name` up, its status and its credentials down. */
async function klutchSyncedClaim(name: string, maxConnections: number): Promise<void> {
  const meta = { name, labels: { team: 'x' } };
  await create(kb, pg(app), {
    apiVersion: 'anynines.com/v1',
    kind: 'PostgresqlInstance',
    metadata: { ...meta, namespace: app, finalizers: [SYNCER_FINALIZER], annotations: { [Annotations.bound]: 'true' } },
    spec: spec(maxConnections),
  });
  const up = await applyAt(
    ka,
    pg(pns, name),
    {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { ...meta, namespace: pns, annotations: { [Annotations.bound]: 'true' } },
      spec: spec(maxConnections),
    },
    'klutch.anynines.com',
  );
  await requireOk(ka, 'PATCH', `${pg(pns, name)}/status`, { status: ready }, 'application/merge-patch+json');
  await requireOk(kb, 'PATCH', `${pg(app, name)}/status`, { status: ready }, 'application/merge-patch+json');
  const owner = { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', name, uid: up.metadata.uid };
  await create(ka, secretPath(pns), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-creds`, namespace: pns, ownerReferences: [owner] },
    data: { password: b64(`pw-${name}`) },
  });
  await create(kb, secretPath(app), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-creds`, namespace: app, annotations: { [Annotations.resourceOwner]: 'Provider' } },
    data: { password: b64(`pw-${name}`) },
  });
  expected.set(name, maxConnections);
}

/** Klutch's backend provisioned the consumer `identity`; returns its kubeconfig (the legacy token's). */
async function klutchBackendState(): Promise<string> {
  await installCrds(ka, bindApiCrds());
  await installCrds(ka, [crd as unknown as Record<string, unknown>]);
  await applyAt(ka, `${RBAC}/clusterroles/${SA}`, binderClusterRole());
  const ns = await create(ka, '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { generateName: `${prefix}-`, annotations: { [Annotations.identity]: identity } },
  });
  clusterNs = ns.metadata.name;
  const owned = { ownerReferences: [{ apiVersion: 'v1', kind: 'Namespace', name: clusterNs, uid: ns.metadata.uid }] };
  await create(ka, `/api/v1/namespaces/${clusterNs}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: SA } });
  await create(ka, secretPath(clusterNs), {
    apiVersion: 'v1',
    kind: 'Secret',
    type: 'kubernetes.io/service-account-token',
    metadata: { name: SA, annotations: { 'kubernetes.io/service-account.name': SA } },
  });
  const token = await eventually('the legacy token filled in', async () => {
    const s = await getObject(ka, secretPath(clusterNs, SA));
    return s?.data?.token ? Buffer.from(s.data.token, 'base64').toString() : undefined;
  });
  await create(ka, `${RBAC}/namespaces/${clusterNs}/rolebindings`, {
    metadata: { name: SA },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: SA },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: clusterNs }],
  });
  const role = `${SA}-${clusterNs}`;
  await create(ka, `${RBAC}/clusterroles`, {
    metadata: { name: role, ...owned },
    rules: [
      { apiGroups: ['anynines.com'], resources: ['postgresqlinstances', 'postgresqlinstances/status'], verbs: ['*'] },
      { apiGroups: [''], resources: ['secrets', 'configmaps'], verbs: ['*'] },
    ],
  });
  // Klutch's leak: in Namespaced consumer scope it (re)creates this binding, so the token reads Secrets everywhere.
  await create(ka, `${RBAC}/clusterrolebindings`, {
    metadata: { name: role },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: clusterNs }],
  });
  await create(ka, `${BIND}/namespaces/${clusterNs}/clusterbindings`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.ClusterBinding,
    metadata: { name: CLUSTER_BINDING_NAME },
    spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: KUBECONFIG_SECRET_KEY }, providerPrettyName: 'Klutch' },
  });
  const kubeconfig = providerKubeconfigYaml({ server: a.server, ca: a.ca }, clusterNs, token);
  await create(ka, secretPath(clusterNs), {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'kubeconfig' },
    data: { [KUBECONFIG_SECRET_KEY]: b64(kubeconfig) },
  });
  await create(ka, `${BIND}/namespaces/${clusterNs}/apiserviceexports`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceExport,
    metadata: { name: EXPORT },
    spec: {
      group: crd.spec.group,
      names: crd.spec.names,
      scope: crd.spec.scope,
      versions: crd.spec.versions.filter((v) => v.served),
      informerScope: 'Namespaced',
      permissionClaims: CLAIMS,
    },
  });
  pns = `${clusterNs}-${app}`;
  await create(ka, '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: pns, annotations: { [Annotations.apiServiceNamespace]: `${clusterNs}/${app}` } },
  });
  await create(ka, `${RBAC}/namespaces/${pns}/rolebindings`, {
    metadata: { name: SA },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: role },
    subjects: [{ kind: 'ServiceAccount', name: SA, namespace: clusterNs }],
  });
  await create(ka, `${BIND}/namespaces/${clusterNs}/apiservicenamespaces`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceNamespace,
    metadata: { name: app },
  });
  await requireOk(
    ka,
    'PATCH',
    `${BIND}/namespaces/${clusterNs}/apiservicenamespaces/${app}/status`,
    { status: { namespace: pns } },
    'application/merge-patch+json',
  );
  return kubeconfig;
}

/** What Klutch's konnector and CLI left in the app cluster. */
async function klutchAppState(): Promise<void> {
  await installCrds(
    kb,
    bindApiCrds().filter((c) => (c.spec as { names: { kind: string } }).names.kind === Kinds.APIServiceBinding),
  );
  for (const name of [kns, app]) await create(kb, '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  await create(kb, `/api/v1/namespaces/${kns}/serviceaccounts`, {
    apiVersion: 'v1',
    kind: 'ServiceAccount',
    metadata: { name: 'konnector' },
  });
  // Klutch's konnector role: every verb on everything (kube-bind #303).
  await create(kb, `${RBAC}/clusterroles`, {
    metadata: { name: `${kns}-konnector` },
    rules: [{ apiGroups: ['*'], resources: ['*'], verbs: ['*'] }],
  });
  await create(kb, `${RBAC}/clusterrolebindings`, {
    metadata: { name: `${kns}-konnector` },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${kns}-konnector` },
    subjects: [{ kind: 'ServiceAccount', name: 'konnector', namespace: kns }],
  });
  appSecret = (
    await create(kb, secretPath(kns), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { generateName: 'kubeconfig-' },
      data: { [KUBECONFIG_SECRET_KEY]: b64(legacyKubeconfig) },
    })
  ).metadata.name;
  await createBinding(
    kb,
    kns,
    EXPORT,
    appSecret,
    CLAIMS.map((c) => ({ ...c, state: 'Accepted' as const })),
  );
  const binding = await getObject(kb, `${BIND}/namespaces/${kns}/apiservicebindings/${EXPORT}`);
  // Klutch's konnector made the CRD from the export, owned by the binding. (A file before this one in the worker may
  // have left one, whose owner is gone: the garbage collector leaves a cluster-scoped object with a namespaced owner.)
  const ownerReferences = [
    { apiVersion: BIND_API_VERSION, kind: Kinds.APIServiceBinding, name: EXPORT, uid: binding!.metadata.uid, controller: true },
  ];
  const crdPath = `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${EXPORT}`;
  if (await getObject(kb, crdPath))
    await requireOk(kb, 'PATCH', crdPath, { metadata: { ownerReferences } }, 'application/merge-patch+json');
  else await create(kb, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', { ...crd, metadata: { name: EXPORT, ownerReferences } });
  await waitEstablished(kb, [EXPORT]);
  await eventually('the claim API served in b', async () => ((await kb.request('GET', pg(app))).code === 200 ? true : undefined));
}

/**
 * Changes claims in the app cluster while a switch happens: `creates` new ones, raises maxConnections of `updates`
 * kept ones, deletes `deletes` kept ones (whose finalizer holds them until a konnector deletes their copies).
 */
async function churn(tag: string, o: { creates: number; updates: string[]; deletes: string[] }): Promise<void> {
  const steps: (() => Promise<unknown>)[] = [];
  for (let i = 0; i < o.creates; i++) {
    const name = `${tag}-${i}`;
    expected.set(name, 100 + i);
    steps.push(() =>
      create(kb, pg(app), {
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: { name, namespace: app, labels: { team: 'x' } },
        spec: spec(100 + i),
      }),
    );
  }
  for (const name of o.updates) {
    const n = (expected.get(name) ?? 0) + 1;
    expected.set(name, n);
    steps.push(() =>
      requireOk(kb, 'PATCH', pg(app, name), { spec: { parameters: { maxConnections: n } } }, 'application/merge-patch+json'),
    );
  }
  for (const name of o.deletes) {
    expected.delete(name);
    steps.push(() => requireOk(kb, 'DELETE', pg(app, name)));
  }
  for (const step of steps) {
    await step();
    await sleep(150);
  }
}

/** Both sides hold exactly the expected claims with their spec: nothing lost, nothing duplicated, nothing left over. */
async function accountedFor(): Promise<void> {
  const want = [...expected.entries()].sort(([x], [y]) => x.localeCompare(y));
  const side = async (kube: Kube, namespace: string) =>
    ((await getObject(kube, pg(namespace)))?.items as WireObject[])
      .map((o) => [o.metadata.name, o.spec.parameters?.maxConnections, Boolean(o.metadata.deletionTimestamp)] as const)
      .sort(([x], [y]) => x.localeCompare(y));
  await eventually(
    `${want.length} claims on both sides`,
    async () => {
      const [down, up] = [await side(kb, app), await side(ka, pns)];
      const w = JSON.stringify(want.map(([n, m]) => [n, m, false]));
      return JSON.stringify(down) === w && JSON.stringify(up) === w ? true : undefined;
    },
    90_000,
  );
  for (const [name] of want) {
    const up = await getObject(ka, pg(pns, name));
    expect(up!.metadata.annotations[Annotations.bound], name).toBe('true');
  }
}

/** Upstream uid of each claim in `names` (a claim deleted and made again upstream has another). */
async function upstreamUids(names: readonly string[]): Promise<Record<string, string>> {
  return Object.fromEntries(await Promise.all(names.map(async (n) => [n, (await getObject(ka, pg(pns, n)))!.metadata.uid as string])));
}

const tokenOf = (kubeconfig: string) => /token: (\S+)/.exec(kubeconfig)![1]!;
const appKubeconfig = async () =>
  Buffer.from((await getObject(kb, secretPath(kns, appSecret)))!.data[KUBECONFIG_SECRET_KEY], 'base64').toString();
const logDir = async (what: string) => join((await controlPlanes()).runDir, 'klutch-migration', `${what}-${id}`);

beforeAll(async () => {
  a = await cluster('a');
  b = await cluster('b');
  ka = kubeFor(a);
  kb = kubeFor(b);
  legacyKubeconfig = await klutchBackendState();
  await klutchAppState();
  for (let i = 0; i < 6; i++) await klutchSyncedClaim(`k${i}`, 10 + i);
}, 180_000);

afterAll(async () => {
  // Unbind while the konnector runs, so the API's CRD leaves cluster b with its binding (test/support/bind-cleanup.ts).
  if (kb) await releaseBindings(kb, kns, [EXPORT], konnector ? 20_000 : 0);
  await konnector?.proc.stop();
  await backend?.stop();
  for (const n of [app, kns]) await kb?.request('DELETE', `/api/v1/namespaces/${n}`);
  for (const n of [pns, clusterNs, latecomer]) if (n) await ka?.request('DELETE', `/api/v1/namespaces/${n}`);
  await ka?.request('DELETE', `${RBAC}/clusterrolebindings/${SA}-${clusterNs}`);
  await kb?.request('DELETE', `${RBAC}/clusterrolebindings/${kns}-konnector`);
  await kb?.request('DELETE', `${RBAC}/clusterroles/${kns}-konnector`);
});

describe("switching the konnector: Klutch's replaced by ours under a live sync", () => {
  let uids: Record<string, string>;
  let creds: Record<string, string>;
  let konnectorConfig: string;

  it("applying our konnector's RBAC as kubectl bind does takes the `*/*/*` ClusterRole down to least privilege", async () => {
    uids = await upstreamUids(['k0', 'k1', 'k2', 'k3']);
    creds = Object.fromEntries(
      await Promise.all(['k0', 'k1', 'k2'].map(async (n) => [n, (await getObject(kb, secretPath(app, `${n}-creds`)))!.metadata.uid])),
    );
    konnectorConfig = await installKonnectorAccess(b, kns, [
      { group: 'anynines.com', resource: 'postgresqlinstances', claimed: ['secrets', 'configmaps'] },
    ]);
    const role = await getObject(kb, `${RBAC}/clusterroles/${kns}-konnector`);
    expect(role!.rules.length).toBeGreaterThan(0);
    for (const r of role!.rules as WireObject[]) {
      expect(r.verbs, JSON.stringify(r)).not.toContain('*');
      expect(r.resources, JSON.stringify(r)).not.toContain('*');
    }
    const crb = await getObject(kb, `${RBAC}/clusterrolebindings/${kns}-konnector`);
    expect(crb!.subjects).toEqual([expect.objectContaining({ kind: 'ServiceAccount', name: 'konnector', namespace: kns })]);
  });

  it('keeps every claim, twin and Secret while claims are created, updated and deleted during the switch', async () => {
    const started = (async () => {
      await sleep(500); // some changes land before it runs
      konnector = await startKonnector({
        kubeconfig: konnectorConfig,
        namespace: kns,
        logDir: await logDir('konnector'),
        args: ['--heartbeat-interval=2s'],
      });
    })();
    let running = false;
    const changes = (async () => {
      await churn('n', { creates: 4, updates: ['k0', 'k1'], deletes: ['k3'] });
      // Until the konnector runs, and two rounds after.
      for (let round = 0, after = 0; round < 100 && after < 2; round++, after += running ? 1 : 0)
        await churn(`v${round}`, { creates: 1, updates: ['k1'], deletes: round > 0 ? [`v${round - 1}-0`] : [] });
    })();
    await Promise.all([started.then(() => (running = true)), changes]);
    await accountedFor();
    // Kept claims keep their provider objects: none was deleted and made again upstream.
    expect(await upstreamUids(['k0', 'k1', 'k2'])).toEqual({ k0: uids.k0, k1: uids.k1, k2: uids.k2 });
    // Klutch's credential copies are taken over in place (same object), now marked and owned as ours.
    for (const [n, uid] of Object.entries(creds)) {
      const s = await eventually(`${n}-creds taken over`, async () => {
        const o = await getObject(kb, secretPath(app, `${n}-creds`));
        return o?.metadata.labels?.[Annotations.resourceOwner] === 'Provider' ? o : undefined;
      });
      expect(s.metadata.uid, n).toBe(uid);
      expect(s.metadata.ownerReferences).toEqual([expect.objectContaining({ kind: 'PostgresqlInstance', name: n })]);
    }
    // The deleted claim went upstream first, and its credentials with it.
    expect(await getObject(ka, pg(pns, 'k3'))).toBeUndefined();
    await eventually('k3-creds gone', async () => ((await getObject(kb, secretPath(app, 'k3-creds'))) ? undefined : true));
    // Status and credentials keep flowing for a claim made during the switch.
    const up = await getObject(ka, pg(pns, 'n-0'));
    await create(ka, secretPath(pns), {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: {
        name: 'n-0-creds',
        ownerReferences: [{ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', name: 'n-0', uid: up!.metadata.uid }],
      },
      data: { password: b64('pw-n-0') },
    });
    await requireOk(ka, 'PATCH', `${pg(pns, 'n-0')}/status`, { status: ready }, 'application/merge-patch+json');
    await eventually('n-0-creds down', () => getObject(kb, secretPath(app, 'n-0-creds')));
    await eventually('n-0 Ready down', async () => ((await getObject(kb, pg(app, 'n-0')))?.status?.conditions ? true : undefined));
  }, 180_000);
  it("lets the konnector take over a copy with Klutch's mark, but never delete one as it is, nor touch an app's Secret", async () => {
    const konnectorKube = kubeFromConfig(konnectorConfig);
    const secret = (name: string, annotations: Record<string, string>) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: app, annotations },
      data: { k: b64('v') },
    });
    await create(kb, secretPath(app), secret('klutch-copy', { [Annotations.resourceOwner]: 'Provider' }));
    await create(kb, secretPath(app), secret('app-own', { [Annotations.resourceOwner]: 'Consumer' }));
    expect((await konnectorKube.request('DELETE', secretPath(app, 'klutch-copy'))).code, 'delete as it is').toBe(403);
    const relabel = (name: string, annotations: Record<string, string>) =>
      konnectorKube.request('PUT', secretPath(app, name), {
        ...secret(name, annotations),
        metadata: { name, namespace: app, annotations, labels: { [Annotations.resourceOwner]: 'Provider' } },
      });
    expect((await relabel('app-own', { [Annotations.resourceOwner]: 'Consumer' })).code, "an app's Secret").toBe(403);
    expect((await relabel('klutch-copy', { [Annotations.resourceOwner]: 'Provider' })).code, 'take-over').toBe(200);
  });
});

describe("switching the backend: Klutch's consumer adopted by ours under a live sync", () => {
  it('adopts the consumer without hand-added labels, while claims are created, updated and deleted', async () => {
    const cb = `${BIND}/namespaces/${clusterNs}/clusterbindings/${CLUSTER_BINDING_NAME}`;
    const heartbeatBefore = (await eventually('a heartbeat with the legacy token', () => getObject(ka, cb))).status?.lastHeartbeatTime;
    expect(heartbeatBefore).toBeDefined();
    const uids = await upstreamUids(['k0', 'k2', 'n-1']);
    const started = (async () => {
      backend = await startBackendSuite(a, { args: [`--namespace-prefix=${prefix}`, '--legacy-token-grace=4s'], users: 2 });
    })();
    await Promise.all([started, churn('m', { creates: 4, updates: ['k0', 'n-1'], deletes: ['k4', 'n-2'] })]);
    // On through adoption, token rotation and the legacy token's revocation: a round of changes at a time.
    let round = 0;
    for (; round < 100 && (await getObject(ka, secretPath(clusterNs, SA))); round++)
      await churn(`w${round}`, { creates: 1, updates: ['k0'], deletes: round > 0 ? [`w${round - 1}-0`] : [] });
    expect(round, 'rounds of changes while the backend took over').toBeGreaterThan(1);
    const ns = await eventually('the cluster namespace adopted', async () => {
      const o = await getObject(ka, `/api/v1/namespaces/${clusterNs}`);
      return o?.metadata.labels?.[Labels.identityHash] ? o : undefined;
    });
    expect(ns.metadata.labels[Labels.managedBy]).toBe('klutch-kit-backend');
    expect((await getObject(ka, `/api/v1/namespaces/${pns}`))!.metadata.labels[Labels.clusterNamespace]).toBe(clusterNs);
    await accountedFor();
    expect(await upstreamUids(['k0', 'k2', 'n-1'])).toEqual(uids);
  }, 240_000);

  it('moves the konnector to a rotated, expiring token, then revokes the legacy one', async () => {
    const rotated = await eventually('a rotated token in the app cluster', async () => {
      const k = await appKubeconfig();
      return tokenOf(k) !== tokenOf(legacyKubeconfig) ? k : undefined;
    });
    const claims = JSON.parse(Buffer.from(tokenOf(rotated).split('.')[1]!, 'base64url').toString()) as { exp?: number };
    expect(claims.exp, 'a TokenRequest token expires').toBeDefined();
    await eventually('the legacy token Secret deleted', async () => ((await getObject(ka, secretPath(clusterNs, SA))) ? undefined : true));
    const legacy = kubeFromConfig(legacyKubeconfig);
    await eventually('the legacy token refused', async () =>
      (await legacy.request('GET', `${BIND}/namespaces/${clusterNs}/clusterbindings`)).code === 401 ? true : undefined,
    );
    // Still syncing, on the rotated token alone.
    await churn('r', { creates: 1, updates: ['m-0'], deletes: ['k5'] });
    await accountedFor();
  }, 120_000);

  it("removes Klutch's cluster-wide ClusterRoleBinding and narrows the consumer's role to the exported resources", async () => {
    await eventually('the ClusterRoleBinding gone', async () =>
      (await getObject(ka, `${RBAC}/clusterrolebindings/${SA}-${clusterNs}`)) ? undefined : true,
    );
    const role = await getObject(ka, `${RBAC}/clusterroles/${SA}-${clusterNs}`);
    expect((role!.rules as WireObject[]).flatMap((r) => r.resources)).not.toContain('secrets');
    const consumer = kubeFromConfig(await appKubeconfig());
    expect((await consumer.request('GET', '/api/v1/namespaces/kube-system/secrets')).code).toBe(403);
  });

  it('a Klutch consumer that binds again before the sweep reached it keeps its cluster namespace', async () => {
    const user = backend!.user();
    const cid = randomBytes(4).toString('hex').slice(0, 6);
    // Klutch's backend made it; our backend's sweep (at start, then every 5 minutes) has not seen it yet.
    latecomer = (
      await create(ka, '/api/v1/namespaces', {
        apiVersion: 'v1',
        kind: 'Namespace',
        metadata: { generateName: `${prefix}-`, annotations: { [Annotations.identity]: `${user}#${cid}` } },
      })
    ).metadata.name as string;
    const flow = await bindFlow({ backend: backend!.backend, idp: backend!.idp, callback: backend!.callback, user, cid, ...PG });
    expect(flow.namespace).toBe(latecomer);
    const ns = await getObject(ka, `/api/v1/namespaces/${latecomer}`);
    expect(ns!.metadata.labels[Labels.identityHash]).toBeDefined();
    const mine = ((await getObject(ka, '/api/v1/namespaces'))!.items as WireObject[]).filter(
      (n) => n.metadata.annotations?.[Annotations.identity] === `${user}#${cid}`,
    );
    expect(mine.map((n) => n.metadata.name)).toEqual([latecomer]);
  });
});
