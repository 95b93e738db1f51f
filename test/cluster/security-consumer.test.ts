/**
 * Attacks of a bound consumer on its own boundaries (provider cluster `a`): everything runs with the kubeconfig the
 * BindingResponse hands out (ServiceAccount klutch-binder of the consumer's cluster namespace), as a konnector, or
 * anyone holding it, would. Each test fails without its fix: a consumer widening its grant through an export's
 * claims; Cluster scope granting claimed resources cluster-wide, or writes to another consumer's claims (or to a
 * cluster-scoped API, which cannot be held to one consumer); claim rules reaching every Secret of a provider
 * namespace; a long-lived token in the URL; and objects without bound (clusters, APIServiceNamespaces, unbound
 * consumers left behind, abandoned ones keeping their credentials); a consumer-owned Secret claim minting a
 * ServiceAccount token (issue 34, item 10).
 */
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, BIND_API_VERSION, Kinds, type PermissionClaim } from '../../exports/bind-api';
import { ConsumerSecretTypes, CONSUMER_SECRET_TYPES_POLICY } from '../../backend/deploy/bind-backend';
import { applyConstruct, bindApp, installKonnectorAccess, startKonnector } from '../../harness/parts/konnector';
import { PG, SB, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { bindFlow, browserLogin, type FlowResult } from '../../harness/parts/bind-flow';
import { cluster, controlPlanes } from '../support/cluster';
import { applyAt, can, eventually, getObject, type Kube, kubeFor, kubeFromConfig, requireOk } from '../../harness/cluster/kube';
import { sleep } from '../../lib/abort';

const BIND = '/apis/klutch.anynines.com/v1alpha1';
const UNBOUND_TTL_S = 12;
const ABANDONED_S = 20;
const MAX_CLUSTERS = 2;
const MAX_SERVICE_NAMESPACES = 2;

/** The main backend (Namespaced) and one with consumer scope Cluster. */
let s: BackendSuite;
let sc: BackendSuite;
/** Bound without ever exporting: the main backend deletes it after UNBOUND_TTL_S. */
let unbound: FlowResult;
/** Bound on the Cluster backend and never heard of again: it loses its credentials after ABANDONED_S. */
let abandoned: FlowResult;
/** Bound (and exporting, so it is not cleaned up as unbound) for the quota test. */
let quota: FlowResult;
/** A test API of this suite only, so deleting its template leaves no other template offering it. */
let widgets: { group: string; plural: string };
/** A test API whose template claims the consumer's Secrets (`owner: Consumer`), as Klutch's konnector copies them up. */
let uploads: { group: string; plural: string };
/** A cluster-scoped test API the Cluster backend's templates select (and that must not be offered). */
let gadgets: { group: string; plural: string };

beforeAll(async () => {
  const a = await cluster('a');
  [s, sc] = await Promise.all([
    startBackendSuite(a, {
      users: 12,
      args: [
        `--unbound-consumer-ttl=${UNBOUND_TTL_S}s`,
        `--max-clusters-per-subject=${MAX_CLUSTERS}`,
        `--max-apiservicenamespaces=${MAX_SERVICE_NAMESPACES}`,
      ],
    }),
    startBackendSuite(a, { users: 8, args: ['--consumer-scope=Cluster', `--abandoned-consumer-after=${ABANDONED_S}s`] }),
  ]);
  [unbound, abandoned, quota] = await Promise.all([
    bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG }),
    bindFlow({ backend: sc.backend, idp: sc.idp, callback: sc.callback, user: sc.user(), ...PG }),
    bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG }),
  ]);
  // An export keeps it from being cleaned up as unbound.
  await exportApi(kubeFromConfig(quota.kubeconfig), quota.namespace, PG.group, PG.resource);
  const id = randomBytes(3).toString('hex');
  widgets = { group: `sc${id}.klutch-kit.test`, plural: 'widgets' };
  gadgets = { group: `sc${id}.klutch-kit.test`, plural: 'gadgets' };
  uploads = { group: `sc${id}.klutch-kit.test`, plural: 'uploads' };
  await Promise.all([
    testApi(s, widgets, 'Widget', 'Namespaced', s.templateNamespace),
    testApi(sc, gadgets, 'Gadget', 'Cluster', sc.templateNamespace),
    testApi(s, uploads, 'Upload', 'Namespaced', s.templateNamespace, [
      { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Consumer' } },
    ]),
  ]);
  // The admission policy BindBackend ships with the backend (the suites run the backend as a process, not its Deployment).
  await applyConstruct(s.kube, (c) => new ConsumerSecretTypes(c, 'consumer-secret-types'));
}, 120_000);

