/**
 * The konnector's access to claimed Secrets and ConfigMaps on a real API server (cluster `b`): RBAC grants them
 * cluster-wide, and the ValidatingAdmissionPolicy synthesized with the access keeps the konnector's writes to the
 * copies it made (label `klutch.anynines.com/resource-owner`). Acting with a token of the konnector's ServiceAccount:
 * an app's own Secret or ConfigMap can be neither updated nor deleted nor relabelled; a marked copy can.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { admin, cluster, testNamespace } from '../support/cluster';
import { installKonnector } from '../../harness/konnector';
import { eventually, kubeFromConfig, requireOk, type Kube } from '../../harness/kube';

const MARK = Annotations.resourceOwner;
const ns = `ka-${Math.random().toString(36).slice(2, 8)}`; // the konnector's namespace
const ACCESS = `${ns}-konnector-postgresqlinstances.anynines.com`;
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
  kb = await admin('b');
  konnector = kubeFromConfig(
    await installKonnector(await cluster('b'), ns, [
      { group: 'anynines.com', resource: 'postgresqlinstances', claimed: ['secrets', 'configmaps'] },
    ]),
  );
}, 60_000);

afterAll(async () => {
  for (const kind of ['validatingadmissionpolicybindings', 'validatingadmissionpolicies'])
    await kb?.request('DELETE', `/apis/admissionregistration.k8s.io/v1/${kind}/${ACCESS}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
});

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
      expect(update).toContain(`UPDATE of ${resource} ${app}/app-own refused: the konnector (ServiceAccount ${ns}/konnector)`);
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
