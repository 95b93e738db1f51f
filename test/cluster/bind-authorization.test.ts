/**
 * Who may bind what (issue 21, item 3), on provider cluster `a` with the real OpenID provider: users carry groups in
 * their ID tokens (scope `groups`, asked for with --oidc-extra-scopes), and the APIs of this suite's own group carry
 * bind rules (annotation klutch-kit.anynines.com/bind-allowed-groups on their templates). A member binds; anyone else
 * does not see the API on /resources, gets a 403 page on /bind naming the API and the group, and nothing is made for
 * them; the refusal is counted and written to the audit log. A consumer's kubeconfig cannot go around /bind with an
 * APIServiceExportRequest, nor rewrite the groups its bind recorded.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, BIND_API_VERSION, Kinds } from '../../exports/bind-api';
import { startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { bindFlow, browserLogin, type FlowResult } from '../../harness/parts/bind-flow';
import { cluster } from '../support/cluster';
import { applyAt, eventually, getObject, kubeFromConfig, type Kube } from '../../harness/cluster/kube';

const BIND = '/apis/klutch.anynines.com/v1alpha1';
const ALLOWED_GROUPS = 'klutch-kit.anynines.com/bind-allowed-groups';
const BOUND_BY = 'klutch-kit.anynines.com/bound-by';

const id = randomBytes(3).toString('hex');
/** This suite's API group: its rules touch no other suite's binds. */
const group = `az${id}.klutch-kit.test`;
const dba = `dba-${id}`;
const ops = `ops-${id}`;
const alice = `alice-${id}`;
const bob = `bob-${id}`;
/** Issued by a careless identity provider: an AppClusterBinding's identity, and a Kubernetes group. */
const impostor = `system:appclusterbinding:${ops}:app`;
const eve = `eve-${id}`;
/** Widgets: members of `dba` may bind. Gadgets: only `ops`, which nobody here is in. */
const widgets = { resource: 'widgets', group } as const;

let s: BackendSuite;
/** Alice's bind of widgets (in beforeAll: two tests use her kubeconfig). */
let aliceFlow: FlowResult;

function crd(plural: string, kind: string): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind, plural, singular: kind.toLowerCase(), listKind: `${kind}List` },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } } },
          },
        },
      ],
    },
  };
}

async function offer(plural: string, kind: string, allowed: string): Promise<void> {
  const k = s.kube;
  await applyAt(k, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${group}`, crd(plural, kind));
  await waitEstablished(k, [`${plural}.${group}`]);
  await applyAt(
    k,
    `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${s.templateNamespace}/apiserviceexporttemplates/${plural}`,
    {
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: plural, namespace: s.templateNamespace, annotations: { [ALLOWED_GROUPS]: allowed } },
      spec: { APIServiceSelector: { group, resource: plural } },
    },
  );
}

async function metric(line: RegExp): Promise<number | undefined> {
  const text = await (await fetch(`${s.backend.probeUrl}/metrics`)).text();
  const m = text.split('\n').find((l) => line.test(l));
  return m === undefined ? undefined : Number(m.split(' ').at(-1));
}

function auditLines(): Record<string, unknown>[] {
  return readFileSync(s.backend.proc.logPath, 'utf8')
    .split('\n')
    .filter((l) => l.includes('"audit":true'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

/** The cluster namespaces of this suite's backend made for `sub`. */
async function namespacesOf(sub: string): Promise<string[]> {
  const list = await s.kube.core.listNamespace();
  return list.items
    .filter((n) => n.metadata!.name!.startsWith(`${s.prefix}-`))
    .filter((n) => n.metadata!.annotations?.[Annotations.identity]?.startsWith(`${sub}#`))
    .map((n) => n.metadata!.name!);
}

async function request(consumer: Kube, namespace: string, resource: string): Promise<void> {
  const r = await consumer.request('POST', `${BIND}/namespaces/${namespace}/apiserviceexportrequests`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceExportRequest,
    metadata: { name: `${resource}.${group}` },
    spec: { resources: [{ group, resource }] },
  });
  if (r.code !== 201) throw new Error(`create request ${resource}: ${r.code} ${JSON.stringify(r.body.message)}`);
}

beforeAll(async () => {
  s = await startBackendSuite(await cluster('a'), {
    users: 0,
    extraUsers: [
      { sub: alice, groups: [dba, `devs-${id}`] },
      { sub: bob, groups: [`devs-${id}`] },
      { sub: impostor, groups: [`devs-${id}`] },
      { sub: eve, groups: ['system:masters', dba] },
    ],
    args: ['--oidc-extra-scopes=groups'],
  });
  await offer('widgets', 'Widget', `${dba}, platform-${id}`);
  await offer('gadgets', 'Gadget', ops);
  aliceFlow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: alice, ...widgets });
}, 120_000);

afterAll(async () => {
  for (const plural of ['widgets', 'gadgets'])
    await s?.kube.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${plural}.${group}`);
  await s?.stop();
});

describe('a member of an allowed group', () => {
  it('sees the API on /resources, binds it, and the audit log says which group allowed it', async () => {
    expect(aliceFlow.resources.body).toContain(
      `<a class="bind widgets" href="/bind?s=${aliceFlow.sid}&amp;resource=widgets&amp;group=${group}">`,
    );
    expect(aliceFlow.resources.body).not.toContain('class="bind gadgets"');
    expect(aliceFlow.response.requests[0]?.spec.resources[0]).toMatchObject(widgets);
    const bound = auditLines().find((l) => l.event === 'bound' && l.identity === `${alice}#${aliceFlow.cid}`);
    expect(bound).toMatchObject({ api: `widgets.${group}`, allowedBy: `group:${dba}`, clusterId: aliceFlow.cid });

    // Her export request (what kubectl bind sends next) is exported: the controller applies the same rule.
    await request(kubeFromConfig(aliceFlow.kubeconfig), aliceFlow.namespace, 'widgets');
    await eventually('the widgets export', () =>
      getObject(s.kube, `${BIND}/namespaces/${aliceFlow.namespace}/apiserviceexports/widgets.${group}`),
    );
  });
});

