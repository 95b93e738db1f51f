/**
 * The bind backend on the harness: provider cluster `a` (consumer side on `b`), a real OpenID provider process, the
 * bundled backend in its own process, and a browser that is a real HTTP client with a cookie jar following real
 * redirects. From /export to the BindingResponse at a loopback callback, the export, and what the handed-out
 * kubeconfig may and may not do.
 */
import http from 'node:http';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, BIND_API_VERSION, Kinds } from '../../exports/bind-api';
import type { BackendSuite } from '../../harness/parts/backend-suite';
import { PG, SB, startBackendSuite } from '../../harness/parts/backend-suite';
import { bindFlow } from '../../harness/parts/bind-flow';
import { cluster } from '../support/cluster';
import { can, eventually, kubeFromConfig } from '../../harness/cluster/kube';

let s: BackendSuite;
beforeAll(async () => {
  s = await startBackendSuite(await cluster('a'));
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

/** A GET with headers fetch() refuses to set (Host). */
function get(url: string, headers: Record<string, string>): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  return new Promise((resolve, reject) => {
    http
      .get(url, { headers }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
      })
      .on('error', reject);
  });
}

describe('GET /export', () => {
  it('answers the BindingProvider byte for byte as Klutch, with the authorize URL of --oidc-callback-url (not the Host header)', async () => {
    const res = await get(`${s.backend.url}/export`, { Host: 'bind.example.test:8443' });
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('application/json');
    expect(res.body).toBe(
      '{"kind":"BindingProvider","apiVersion":"v1alpha1","providerPrettyName":"klutch-kit","version":"v0.4.0",' +
        `"authenticationMethods":[{"method":"OAuth2CodeGrant","oauth2CodeGrant":{"authenticatedURL":"${s.backend.url}/authorize"}}]}`,
    );
    expect((await fetch(`${s.backend.url}/export`, { method: 'POST' })).status).toBe(405);
  });
});