afterAll(async () => {
  for (const stop of stops) await stop().catch(() => undefined);
  for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies'])
    await s?.kube.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}/${CONSUMER_SECRET_TYPES_POLICY}`);
  for (const api of [widgets, gadgets, uploads])
    await s?.kube.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${api?.plural}.${api?.group}`);
  await Promise.all([s?.stop(), sc?.stop()]);
});

/** A CRD of any shape and an export template selecting it, in `templateNamespace`. */
async function testApi(
  suite: BackendSuite,
  api: { group: string; plural: string },
  kind: string,
  scope: 'Namespaced' | 'Cluster',
  templateNamespace: string,
  permissionClaims: readonly PermissionClaim[] = [],
): Promise<void> {
  const name = `${api.plural}.${api.group}`;
  await applyAt(suite.kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`, {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: {
      group: api.group,
      scope,
      names: { kind, plural: api.plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
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
  await waitEstablished(suite.kube, [name]);
  await applyAt(
    suite.kube,
    `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${templateNamespace}/apiserviceexporttemplates/${api.plural}`,
    {
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: api.plural, namespace: templateNamespace },
      spec: {
        APIServiceSelector: { group: api.group, resource: api.plural },
        ...(permissionClaims.length ? { permissionClaims } : {}),
      },
    },
  );
}

/** Exports `resource.group` to the consumer (as kubectl bind's request) and waits for the export. */
async function exportApi(consumer: Kube, ns: string, group: string, resource: string): Promise<void> {
  await requireOk(consumer, 'POST', `${BIND}/namespaces/${ns}/apiserviceexportrequests`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceExportRequest,
    metadata: { name: `${resource}.${group}` },
    spec: { resources: [{ group, resource }] },
  });
  await eventually(`export ${resource}.${group}`, async () =>
    (await consumer.request('GET', `${BIND}/namespaces/${ns}/apiserviceexports/${resource}.${group}`)).code === 200 ? true : undefined,
  );
}

/** Makes an APIServiceNamespace and returns the provider namespace made for it. */
async function serviceNamespace(consumer: Kube, ns: string, name: string): Promise<string> {
  await requireOk(consumer, 'POST', `${BIND}/namespaces/${ns}/apiservicenamespaces`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceNamespace,
    metadata: { name },
    spec: {},
  });
  return eventually('status.namespace', async () => {
    const r = await consumer.request('GET', `${BIND}/namespaces/${ns}/apiservicenamespaces/${name}`);
    return (r.body.status as { namespace?: string } | undefined)?.namespace;
  });
}

const pgPath = (namespace: string, name?: string) => `/apis/${PG.group}/v1/namespaces/${namespace}/${PG.resource}${name ? `/${name}` : ''}`;
const pgClaim = (name: string, plan: string) => ({
  apiVersion: `${PG.group}/v1`,
  kind: 'PostgresqlInstance',
  metadata: { name },
  spec: { service: 'a9s-postgresql17', plan, compositionRef: { name: 'a9s-postgresql' } },
});

const secret = (name: string, namespace: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace },
  stringData: { password: 'not-for-the-consumer' },
});

/** What the app clusters of the tests leave to stop and remove (afterAll). */
const stops: (() => Promise<void>)[] = [];

/**
 * An app cluster of a consumer bound to the Cluster backend (namespaces of its own in cluster `b`): its konnector,
 * started with the consumer's kubeconfig as `kubectl bind` leaves it, syncs PostgresqlInstances of `namespace`.
 */
async function bobsAppCluster(flow: FlowResult) {
  const b = await cluster('b');
  const kube = kubeFor(b);
  const id = randomBytes(3).toString('hex');
  const ns = `sc-konnector-${id}`;
  const namespace = `sc-apps-${id}`;
  const exportName = `${PG.resource}.${PG.group}`;
  const kubeconfig = await installKonnectorAccess(b, ns, [{ group: PG.group, resource: PG.resource }]);
  await requireOk(kube, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  const logDir = join((await controlPlanes()).runDir, 'konnector', ns);
  const konnector = await startKonnector({ kubeconfig, namespace: ns, logDir });
  await bindApp(b, ns, { kubeconfig: () => flow.kubeconfig }, exportName);
  await eventually(`the PostgresqlInstance CRD in the app cluster`, async () =>
    (await getObject(kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${exportName}`)) ? true : undefined,
  );
  await waitEstablished(kube, [exportName]);
  stops.push(async () => {
    await konnector.proc.stop();
    // Nothing serves these any more: finalizers released so that the namespaces can go.
    for (const list of [pgPath(namespace), `${BIND}/namespaces/${ns}/apiservicebindings`])
      for (const o of ((await kube.request('GET', list)).body.items ?? []) as { metadata: { name: string } }[])
        await kube.request('PATCH', `${list}/${o.metadata.name}`, { metadata: { finalizers: null } }, 'application/merge-patch+json');
    for (const n of [namespace, ns]) await kube.request('DELETE', `/api/v1/namespaces/${n}`);
  });
  return {
    kube,
    namespace,
    /** The provider namespace the konnector was given for `namespace`. */
    providerNamespace: () =>
      eventually(`APIServiceNamespace ${namespace} assigned`, async () => {
        const o = await getObject(sc.kube, `${BIND}/namespaces/${flow.namespace}/apiservicenamespaces/${namespace}`);
        return o?.status?.namespace as string | undefined;
      }),
  };
}