describe('a user outside the allowed groups', () => {
  it('does not see the API, gets a 403 naming the API and the group, has nothing made, and is counted and audited', async () => {
    const { browser, sid, cid, page } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user: bob });
    expect(page.status).toBe(200);
    expect(page.body).toContain(`Logged in as <strong>${bob}</strong>`);
    expect(page.body).not.toContain('class="bind widgets"');
    expect(page.body).not.toContain('class="bind gadgets"');
    expect(page.body).toMatch(/more APIs are offered only to members of certain groups/);

    const refused = await browser.get(`${s.backend.url}/bind?s=${sid}&resource=widgets&group=${group}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain(`Not allowed to bind widgets.${group}`);
    expect(refused.body).toContain(
      `only a member of groups &quot;${dba}&quot;, &quot;platform-${id}&quot; may bind widgets.${group}; your groups are &quot;devs-${id}&quot;`,
    );
    // Nothing reached the callback, and no cluster namespace exists for bob.
    expect(new URL(refused.url).pathname).toBe('/bind');
    expect(await namespacesOf(bob)).toEqual([]);

    expect(
      await metric(
        new RegExp(`^klutch_backend_bind_refusals_total\\{api="widgets\\.${group.replaceAll('.', '\\.')}",reason="not-allowed"\\} `),
      ),
    ).toBe(1);
    const line = await eventually('the audit line of the refusal', async () =>
      auditLines().find((l) => l.event === 'bind-refused' && l.subject === bob),
    );
    expect(line).toMatchObject({
      level: 'warn',
      path: 'browser',
      api: `widgets.${group}`,
      template: `${s.templateNamespace}/widgets`,
      reason: 'not-allowed',
      issuer: s.idp.issuer,
      groups: [`devs-${id}`],
      clusterId: cid,
    });
    expect(String(line.why)).toContain(`"${dba}"`);
  });
});

describe('names Kubernetes and the platform keep (issue 34, item 10)', () => {
  it.each([
    ['a subject', impostor, `Your identity &quot;${impostor}&quot; begins with &quot;system:&quot;`],
    ['a group', eve, 'Your group &quot;system:masters&quot; begins with &quot;system:&quot;'],
  ])('refuses %s beginning with system: from the identity provider, making nothing', async (_, user, message) => {
    const { browser, sid } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user });
    // widgets: eve's other group, dba, would allow it.
    const refused = await browser.get(`${s.backend.url}/bind?s=${sid}&resource=widgets&group=${group}`);
    expect(refused.status).toBe(403);
    expect(refused.body).toContain(message);
    expect(await namespacesOf(user)).toEqual([]);
  });
});

describe("a consumer's kubeconfig", () => {
  it('cannot bind an API its binder may not bind by creating the export request itself', async () => {
    const consumer = kubeFromConfig(aliceFlow.kubeconfig);
    await request(consumer, aliceFlow.namespace, 'gadgets');
    const path = `${BIND}/namespaces/${aliceFlow.namespace}/apiserviceexportrequests/gadgets.${group}`;
    const failed = await eventually('the gadgets request to fail', async () => {
      const r = await getObject(consumer, path);
      return r?.status?.phase === 'Failed' ? r : undefined;
    });
    expect(failed.status.conditions).toContainEqual(
      expect.objectContaining({ type: 'ExportsReady', status: 'False', reason: 'Forbidden', message: expect.stringContaining(`"${ops}"`) }),
    );
    expect(await getObject(s.kube, `${BIND}/namespaces/${aliceFlow.namespace}/apiserviceexports/gadgets.${group}`)).toBeUndefined();
    expect(
      await metric(
        new RegExp(`^klutch_backend_bind_refusals_total\\{api="gadgets\\.${group.replaceAll('.', '\\.')}",reason="not-allowed"\\} `),
      ),
    ).toBe(1);
    expect(auditLines().find((l) => l.event === 'bind-refused' && l.api === `gadgets.${group}`)).toMatchObject({
      path: 'export-request',
      subject: alice,
      namespace: aliceFlow.namespace,
      groups: [dba, `devs-${id}`],
    });
  });

  it('cannot rewrite the groups its bind recorded on the ClusterBinding', async () => {
    const consumer = kubeFromConfig(aliceFlow.kubeconfig);
    const path = `${BIND}/namespaces/${aliceFlow.namespace}/clusterbindings/cluster`;
    const recorded = (await getObject(s.kube, path))?.metadata.annotations[BOUND_BY];
    expect(JSON.parse(recorded)).toMatchObject({ iss: s.idp.issuer, sub: alice, groups: [dba, `devs-${id}`] });
    const forged = { metadata: { annotations: { [BOUND_BY]: JSON.stringify({ sub: alice, groups: [ops] }) } } };
    expect((await consumer.request('PATCH', path, forged, 'application/merge-patch+json')).code).toBe(403);
    // Its status write is allowed (the heartbeat) but keeps metadata as it was.
    const status = await consumer.request('PATCH', `${path}/status`, forged, 'application/merge-patch+json');
    expect(status.code).toBe(200);
    expect((await getObject(s.kube, path))?.metadata.annotations[BOUND_BY]).toBe(recorded);
  });
});
