/**
 * The konnector against OUR bind backend (backend/, not the provider-side helper): a user binds ServiceBinding
 * through the real OIDC flow (test/support/bind-flow.ts), the CLI's APIServiceExportRequest makes the backend export
 * the API, and the konnector in `b` — given the kubeconfig of the BindingResponse — syncs a claim up to the namespace
 * the backend assigns, brings status and the claimed `<claim>-creds` Secret down, and deletes upstream first.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AcceptablePermissionClaim, PermissionClaim } from '../../exports/bind-api';
import { SB, startBackendSuite, type BackendSuite } from '../support/backend-suite';
import { bindFlow, type FlowResult } from '../support/bind-flow';
import { cluster, controlPlanes } from '../support/cluster';
import type { ClusterInfo } from '../support/control-plane';
import { bindApp, installKonnector, startKonnector, type KonnectorProcess } from '../support/konnector';
import { eventually, kubeFor, kubeFromConfig, type Kube } from '../support/kube';

const BIND = '/apis/klutch.anynines.com/v1alpha1';
const ns = `kb-${Math.random().toString(36).slice(2, 8)}`; // the konnector's namespace in b
const app = `kba-${Math.random().toString(36).slice(2, 8)}`;
const EXPORT = `${SB.resource}.${SB.group}`;
const sb = (namespace: string, name = '') => `/apis/anynines.com/v1/namespaces/${namespace}/servicebindings${name ? `/${name}` : ''}`;

let s: BackendSuite;
let flow: FlowResult;
let b: ClusterInfo;
let ka: Kube;
let kb: Kube;
let konnector: KonnectorProcess;
type O = Record<string, any>;
const get = async (kube: Kube, path: string): Promise<O | undefined> => {
  const r = await kube.request('GET', path);
  return r.code === 200 ? (r.body as O) : undefined;
};
const must = async (kube: Kube, method: string, path: string, body?: unknown, type?: string): Promise<O> => {
  const r = await kube.request(method, path, body, type);
  if (r.code >= 300) throw new Error(`${method} ${path}: ${r.code} ${JSON.stringify(r.body.message)}`);
  return r.body as O;
};

beforeAll(async () => {
  const a = await cluster('a');
  b = await cluster('b');
  ka = kubeFor(a);
  kb = kubeFor(b);
  s = await startBackendSuite(a);
  flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...SB });
  // What kubectl bind apiservice does with the response: the request, then wait for the export.
  const consumer = kubeFromConfig(flow.kubeconfig);
  const request = flow.response.requests[0]!;
  await must(consumer, 'POST', `${BIND}/namespaces/${flow.namespace}/apiserviceexportrequests`, request);
  await eventually('the export request to succeed', async () => {
    const r = await get(consumer, `${BIND}/namespaces/${flow.namespace}/apiserviceexportrequests/${request.metadata.name}`);
    return r?.status?.phase === 'Succeeded' ? true : undefined;
  });
  const exp = await must(consumer, 'GET', `${BIND}/namespaces/${flow.namespace}/apiserviceexports/${EXPORT}`);
  const claims: AcceptablePermissionClaim[] = ((exp.spec.permissionClaims ?? []) as PermissionClaim[]).map((c) => ({
    ...c,
    state: 'Accepted',
  }));
  const kubeconfig = await installKonnector(b, ns, [{ group: SB.group, resource: SB.resource, claimed: ['secrets', 'configmaps'] }]);
  await must(kb, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: app } });
  konnector = await startKonnector({
    kubeconfig,
    namespace: ns,
    logDir: join((await controlPlanes()).runDir, 'konnector', ns),
    args: ['--heartbeat-interval=2s'],
  });
  await bindApp(b, ns, { kubeconfig: () => flow.kubeconfig }, EXPORT, claims);
}, 180_000);

afterAll(async () => {
  // Unbind while the konnector runs, so it releases the binding and removes the API's CRD from b (later suites of
  // this worker bind the same API).
  if (konnector && !konnector.proc.exited()) {
    await kb.request('DELETE', `${BIND}/namespaces/${ns}/apiservicebindings/${EXPORT}`);
    await eventually('the binding released', async () =>
      (await get(kb, `${BIND}/namespaces/${ns}/apiservicebindings/${EXPORT}`)) ? undefined : true,
    ).catch(() => undefined);
  }
  await konnector?.proc.stop();
  await s?.stop();
  await kb?.request('DELETE', `/api/v1/namespaces/${app}`);
  await kb?.request('DELETE', `/api/v1/namespaces/${ns}`);
});

describe('the konnector with our bind backend', () => {
  it('binds: Ready, and heartbeats into the ClusterBinding the backend made', async () => {
    await eventually('binding Ready', async () => {
      const o = await get(kb, `${BIND}/namespaces/${ns}/apiservicebindings/${EXPORT}`);
      return o?.status?.conditions?.some((c: O) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
    });
    const cb = await eventually('a heartbeat', async () => {
      const o = await get(ka, `${BIND}/namespaces/${flow.namespace}/clusterbindings/cluster`);
      return o?.status?.konnectorVersion ? o : undefined;
    });
    expect(cb.status).toMatchObject({ konnectorVersion: 'v0.1.0', heartbeatInterval: '4s' });
  });

  it('moves a claim up into the namespace the backend assigns, and status and <claim>-creds down', async () => {
    const spec = { instanceRef: 'db', serviceInstanceType: 'postgresql', compositionRef: { name: 'a9s-servicebinding' } };
    await must(kb, 'POST', sb(app), {
      apiVersion: 'anynines.com/v1',
      kind: 'ServiceBinding',
      metadata: { name: 'db-binding', namespace: app },
      spec,
    });
    const pns = await eventually('the backend assigns a namespace', async () => {
      const o = await get(ka, `${BIND}/namespaces/${flow.namespace}/apiservicenamespaces/${app}`);
      return o?.status?.namespace as string | undefined;
    });
    const up = await eventually('the claim upstream', () => get(ka, sb(pns, 'db-binding')));
    expect(up!.spec).toMatchObject(spec);
    await must(ka, 'PATCH', `${sb(pns, 'db-binding')}/status`, { status: { managed: { state: 'bound' } } }, 'application/merge-patch+json');
    await eventually('status down', async () =>
      (await get(kb, sb(app, 'db-binding')))?.status?.managed?.state === 'bound' ? true : undefined,
    );
    const owner = { apiVersion: 'anynines.com/v1', kind: 'ServiceBinding', name: 'db-binding', uid: up!.metadata.uid };
    await must(ka, 'POST', `/api/v1/namespaces/${pns}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'db-binding-creds', namespace: pns, ownerReferences: [owner] },
      data: { username: Buffer.from('app').toString('base64') },
    });
    const creds = await eventually('db-binding-creds in the app namespace', () =>
      get(kb, `/api/v1/namespaces/${app}/secrets/db-binding-creds`),
    );
    expect(Buffer.from(creds!.data.username, 'base64').toString()).toBe('app');
    await must(kb, 'DELETE', sb(app, 'db-binding'));
    await eventually('the claim gone from the app cluster', async () => ((await get(kb, sb(app, 'db-binding'))) ? undefined : true));
    expect(await get(ka, sb(pns, 'db-binding'))).toBeUndefined();
  });
});