describe('finding 1: a consumer cannot grant itself permissions through an export', () => {
  it('may not patch an export (only its status); a tampered export is put back, and with its template gone grants nothing', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const ns = flow.namespace;
    const target = await serviceNamespace(consumer, ns, 'default');
    await exportApi(consumer, ns, widgets.group, widgets.plural);
    const path = `${BIND}/namespaces/${ns}/apiserviceexports/${widgets.plural}.${widgets.group}`;
    const claims = { spec: { permissionClaims: [{ group: '', resource: 'secrets', version: 'v1' }] } };
    expect((await consumer.request('PATCH', path, claims, 'application/merge-patch+json')).code).toBe(403);
    expect(
      (await consumer.request('PATCH', `${BIND}/namespaces/${ns}/clusterbindings/cluster`, { spec: {} }, 'application/merge-patch+json'))
        .code,
    ).toBe(403);
    // Klutch's konnector writes an export's status: that stays allowed.
    expect((await consumer.request('PATCH', `${path}/status`, { status: {} }, 'application/merge-patch+json')).code).toBe(200);

    // Anyone else who could (simulated by the admin) adds a claim and keeps the source hash: it is put back.
    await requireOk(s.kube, 'PATCH', path, claims, 'application/merge-patch+json');
    await eventually('the tampered export to be put back', async () => {
      const e = await s.kube.request('GET', path);
      return (e.body.spec as { permissionClaims?: unknown[] }).permissionClaims === undefined ? true : undefined;
    });
    // Without a template it is left as it is; what it says is granted still never follows it.
    await requireOk(
      s.kube,
      'DELETE',
      `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${s.templateNamespace}/apiserviceexporttemplates/widgets`,
    );
    await requireOk(s.kube, 'PATCH', path, claims, 'application/merge-patch+json');
    await requireOk(s.kube, 'POST', `/api/v1/namespaces/${target}/secrets`, secret('operator-secret', target));
    // Give the controllers time to (wrongly) follow the export, then look.
    await sleep(3000);
    expect(await can(consumer, 'list', 'secrets', { namespace: target })).toBe(false);
    expect(await can(consumer, 'get', 'secrets', { namespace: target, name: 'operator-secret' })).toBe(false);
    expect((await consumer.request('GET', `/api/v1/namespaces/${target}/secrets/operator-secret`)).code).toBe(403);
    // What it bound stays granted.
    expect(await can(consumer, 'create', widgets.plural, { group: widgets.group, namespace: target })).toBe(true);
  });
});

