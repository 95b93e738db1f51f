/**
 * The konnector's access to claimed Secrets and ConfigMaps on a real API server (cluster `b`): RBAC grants them
 * cluster-wide, and the ValidatingAdmissionPolicy synthesized with the access keeps the konnector's writes to the
 * copies it made (label `klutch.anynines.com/resource-owner`). Acting with a token of the konnector's ServiceAccount:
 * an app's own Secret or ConfigMap can be neither updated nor deleted nor relabelled; a marked copy can. Attacks
 * (issue 34, item 7): the credential cannot mint a ServiceAccount token (a marked Secret of that type in kube-system,
 * which the token controller would fill in and the cluster-wide read would hand over: cluster-admin), and the policy
 * holds whoever is bound to the konnector's ClusterRole, not only its ServiceAccount. And an instance API's access file
 * keeps a protected instance (`spec.deletionProtection: true`) from being deleted by anyone.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { admin, cluster, testNamespace } from '../support/cluster';
import type { ClusterInfo } from '../../harness/cluster/control-plane';
import { applyConstruct, installKonnectorAccess } from '../../harness/parts/konnector';
import { KonnectorApiAccess } from '../../konnector/deploy/access';
import { eventually, kubeFor, kubeFromConfig, requireOk, type Kube } from '../../harness/cluster/kube';

const MARK = Annotations.resourceOwner;
const ns = `ka-${Math.random().toString(36).slice(2, 8)}`; // the konnector's namespace
const ACCESS = `${ns}-konnector-postgresqlinstances.anynines.com`;
let cb: ClusterInfo;
let kb: Kube;
let konnector: Kube;
let app: string;

type Obj = Record<string, any>;
const path = (resource: string, name = '') => `/api/v1/namespaces/${app}/${resource}${name ? `/${name}` : ''}`;
const object = (resource: 'secrets' | 'configmaps', name: string, marked: boolean, data: Record<string, string> = { k: 'djE=' }) => ({
  apiVersion: 'v1',
  kind: resource === 'secrets' ? 'Secret' : 'ConfigMap',
  metadata: { name, namespace: app, ...(marked ? { labels: { [MARK]: 'Provider' } } : {}) },
  data: resource === 'secrets' ? data : Object.fromEntries(Object.keys(data).map((k) => [k, 'v1'])),
});
/** What the API server answered the konnector: `ok`, or the status and the policy's message. */
const outcome = (r: { code: number; body: Obj }) => (r.code < 300 ? 'ok' : `${r.code} ${String(r.body.message)}`);
/** The current object as the konnector would PUT it back (resourceVersion included), changed by `change`. */
async function replaced(resource: string, name: string, change: (o: Obj) => void, dryRun = false): Promise<string> {
  const o = await requireOk(kb, 'GET', path(resource, name));
  change(o);
  return outcome(await konnector.request('PUT', `${path(resource, name)}${dryRun ? '?dryRun=All' : ''}`, o));
}

beforeAll(async () => {
  cb = await cluster('b');
  kb = await admin('b');
  konnector = kubeFromConfig(
    await installKonnectorAccess(cb, ns, [{ group: 'anynines.com', resource: 'postgresqlinstances', claimed: ['secrets', 'configmaps'] }]),
  );
}, 60_000);