describe('the bind flow', () => {
  it('logs in, lists the API, binds, and hands a working kubeconfig to the loopback callback', async () => {
    const user = s.user();
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, ...SB });

    // Where the browser went: backend → provider → backend /callback → /resources, all by redirects.
    const hops = (await flow.browser.get(`${s.backend.url}/resources?s=${flow.sid}`)).hops;
    expect(hops.at(-1)?.status).toBe(200);
    for (const plural of [PG.resource, SB.resource]) {
      expect(flow.resources.body).toContain(
        `<a class="bind ${plural}" href="/bind?s=${flow.sid}&amp;resource=${plural}&amp;group=anynines.com">`,
      );
    }

    // The session cookie: Klutch's name, HttpOnly, SameSite=Lax, not Secure on plain http.
    const cookies = await flow.browser.cookies(`${s.backend.url}/resources`);
    expect(cookies.find((c) => c.name === `klutch-bind-${flow.sid}`)).toMatchObject({ httpOnly: true, sameSite: 'lax', secure: false });
    expect(cookies.some((c) => c.name.startsWith('klutch-bind-flow-'))).toBe(false); // the flow cookie was used up

    // The BindingResponse: Klutch's document, the template's claims after defaulting, this login's sid.
    expect(flow.response).toMatchObject({
      kind: 'BindingResponse',
      apiVersion: BIND_API_VERSION,
      authentication: { oauth2CodeGrant: { sid: flow.sid, id: `${s.idp.issuer}/${user}` } },
    });
    expect(flow.response.requests).toEqual([
      {
        kind: Kinds.APIServiceExportRequest,
        apiVersion: BIND_API_VERSION,
        metadata: { name: 'servicebindings.anynines.com' },
        spec: {
          resources: [
            {
              group: 'anynines.com',
              resource: 'servicebindings',
              permissionClaims: ['secrets', 'configmaps'].map((resource) => ({
                resource,
                version: 'v1',
                selector: { names: ['*'], namespaces: ['*'], owner: 'Provider' },
                required: false,
                onConflict: { recreateWhenConsumerSideDeleted: true },
                read: {},
              })),
            },
          ],
        },
        status: {},
      },
    ]);
    // Percent-encoded standard base64 in the Location: no raw '+', '/' or '=' that Go's query parser would mangle.
    const location = flow.bound.hops.find((h) => h.location?.includes('response='))!.location!;
    expect(location.startsWith(`${s.callback.url}?response=`)).toBe(true);
    expect(location.split('response=')[1]).toMatch(/^[A-Za-z0-9%]+$/);

    // The kubeconfig: default cluster/context/user, the cluster namespace, the provider's https address, CA inline.
    const kc = parse(flow.kubeconfig) as Record<string, any>;
    expect(kc.clusters).toEqual([
      {
        cluster: { 'certificate-authority-data': Buffer.from(s.cluster.ca).toString('base64'), server: s.cluster.server },
        name: 'default',
      },
    ]);
    expect(kc.contexts).toEqual([{ context: { cluster: 'default', namespace: flow.namespace, user: 'default' }, name: 'default' }]);
    expect(kc['current-context']).toBe('default');
    expect(kc.users[0].name).toBe('default');
    expect(Object.keys(kc.users[0].user)).toEqual(['token']);

    // On the provider: the cluster namespace with the identity annotation, and the consumer's objects.
    const ns = await s.kube.core.readNamespace({ name: flow.namespace });
    expect(ns.metadata?.annotations?.[Annotations.identity]).toBe(`${user}#${flow.cid}`);
    expect(flow.namespace.startsWith(`${s.prefix}-`)).toBe(true);
    const cb = await s.kube.request('GET', `/apis/klutch.anynines.com/v1alpha1/namespaces/${flow.namespace}/clusterbindings/cluster`);
    expect(cb.body.spec).toEqual({ kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'klutch-kit' });
    const secret = await s.kube.core.readNamespacedSecret({ name: 'kubeconfig', namespace: flow.namespace });
    // The same kubeconfig but for the token: the handed-out one carries a ten-minute token of its own (it travels in a URL).
    const withoutToken = (k: string) => k.replace(/token: \S+/, 'token: <token>');
    expect(withoutToken(Buffer.from(secret.data!.kubeconfig!, 'base64').toString())).toBe(withoutToken(flow.kubeconfig));
    expect(secret.type).toBe('Opaque'); // not a legacy service-account-token Secret

    // The kubeconfig works against the provider API server.
    const consumer = kubeFromConfig(flow.kubeconfig);
    const got = await consumer.request('GET', `/api/v1/namespaces/${flow.namespace}`);
    expect(got.code).toBe(200);
  });

  it('exports the claim CRD with its schema when the CLI sends the APIServiceExportRequest', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...SB });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const request = flow.response.requests[0]!;
    const created = await consumer.request(
      'POST',
      `/apis/klutch.anynines.com/v1alpha1/namespaces/${flow.namespace}/apiserviceexportrequests`,
      request,
    );
    expect(created.code).toBe(201);
    const phase = await eventually('the request to succeed', async () => {
      const r = await consumer.request(
        'GET',
        `/apis/klutch.anynines.com/v1alpha1/namespaces/${flow.namespace}/apiserviceexportrequests/${request.metadata.name}`,
      );
      const p = (r.body.status as { phase?: string } | undefined)?.phase;
      return p === 'Succeeded' || p === 'Failed' ? r.body : undefined;
    });
    expect(phase.status).toMatchObject({ phase: 'Succeeded' });
    const exp = await consumer.request(
      'GET',
      `/apis/klutch.anynines.com/v1alpha1/namespaces/${flow.namespace}/apiserviceexports/servicebindings.anynines.com`,
    );
    expect(exp.code).toBe(200);
    const crd = await s.kube.request('GET', '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/servicebindings.anynines.com');
    const crdSpec = crd.body.spec as { versions: { name: string; schema: unknown; served: boolean }[]; names: unknown };
    const spec = exp.body.spec as {
      versions: { name: string; schema: unknown }[];
      names: unknown;
      informerScope: string;
      scope: string;
      permissionClaims: unknown[];
    };
    expect(spec.versions.map((v) => v.name)).toEqual(crdSpec.versions.filter((v) => v.served).map((v) => v.name));
    expect(spec.versions[0]!.schema).toEqual(crdSpec.versions[0]!.schema);
    expect(spec).toMatchObject({ scope: 'Namespaced', informerScope: 'Namespaced', names: crdSpec.names });
    // The same claims; the API server defaults the empty core group back in (the wire form leaves it out).
    expect(spec.permissionClaims).toEqual(
      flow.response.requests[0]!.spec.resources[0]!.permissionClaims!.map((c) => ({ group: '', ...c })),
    );
    expect((exp.body.metadata as { annotations: Record<string, string> }).annotations[Annotations.sourceSpecHash]).toMatch(
      /^[0-9a-f]{32}$/,
    );
  });
});