describe('finding 2: consumer scope Cluster grants cluster-wide only list and watch of the exported resources', () => {
  it('never grants Secrets or ConfigMaps of other namespaces through the servicebindings claims', async () => {
    const [flow, other] = await Promise.all(
      [sc.user(), sc.user()].map((user) => bindFlow({ backend: sc.backend, idp: sc.idp, callback: sc.callback, user, ...SB })),
    );
    const consumer = kubeFromConfig(flow!.kubeconfig);
    await exportApi(consumer, flow!.namespace, SB.group, SB.resource);
    await eventually('the exported resource listed cluster-wide', async () =>
      (await can(consumer, 'list', SB.resource, { group: SB.group })) ? true : undefined,
    );
    expect(await can(consumer, 'create', SB.resource, { group: SB.group, namespace: 'default' })).toBe(false);
    for (const namespace of ['kube-system', sc.backend.namespace, other!.namespace, 'default']) {
      for (const resource of ['secrets', 'configmaps']) {
        for (const verb of ['get', 'list'])
          expect(await can(consumer, verb, resource, { namespace }), `${verb} ${resource} in ${namespace}`).toBe(false);
      }
    }
    expect(await can(consumer, 'list', 'secrets')).toBe(false);
  });

  it("never lets one consumer create, change or delete another's claims; Klutch's cluster-wide informer still lists", async () => {
    const [alice, bob] = await Promise.all(
      [sc.user(), sc.user()].map((user) => bindFlow({ backend: sc.backend, idp: sc.idp, callback: sc.callback, user, ...PG })),
    );
    const a = kubeFromConfig(alice!.kubeconfig);
    const b = kubeFromConfig(bob!.kubeconfig);
    await Promise.all([exportApi(a, alice!.namespace, PG.group, PG.resource), exportApi(b, bob!.namespace, PG.group, PG.resource)]);
    const pa = await serviceNamespace(a, alice!.namespace, 'apps');
    // Bob is an app cluster with its konnector (issue 34's acceptance: the victim's app cluster end to end): his
    // claim is written there, and his konnector puts it up, with his token, into his provider namespace.
    const app = await bobsAppCluster(bob!);
    await requireOk(app.kube, 'POST', pgPath(app.namespace), pgClaim('db', 'postgresql-single-nano'));
    const pb = await app.providerNamespace();
    const bobs = await eventually("Bob's claim upstream", async () => (await getObject(sc.kube, pgPath(pb, 'db'))) ?? undefined);
    const bobsOwn = await requireOk(app.kube, 'GET', pgPath(app.namespace, 'db'));

    // The attack, as anyone holding Alice's kubeconfig would send it: Crossplane would delete Bob's database.
    const attempts = {
      delete: await a.request('DELETE', pgPath(pb!, 'db')),
      'delete collection': await a.request('DELETE', pgPath(pb!)),
      patch: await a.request('PATCH', pgPath(pb!, 'db'), { spec: { plan: 'postgresql-replicas-small' } }, 'application/merge-patch+json'),
      update: await a.request('PUT', pgPath(pb!, 'db'), {
        ...pgClaim('db', 'postgresql-replicas-small'),
        metadata: { name: 'db', namespace: pb, resourceVersion: bobs.metadata.resourceVersion },
      }),
      create: await a.request('POST', pgPath(pb!), pgClaim('squatter', 'postgresql-single-nano')),
    };
    const codes = Object.fromEntries(Object.entries(attempts).map(([what, r]) => [what, r.code]));
    expect(codes, JSON.stringify(Object.values(attempts).map((r) => r.body.message))).toEqual({
      delete: 403,
      'delete collection': 403,
      patch: 403,
      update: 403,
      create: 403,
    });
    const after = await requireOk(sc.kube, 'GET', pgPath(pb!, 'db'));
    expect(after.metadata).toMatchObject({ uid: bobs.metadata.uid, resourceVersion: bobs.metadata.resourceVersion });
    expect(after.metadata.deletionTimestamp).toBeUndefined();
    expect((after.spec as { plan: string }).plan).toBe('postgresql-single-nano');
    expect((await sc.kube.request('GET', pgPath(pb!, 'squatter'))).code).toBe(404);
    // Bob's app cluster: his claim is the one he wrote, and his konnector still carries his changes up.
    const own = await requireOk(app.kube, 'GET', pgPath(app.namespace, 'db'));
    expect([own.metadata.uid, own.metadata.deletionTimestamp, (own.spec as { plan: string }).plan]).toEqual([
      bobsOwn.metadata.uid,
      undefined,
      'postgresql-single-nano',
    ]);
    await requireOk(
      app.kube,
      'PATCH',
      pgPath(app.namespace, 'db'),
      { spec: { plan: 'postgresql-single-small' } },
      'application/merge-patch+json',
    );
    await eventually("Bob's own change upstream", async () =>
      ((await getObject(sc.kube, pgPath(pb!, 'db')))?.spec as { plan?: string } | undefined)?.plan === 'postgresql-single-small'
        ? true
        : undefined,
    );

    // What the API server says Alice's token may do in Bob's provider namespace, and anywhere but her own.
    for (const verb of ['create', 'update', 'patch', 'delete', 'deletecollection', 'get']) {
      expect(await can(a, verb, PG.resource, { group: PG.group, namespace: pb }), `${verb} in Bob's ${pb}`).toBe(false);
      expect(await can(a, verb, PG.resource, { group: PG.group, namespace: 'default' }), `${verb} in default`).toBe(false);
    }
    // Her own provider namespace is hers: the konnector's writes there go through (so the 403s above are not a dead token).
    await requireOk(a, 'POST', pgPath(pa!), pgClaim('mine', 'postgresql-single-nano'));
    await requireOk(a, 'PATCH', pgPath(pa!, 'mine'), { metadata: { labels: { team: 'alice' } } }, 'application/merge-patch+json');
    await requireOk(a, 'DELETE', pgPath(pa!, 'mine'));
    // Klutch's konnector runs one informer over all namespaces for informerScope Cluster: list and watch everywhere
    // stay, and so it sees Bob's claim (the read exposure SECURITY.md names).
    const e = await requireOk(a, 'GET', `${BIND}/namespaces/${alice!.namespace}/apiserviceexports/${PG.resource}.${PG.group}`);
    expect((e.spec as { informerScope: string }).informerScope).toBe('Cluster');
    expect(await can(a, 'watch', PG.resource, { group: PG.group })).toBe(true);
    const all = await requireOk(a, 'GET', `/apis/${PG.group}/v1/${PG.resource}`);
    expect(
      (all.items as { metadata: { namespace: string; name: string } }[]).map((o) => `${o.metadata.namespace}/${o.metadata.name}`),
    ).toContain(`${pb}/db`);
  });

  it('offers no cluster-scoped API: its writes could not be held to one consumer', async () => {
    const flow = await bindFlow({ backend: sc.backend, idp: sc.idp, callback: sc.callback, user: sc.user(), ...PG });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const name = `${gadgets.plural}.${gadgets.group}`;
    await requireOk(consumer, 'POST', `${BIND}/namespaces/${flow.namespace}/apiserviceexportrequests`, {
      apiVersion: BIND_API_VERSION,
      kind: Kinds.APIServiceExportRequest,
      metadata: { name },
      spec: { resources: [{ group: gadgets.group, resource: gadgets.plural }] },
    });
    const status = await eventually('the request to finish', async () => {
      const r = await consumer.request('GET', `${BIND}/namespaces/${flow.namespace}/apiserviceexportrequests/${name}`);
      const st = r.body.status as { phase?: string; terminalMessage?: string } | undefined;
      return st?.phase === 'Failed' || st?.phase === 'Succeeded' ? st : undefined;
    });
    expect(status).toMatchObject({
      phase: 'Failed',
      terminalMessage: expect.stringContaining(`no APIServiceExportTemplate exports ${name} as a namespaced resource`),
    });
    expect((await consumer.request('GET', `${BIND}/namespaces/${flow.namespace}/apiserviceexports/${name}`)).code).toBe(404);
    for (const verb of ['create', 'delete', 'update'])
      expect(await can(consumer, verb, gadgets.plural, { group: gadgets.group }), `${verb} ${gadgets.plural}`).toBe(false);
  });
});