afterAll(async () => {
  for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies'])
    await kb?.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}/${ACCESS}`);
  for (const crb of [VICTIM, `${ns}-other`]) await kb?.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${crb}`);
  await kb?.request('DELETE', `/api/v1/namespaces/kube-system/serviceaccounts/${VICTIM}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
});

/** A ServiceAccount of kube-system bound to cluster-admin, as controllers' accounts are: what a minted token would be. */
const VICTIM = `${ns}-victim`;
const tokenSecret = (namespace: string, name: string, account: string) => ({
  apiVersion: 'v1',
  kind: 'Secret',
  type: 'kubernetes.io/service-account-token',
  metadata: {
    name,
    namespace,
    labels: { [MARK]: 'Provider' },
    annotations: { [MARK]: 'Provider', 'kubernetes.io/service-account.name': account },
  },
});
/** Who a token authenticates as (SelfSubjectReview). */
async function whoami(token: string): Promise<string> {
  const r = await kubeFor(cb, 'token', token).request('POST', '/apis/authentication.k8s.io/v1/selfsubjectreviews', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'SelfSubjectReview',
  });
  return String((r.body.status as { userInfo?: { username?: string } } | undefined)?.userInfo?.username);
}
/** A bearer token of ServiceAccount `namespace/name` (TokenRequest). */
async function saToken(namespace: string, name: string): Promise<string> {
  const r = await requireOk(kb, 'POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 600 },
  });
  return (r.status as { token: string }).token;
}

describe('the konnector and claimed objects it did not make', () => {
  it.each(['secrets', 'configmaps'] as const)(
    '%s: refuses to update, relabel or delete an app object; allows it on a copy',
    async (resource) => {
      app = await testNamespace(kb, 'app');
      await requireOk(kb, 'POST', path(resource), object(resource, 'app-own', false));
      await requireOk(kb, 'POST', path(resource), object(resource, 'db-creds', true));
      const refusal = `ValidatingAdmissionPolicy '${ACCESS}' with binding '${ACCESS}' denied request`;
      const change = (o: Obj) => (o.data.k = resource === 'secrets' ? 'djI=' : 'v2');

      // The policy takes effect once the API server has loaded it: wait (dry runs, which admission judges too).
      await eventually('the policy in force', async () =>
        (await replaced(resource, 'app-own', change, true)) === 'ok' ? undefined : true,
      );
      const update = await replaced(resource, 'app-own', change);
      expect(update).toMatch(/^403 /);
      expect(update).toContain(refusal);
      expect(update).toContain(
        `UPDATE of ${resource} ${app}/app-own refused: the konnector (ServiceAccount ${ns}/konnector, or whoever holds ClusterRole ${ACCESS})`,
      );
      // Putting the mark on an app object is an update of an unmarked object: refused too.
      expect(await replaced(resource, 'app-own', (o) => (o.metadata.labels = { [MARK]: 'Provider' }))).toContain(refusal);
      expect(outcome(await konnector.request('DELETE', path(resource, 'app-own')))).toContain(
        `DELETE of ${resource} ${app}/app-own refused`,
      );
      expect(outcome(await konnector.request('POST', path(resource), object(resource, 'new-unmarked', false)))).toContain(refusal);
      // Patch is not among the konnector's verbs at all.
      expect((await konnector.request('PATCH', path(resource, 'app-own'), { data: {} }, 'application/merge-patch+json')).code).toBe(403);
      const own = await requireOk(kb, 'GET', path(resource, 'app-own'));
      expect(own.data.k).toBe(resource === 'secrets' ? 'djE=' : 'v1');
      expect(own.metadata.labels?.[MARK]).toBeUndefined();

      // Its copies: create, update and delete pass; taking the mark off one does not.
      expect(await replaced(resource, 'db-creds', (o) => delete o.metadata.labels[MARK])).toContain(refusal);
      expect(await replaced(resource, 'db-creds', (o) => (o.data.k = resource === 'secrets' ? 'djI=' : 'v2'))).toBe('ok');
      expect(outcome(await konnector.request('POST', path(resource), object(resource, 'new-copy', true)))).toBe('ok');
      expect(outcome(await konnector.request('DELETE', path(resource, 'db-creds')))).toBe('ok');
      expect(outcome(await konnector.request('DELETE', path(resource, 'new-copy')))).toBe('ok');
    },
  );

  it('still updates kubeconfig Secrets in its own namespace (the Role there grants it)', async () => {
    await requireOk(kb, 'POST', `/api/v1/namespaces/${ns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'kubeconfig-x', namespace: ns },
      data: { kubeconfig: 'djE=' },
    });
    const r = await konnector.request(
      'PATCH',
      `/api/v1/namespaces/${ns}/secrets/kubeconfig-x`,
      { data: { kubeconfig: 'djI=' } },
      'application/merge-patch+json',
    );
    expect(outcome(r)).toBe('ok');
  });
});