describe('what a consumer may do', () => {
  it('exactly what Klutch grants in its cluster namespace and the namespaces made for it, nothing cluster-wide', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const ns = flow.namespace;
    const bind = { group: 'klutch.anynines.com', namespace: ns };
    // In its cluster namespace: ClusterRole klutch-binder.
    for (const verb of ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete']) {
      expect(await can(consumer, verb, 'apiserviceexportrequests', bind), `${verb} apiserviceexportrequests`).toBe(true);
      expect(await can(consumer, verb, 'apiservicenamespaces', bind), `${verb} apiservicenamespaces`).toBe(true);
    }
    for (const verb of ['get', 'list', 'watch']) {
      expect(await can(consumer, verb, 'clusterbindings', bind), `${verb} clusterbindings`).toBe(true);
      expect(await can(consumer, verb, 'apiserviceexports', bind), `${verb} apiserviceexports`).toBe(true);
    }
    // Only the status: a write to the spec would let the consumer grant itself (test/cluster/security-consumer.test.ts).
    for (const verb of ['get', 'update', 'patch']) {
      expect(await can(consumer, verb, 'clusterbindings/status', bind), `${verb} clusterbindings/status`).toBe(true);
      expect(await can(consumer, verb, 'apiserviceexports/status', bind), `${verb} apiserviceexports/status`).toBe(true);
    }
    for (const verb of ['create', 'delete', 'update', 'patch']) {
      expect(await can(consumer, verb, 'clusterbindings', bind), `${verb} clusterbindings`).toBe(false);
      expect(await can(consumer, verb, 'apiserviceexports', bind), `${verb} apiserviceexports`).toBe(false);
    }
    // Of its Secrets only the kubeconfig, by name (test/cluster/security-revocation.test.ts).
    expect(await can(consumer, 'get', 'secrets', { namespace: ns, name: 'kubeconfig' })).toBe(true);
    expect(await can(consumer, 'get', 'secrets', { namespace: ns })).toBe(false);
    expect(await can(consumer, 'create', 'secrets', { namespace: ns })).toBe(false);
    expect(await can(consumer, 'get', 'namespaces', { namespace: ns })).toBe(true);

    // Nothing cluster-wide: no Secrets elsewhere, no claims outside the namespaces made for it, no namespaces list.
    expect(await can(consumer, 'list', 'secrets', { namespace: 'kube-system' })).toBe(false);
    expect(await can(consumer, 'list', 'secrets')).toBe(false);
    expect(await can(consumer, 'list', 'namespaces')).toBe(false);
    expect(await can(consumer, 'create', 'postgresqlinstances', { group: 'anynines.com', namespace: 'default' })).toBe(false);
    expect((await s.kube.request('GET', `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/klutch-binder-${ns}`)).code).toBe(404);

    // An APIServiceNamespace gives it a namespace of its own for claims, and only there the exported resource.
    const sn = await consumer.request('POST', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicenamespaces`, {
      apiVersion: BIND_API_VERSION,
      kind: Kinds.APIServiceNamespace,
      metadata: { name: 'default' },
      spec: {},
    });
    expect(sn.code).toBe(201);
    const target = await eventually('status.namespace', async () => {
      const r = await consumer.request('GET', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicenamespaces/default`);
      return (r.body.status as { namespace?: string } | undefined)?.namespace;
    });
    expect(target).toBe(`${ns}-default`);
    const made = await s.kube.core.readNamespace({ name: target });
    expect(made.metadata?.annotations?.[Annotations.apiServiceNamespace]).toBe(`${ns}/default`);
    // The per-consumer ClusterRole follows the exports: export the API, then the consumer may manage claims there.
    const request = flow.response.requests[0]!;
    await consumer.request('POST', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiserviceexportrequests`, request);
    await eventually('claims allowed in the service namespace', async () =>
      (await can(consumer, 'create', 'postgresqlinstances', { group: 'anynines.com', namespace: target })) ? true : undefined,
    );
    for (const verb of ['get', 'list', 'watch', 'update', 'patch', 'delete']) {
      expect(await can(consumer, verb, 'postgresqlinstances', { group: 'anynines.com', namespace: target }), verb).toBe(true);
    }
    expect(await can(consumer, 'create', 'postgresqlinstances', { group: 'anynines.com', namespace: 'default' })).toBe(false);
    expect(await can(consumer, 'create', 'postgresqlinstances', { group: 'anynines.com' })).toBe(false);
    const role = await s.kube.rbac.readClusterRole({ name: `klutch-binder-${ns}` });
    expect(role.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'Namespace', name: ns });

    // Deleting the APIServiceNamespace deletes the namespace made for it.
    await consumer.request('DELETE', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiservicenamespaces/default`);
    await eventually('the service namespace to go', async () => {
      const n = await s.kube.core.readNamespace({ name: target }).catch(() => undefined);
      return !n || n.metadata?.deletionTimestamp ? true : undefined;
    });
  });

  it('never reaches another consumer: its namespaces, exports or secrets', async () => {
    const [alice, bob] = await Promise.all(
      [s.user(), s.user()].map((user) => bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, ...PG })),
    );
    const a = kubeFromConfig(alice!.kubeconfig);
    const other = bob!.namespace;
    expect(other).not.toBe(alice!.namespace);
    for (const [verb, resource, group] of [
      ['get', 'secrets', ''],
      ['list', 'secrets', ''],
      ['get', 'namespaces', ''],
      ['list', 'apiserviceexports', 'klutch.anynines.com'],
      ['create', 'apiserviceexportrequests', 'klutch.anynines.com'],
      ['list', 'apiservicenamespaces', 'klutch.anynines.com'],
      ['update', 'clusterbindings', 'klutch.anynines.com'],
    ] as const) {
      expect(await can(a, verb, resource, { group, namespace: other }), `${verb} ${resource} in ${other}`).toBe(false);
    }
    const read = await a.request('GET', `/api/v1/namespaces/${other}/secrets/kubeconfig`);
    expect(read.code).toBe(403);
  });
});

describe('one identity, one namespace', () => {
  it('binding the same identity again reuses its namespace and kubeconfig Secret', async () => {
    const user = s.user();
    const first = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, ...PG });
    const again = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, cid: first.cid, ...SB });
    expect(again.namespace).toBe(first.namespace);
    // Another cluster of the same user is another consumer.
    const otherCluster = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, ...PG });
    expect(otherCluster.namespace).not.toBe(first.namespace);
  });

  it('concurrent first binds of one identity end in one namespace (Klutch can make two)', async () => {
    const user = s.user();
    const cid = 'race01';
    const flows = await Promise.all(
      Array.from({ length: 6 }, () => bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, cid, ...PG })),
    );
    expect(new Set(flows.map((f) => f.namespace)).size).toBe(1);
    const list = await s.kube.core.listNamespace();
    const mine = list.items.filter((n) => n.metadata?.annotations?.[Annotations.identity] === `${user}#${cid}`);
    expect(mine.map((n) => n.metadata?.name)).toEqual([flows[0]!.namespace]);
  });
});