describe('finding 6: claimed objects are shared one by one', () => {
  it("reads a bound object's -creds Secret, never an instance Secret beside it", async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...SB });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const target = await serviceNamespace(consumer, flow.namespace, 'apps');
    await exportApi(consumer, flow.namespace, SB.group, SB.resource);
    // What the konnector and the data-service operator leave in the provider namespace.
    await eventually('the claim to be accepted', async () => {
      const r = await s.kube.request('POST', `/apis/${SB.group}/v1/namespaces/${target}/${SB.resource}`, {
        apiVersion: `${SB.group}/v1`,
        kind: 'ServiceBinding',
        metadata: { name: 'sb1' },
        spec: { instanceRef: 'pg1', serviceInstanceType: 'postgresql' },
      });
      return r.code === 201 || r.code === 409 ? true : undefined;
    });
    await requireOk(s.kube, 'POST', `/api/v1/namespaces/${target}/secrets`, secret('sb1-creds', target));
    await requireOk(s.kube, 'POST', `/api/v1/namespaces/${target}/secrets`, secret('pg1-admin-credentials', target));

    await eventually('the -creds Secret to be readable', async () =>
      (await consumer.request('GET', `/api/v1/namespaces/${target}/secrets/sb1-creds`)).code === 200 ? true : undefined,
    );
    expect((await consumer.request('GET', `/api/v1/namespaces/${target}/secrets/pg1-admin-credentials`)).code).toBe(403);
    expect((await consumer.request('GET', `/api/v1/namespaces/${target}/secrets`)).code).toBe(403);
    expect((await consumer.request('GET', `/api/v1/namespaces/${target}/secrets?fieldSelector=metadata.name%3Dsb1-creds`)).code).toBe(200);
    expect(await can(consumer, 'create', 'secrets', { namespace: target })).toBe(false);
    // The konnector learns what it may read from the Role.
    const role = await consumer.request('GET', `/apis/rbac.authorization.k8s.io/v1/namespaces/${target}/roles/klutch-binder-claimed`);
    expect(role.code).toBe(200);
    expect(role.body.rules).toContainEqual({
      verbs: ['get', 'list', 'watch'],
      apiGroups: [''],
      resources: ['secrets'],
      resourceNames: ['sb1-creds'],
    });
  });
});