describe('attack: the konnector credential mints no token (issue 34, item 7)', () => {
  it('refuses a marked ServiceAccount token Secret in kube-system, which the token controller would fill in', async () => {
    app = await testNamespace(kb, 'app');
    await requireOk(kb, 'POST', '/api/v1/namespaces/kube-system/serviceaccounts', { metadata: { name: VICTIM } });
    await requireOk(kb, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: VICTIM },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: VICTIM, namespace: 'kube-system' }],
    });
    const name = `${ns}-copy`;
    const attack = outcome(
      await konnector.request('POST', '/api/v1/namespaces/kube-system/secrets', tokenSecret('kube-system', name, VICTIM)),
    );
    // The token controller is at work: one the admin makes (in the app's namespace) is filled in; by then it would
    // have filled in the konnector's too, which the konnector reads like any Secret.
    await requireOk(kb, 'POST', `/api/v1/namespaces/${app}/serviceaccounts`, { metadata: { name: 'control' } });
    await requireOk(kb, 'POST', `/api/v1/namespaces/${app}/secrets`, tokenSecret(app, 'control', 'control'));
    await eventually('the token controller to fill in a token Secret', async () =>
      (await requireOk(kb, 'GET', `/api/v1/namespaces/${app}/secrets/control`)).data?.token ? true : undefined,
    );
    const minted = await konnector.request('GET', `/api/v1/namespaces/kube-system/secrets/${name}`);
    const token = (minted.body.data as Record<string, string> | undefined)?.token;
    expect(token ? `the konnector read a token of ${await whoami(Buffer.from(token, 'base64').toString())}` : minted.code).toBe(404);
    expect(attack).toMatch(/^403 /);
    expect(attack).toContain(
      `CREATE of Secret kube-system/${name} refused: the konnector (ServiceAccount ${ns}/konnector, or whoever holds ClusterRole ${ACCESS}) copies no credentials of this cluster, and its type kubernetes.io/service-account-token (field type;`,
    );
    expect(attack).toContain('share an Opaque Secret without those annotations');

    // A bootstrap token (an authenticator's credential by its type), and the ServiceAccount annotation on any type.
    const bootstrap = outcome(
      await konnector.request('POST', '/api/v1/namespaces/kube-system/secrets', {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'bootstrap.kubernetes.io/token',
        metadata: { name: 'bootstrap-token-k7k7k7', namespace: 'kube-system', labels: { [MARK]: 'Provider' } },
        stringData: { 'token-id': 'k7k7k7', 'token-secret': 'k7k7k7k7k7k7k7k7', 'usage-bootstrap-authentication': 'true' },
      }),
    );
    expect(bootstrap).toContain('its type bootstrap.kubernetes.io/token (field type;');
    const annotated = object('secrets', 'annotated', true);
    const withAnnotation = {
      ...annotated,
      metadata: { ...annotated.metadata, annotations: { 'kubernetes.io/service-account.name': VICTIM } },
    };
    expect(outcome(await konnector.request('POST', path('secrets'), withAnnotation))).toContain('copies no credentials of this cluster');
    // What it is for still passes: marked copies of the types providers share.
    for (const type of ['Opaque', 'connection.crossplane.io/v1alpha1', 'kubernetes.io/basic-auth']) {
      const copy = { ...object('secrets', `copy-${type.replace(/[^a-z]/g, '')}`, true, { username: 'dQ==', password: 'cA==' }), type };
      expect(outcome(await konnector.request('POST', path('secrets'), copy)), type).toBe('ok');
    }
  });

  it("holds whoever is bound to the konnector's ClusterRole, through a group too, not only its ServiceAccount", async () => {
    app = await testNamespace(kb, 'app');
    await requireOk(kb, 'POST', path('secrets'), object('secrets', 'app-own', false));
    // Another identity the operator binds to the role: every ServiceAccount of a namespace (a group subject).
    const other = await testNamespace(kb, 'other');
    await requireOk(kb, 'POST', `/api/v1/namespaces/${other}/serviceaccounts`, { metadata: { name: 'sync' } });
    await requireOk(kb, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: `${ns}-other` },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: ACCESS },
      subjects: [{ kind: 'Group', apiGroup: 'rbac.authorization.k8s.io', name: `system:serviceaccounts:${other}` }],
    });
    const sync = kubeFor(cb, 'token', await saToken(other, 'sync'));
    // Once RBAC lets it read (the binding is in force), its writes are judged.
    await eventually('the binding in force', async () =>
      (await sync.request('GET', path('secrets', 'app-own'))).code === 200 ? true : undefined,
    );
    const o = await requireOk(sync, 'GET', path('secrets', 'app-own'));
    o.data.k = 'djI=';
    const update = outcome(await sync.request('PUT', path('secrets', 'app-own'), o));
    expect(update).toContain(`UPDATE of secrets ${app}/app-own refused`);
    expect(outcome(await sync.request('POST', path('secrets'), tokenSecret(app, 'minted', 'default')))).toContain(
      'copies no credentials of this cluster',
    );
    expect((await requireOk(kb, 'GET', path('secrets', 'app-own'))).data.k).toBe('djE=');
    // Cluster-admin holds the role's permission too (every verb), but is not held: the admin still writes app objects.
    o.data.k = 'djM=';
    expect(outcome(await kb.request('PUT', path('secrets', 'app-own'), o))).toBe('ok');
  });
});

/**
 * Deletion protection (issue 35): the access file of an instance API carries a policy that refuses anyone's DELETE of
 * an object with `spec.deletionProtection: true` — an app developer's, the konnector's — naming the field to clear.
 * On a resource of this file's own, so no other suite's claims meet the policy.
 */
describe('deletion protection of an instance in the app cluster', () => {
  const GROUP = 'protection.test.klutch.io';
  const PLURAL = 'things';
  const POLICY = `${ns}-konnector-${PLURAL}.${GROUP}-deletion-protection`;
  const things = (name = '') => `/apis/${GROUP}/v1/namespaces/${app}/${PLURAL}${name ? `/${name}` : ''}`;
  const thing = (name: string, deletionProtection?: boolean) => ({
    apiVersion: `${GROUP}/v1`,
    kind: 'Thing',
    metadata: { name, namespace: app },
    spec: deletionProtection === undefined ? {} : { deletionProtection },
  });

  beforeAll(async () => {
    await requireOk(kb, 'POST', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions', {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: `${PLURAL}.${GROUP}` },
      spec: {
        group: GROUP,
        scope: 'Namespaced',
        names: { kind: 'Thing', plural: PLURAL, singular: 'thing', listKind: 'ThingList' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: {
              openAPIV3Schema: {
                type: 'object',
                properties: { spec: { type: 'object', properties: { deletionProtection: { type: 'boolean' } } } },
              },
            },
          },
        ],
      },
    });
    await applyConstruct(
      kb,
      (c) => new KonnectorApiAccess(c, 'protect', { group: GROUP, resource: PLURAL, namespace: ns, deletionProtection: true }),
    );
  });

  afterAll(async () => {
    await kb?.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${PLURAL}.${GROUP}`);
    for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies'])
      await kb?.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}/${POLICY}`);
    for (const kind of ['clusterrolebindings', 'clusterroles'])
      await kb?.request('DELETE', `/apis/rbac.authorization.k8s.io/v1/${kind}/${ns}-konnector-${PLURAL}.${GROUP}`);
  });

  it('refuses deleting a protected instance, the konnector too, naming the field; deletes it once the field is false', async () => {
    app = await testNamespace(kb, 'app');
    await eventually('the Thing CRD served', async () => ((await kb.request('GET', things())).code === 200 ? true : undefined));
    await requireOk(kb, 'POST', things(), thing('orders', true));
    await requireOk(kb, 'POST', things(), thing('scratch'));
    const refused =
      `Thing ${app}/orders is protected from deletion (spec.deletionProtection: true): ` +
      'set spec.deletionProtection to false, then delete it';
    // In force once the API server has loaded the policy (dry runs are judged too, and delete nothing).
    await eventually('the policy in force', async () =>
      outcome(await kb.request('DELETE', `${things('orders')}?dryRun=All`)).includes(refused) ? true : undefined,
    );
    expect(outcome(await kb.request('DELETE', things('orders')))).toBe(
      `403 ${PLURAL}.${GROUP} "orders" is forbidden: ValidatingAdmissionPolicy '${POLICY}' with binding '${POLICY}' denied request: ${refused}`,
    );
    expect(outcome(await konnector.request('DELETE', things('orders')))).toContain(refused);
    // Still there after both refusals.
    expect((await kb.request('GET', things('orders'))).code).toBe(200);
    // An unprotected instance goes at once; a protected one once its field is cleared.
    expect(outcome(await kb.request('DELETE', things('scratch')))).toBe('ok');
    await requireOk(kb, 'PATCH', things('orders'), { spec: { deletionProtection: false } }, 'application/merge-patch+json');
    expect(outcome(await kb.request('DELETE', things('orders')))).toBe('ok');
  });
});