describe('issue 34, item 10: a consumer-owned Secret claim mints no ServiceAccount token', () => {
  it('refuses a consumer a Secret of a type other than Opaque; an Opaque one it still writes and reads back', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const target = await serviceNamespace(consumer, flow.namespace, 'apps');
    await exportApi(consumer, flow.namespace, uploads.group, uploads.plural);
    await eventually('the claim to let the consumer create Secrets', async () =>
      (await can(consumer, 'create', 'secrets', { namespace: target })) ? true : undefined,
    );
    const up = (name: string, type: string, annotations: Record<string, string> = {}) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type,
      metadata: { name, namespace: target, annotations: { [Annotations.resourceOwner]: 'Consumer', ...annotations } },
      ...(type === 'Opaque' ? { stringData: { password: 'app' } } : {}),
      ...(type === 'kubernetes.io/tls' ? { stringData: { 'tls.crt': 'c', 'tls.key': 'k' } } : {}),
    });
    const secrets = `/api/v1/namespaces/${target}/secrets`;
    // What Klutch's konnector would copy up for an app, but a token Secret for a ServiceAccount of the provider
    // namespace (`default` here; the data-service operator's Pods have theirs beside it).
    const attack = await consumer.request(
      'POST',
      secrets,
      up('minted', 'kubernetes.io/service-account-token', { 'kubernetes.io/service-account.name': 'default' }),
    );
    // An Opaque one, as the claim is meant for; once it is readable the backend has granted what it marks, and the
    // token controller has long filled in a token Secret.
    await requireOk(consumer, 'POST', secrets, up('app-creds', 'Opaque'));
    await eventually('the Opaque copy to be readable', async () =>
      (await consumer.request('GET', `${secrets}/app-creds`)).code === 200 ? true : undefined,
    );
    const minted = await consumer.request('GET', `${secrets}/minted`);
    const token = (minted.body.data as Record<string, string> | undefined)?.token;
    const whoami = async (t: string) =>
      String(
        (
          (
            await kubeFor(s.cluster, 'token', t).request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
              apiVersion: 'authentication.k8s.io/v1',
              kind: 'SelfSubjectReview',
            })
          ).body.status as { userInfo?: { username?: string } } | undefined
        )?.userInfo?.username,
      );
    expect(token ? `the consumer read a token of ${await whoami(Buffer.from(token, 'base64').toString())}` : minted.code).toBe(403);
    expect(attack.code).toBe(403);
    expect(String(attack.body.message)).toContain(
      `ValidatingAdmissionPolicy '${CONSUMER_SECRET_TYPES_POLICY}' with binding '${CONSUMER_SECRET_TYPES_POLICY}' denied request`,
    );
    expect(String(attack.body.message)).toContain(
      `CREATE of Secret ${target}/minted refused: a consumer (system:serviceaccount:${flow.namespace}:klutch-binder) writes Secrets on the control plane only of type Opaque, not kubernetes.io/service-account-token (field type)`,
    );
    expect(String(attack.body.message)).toContain('copy the app Secret as type Opaque');
    // Any other type a controller might act on, too.
    expect((await consumer.request('POST', secrets, up('tls', 'kubernetes.io/tls'))).code).toBe(403);
  });
});

describe('finding 7: leaked tokens are bounded', () => {
  it('the BindingResponse carries a ten-minute token; the Secret the konnector copies holds the rotated one', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const token = (k: string) => decodeJwt(/token: (\S+)/.exec(k)![1]!) as { exp: number; iat: number };
    const handed = token(flow.kubeconfig);
    expect(handed.exp - handed.iat).toBe(600);
    expect(handed.exp * 1000 - Date.now()).toBeLessThanOrEqual(600_000);
    const kept = await s.kube.core.readNamespacedSecret({ name: 'kubeconfig', namespace: flow.namespace });
    const stored = token(Buffer.from(kept.data!.kubeconfig!, 'base64').toString());
    expect(stored.exp - stored.iat).toBe(3600);
    // The short token reads the Secret, as the konnector does when it starts.
    const consumer = kubeFromConfig(flow.kubeconfig);
    expect((await consumer.request('GET', `/api/v1/namespaces/${flow.namespace}/secrets/kubeconfig`)).code).toBe(200);
  });

  it('an abandoned consumer loses its credentials, keeps its data, and is told how to get back', async () => {
    const consumer = kubeFromConfig(abandoned.kubeconfig);
    const ns = abandoned.namespace;
    const cb = await eventually(
      'CredentialsRevoked',
      async () => {
        const r = await sc.kube.request('GET', `${BIND}/namespaces/${ns}/clusterbindings/cluster`);
        const c = ((r.body.status as { conditions?: { type: string; status: string; message?: string }[] })?.conditions ?? []).find(
          (x) => x.type === 'CredentialsRevoked',
        );
        return c?.status === 'True' ? c : undefined;
      },
      (ABANDONED_S + 20) * 1000,
    );
    expect(cb.message).toContain('kubectl bind again');
    expect((await sc.kube.request('GET', `/api/v1/namespaces/${ns}/secrets/kubeconfig`)).code).toBe(404);
    expect((await sc.kube.request('GET', `/api/v1/namespaces/${ns}`)).code).toBe(200);
    await eventually(
      'the token to be refused',
      async () => ((await consumer.request('GET', '/api')).code === 401 ? true : undefined),
      15_000,
    );
  }, 60_000);
});

describe('finding 11: objects are bounded', () => {
  it('refuses a cluster more than --max-clusters-per-subject with a page naming the limit; bound clusters still bind', async () => {
    const user = s.user();
    const flows = [];
    for (let i = 0; i < MAX_CLUSTERS; i++)
      flows.push(await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, ...PG }));
    const { browser, sid } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user });
    const page = await browser.get(`${s.backend.url}/bind?s=${sid}&resource=${PG.resource}&group=${PG.group}`);
    expect(page.status).toBe(403);
    expect(page.body).toContain('--max-clusters-per-subject');
    const again = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, cid: flows[0]!.cid, ...PG });
    expect(again.namespace).toBe(flows[0]!.namespace);
  });

  it('refuses an APIServiceNamespace more than --max-apiservicenamespaces (ResourceQuota)', async () => {
    const flow = quota;
    const consumer = kubeFromConfig(flow.kubeconfig);
    const create = (name: string) =>
      consumer.request('POST', `${BIND}/namespaces/${flow.namespace}/apiservicenamespaces`, {
        apiVersion: BIND_API_VERSION,
        kind: Kinds.APIServiceNamespace,
        metadata: { name },
        spec: {},
      });
    for (let i = 0; i < MAX_SERVICE_NAMESPACES; i++) {
      const r = await create(`ns${i}`);
      expect(r.code, String(r.body.message)).toBe(201);
    }
    const refused = await create('one-too-many');
    expect(refused.code).toBe(403);
    expect(String(refused.body.message)).toContain('exceeded quota');
    const ns = await s.kube.core.readNamespace({ name: flow.namespace });
    expect(ns.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
  });

  it('deletes a consumer that never exported within --unbound-consumer-ttl', async () => {
    await eventually(
      'the unbound cluster namespace to go',
      async () => {
        const n = await s.kube.core.readNamespace({ name: unbound.namespace }).catch(() => undefined);
        return !n || n.metadata?.deletionTimestamp ? true : undefined;
      },
      (UNBOUND_TTL_S + 20) * 1000,
    );
  }, 60_000);
});
