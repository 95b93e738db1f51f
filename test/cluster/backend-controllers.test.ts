/**
 * The backend's controllers and token handling on the harness (provider `a`, consumer `b`): TokenRequest kubeconfigs
 * rotated well before expiry (a 10-minute token, the shortest Kubernetes issues, refreshed 8 s after issue) while the
 * kubeconfig keeps working as the konnector copies it; unbinding revokes at once; exports follow their CRD; an export
 * request for a missing CRD waits, then fails; ClusterBinding health from heartbeats.
 */
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Annotations, BIND_API_VERSION, ClusterBindingConditions, HealthyReasons, Kinds } from '../../exports/bind-api';
import { startBackendSuite, PG, type BackendSuite } from '../../harness/parts/backend-suite';
import { waitEstablished } from '../../harness/parts/bind-backend';
import { bindFlow, type FlowResult } from '../../harness/parts/bind-flow';
import { admin, cluster } from '../support/cluster';
import { applyAt, eventually, kubeFromConfig, type Kube } from '../../harness/cluster/kube';
import { sleep } from '../../lib/abort';

/** How long export requests wait for their CRD in this suite (`--export-request-timeout`). */
const CRD_WAIT_S = 12;
const REFRESH_AFTER_S = 8;
let s: BackendSuite;
/** A test API of this suite only, so changing and deleting its CRD touches no other suite. */
let widgets: { group: string; plural: string; crd: Record<string, unknown> };
/** Bound in beforeAll and asked for a CRD that does not exist: it must fail a minute later (checked last). */
let waiting: { flow: FlowResult; name: string; createdAt: number };

const BIND = '/apis/klutch.anynines.com/v1alpha1';

function widgetCrd(
  group: string,
  plural: string,
  columns: { name: string; jsonPath: string; type: string }[] = [],
): Record<string, unknown> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `${plural}.${group}` },
    spec: {
      group,
      scope: 'Namespaced',
      names: { kind: 'Widget', plural, singular: 'widget', listKind: 'WidgetList' },
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          schema: {
            openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { size: { type: 'integer' } } } } },
          },
          ...(columns.length ? { additionalPrinterColumns: columns } : {}),
        },
      ],
    },
  };
}

async function template(kube: Kube, namespace: string, group: string, resource: string): Promise<void> {
  await applyAt(kube, `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${namespace}/apiserviceexporttemplates/${resource}`, {
    apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportTemplate',
    metadata: { name: resource, namespace },
    spec: { APIServiceSelector: { group, resource } },
  });
}

async function requestExport(consumer: Kube, namespace: string, group: string, resource: string): Promise<string> {
  const name = `${resource}.${group}`;
  const r = await consumer.request('POST', `${BIND}/namespaces/${namespace}/apiserviceexportrequests`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceExportRequest,
    metadata: { name },
    spec: { resources: [{ group, resource }] },
  });
  if (r.code !== 201) throw new Error(`create request: ${JSON.stringify(r.body)}`);
  return name;
}

beforeAll(async () => {
  s = await startBackendSuite(await cluster('a'), {
    args: ['--token-lifetime=10m', `--token-refresh-before=${600 - REFRESH_AFTER_S}s`, `--export-request-timeout=${CRD_WAIT_S}s`],
  });
  const id = randomBytes(3).toString('hex');
  widgets = { group: `bk${id}.klutch-kit.test`, plural: 'widgets', crd: {} };
  widgets.crd = widgetCrd(widgets.group, widgets.plural);
  await applyAt(s.kube, `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${widgets.plural}.${widgets.group}`, widgets.crd);
  await waitEstablished(s.kube, [`${widgets.plural}.${widgets.group}`]);
  await template(s.kube, s.templateNamespace, widgets.group, widgets.plural);
  // Offered by a template, but its CRD never appears.
  await template(s.kube, s.templateNamespace, widgets.group, 'gadgets');
  const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
  waiting = {
    flow,
    name: await requestExport(kubeFromConfig(flow.kubeconfig), flow.namespace, widgets.group, 'gadgets'),
    createdAt: Date.now(),
  };
}, 120_000);

afterAll(async () => {
  await s?.kube.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${widgets?.plural}.${widgets?.group}`);
  await s?.stop();
});

const tokenOf = (kubeconfig: string) => /token: (\S+)/.exec(kubeconfig)![1]!;

describe('TokenRequest kubeconfigs', () => {
  it('rotates the token well before expiry; the kubeconfig keeps working as the konnector copies it to the app cluster', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const app = await admin('b');
    // What kubectl bind stores on the app cluster, and what the konnector keeps up to date.
    await app.request('POST', '/api/v1/namespaces', { metadata: { name: 'klutch-bind' } });
    const stored = `kubeconfig-${randomBytes(3).toString('hex')}`;
    const write = async (kubeconfig: string) => {
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: { name: stored, namespace: 'klutch-bind' },
        data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
      };
      await applyAt(app, `/api/v1/namespaces/klutch-bind/secrets/${stored}`, body);
    };
    const read = async () =>
      Buffer.from((await app.core.readNamespacedSecret({ name: stored, namespace: 'klutch-bind' })).data!.kubeconfig!, 'base64').toString();
    await write(flow.kubeconfig);

    const seen = [tokenOf(flow.kubeconfig)];
    for (let round = 0; round < 2; round++) {
      // The konnector's copy: read the provider-side Secret with the kubeconfig it has, write it to the app cluster.
      const current = kubeFromConfig(await read());
      const next = await eventually(
        'a rotated token in the provider-side Secret',
        async () => {
          const r = await current.request('GET', `/api/v1/namespaces/${flow.namespace}/secrets/kubeconfig`);
          if (r.code !== 200) throw new Error(`reading the Secret with the current token: ${r.code}`);
          const k = Buffer.from((r.body.data as { kubeconfig: string }).kubeconfig, 'base64').toString();
          return seen.includes(tokenOf(k)) ? undefined : k;
        },
        REFRESH_AFTER_S * 1000 + 10_000,
      );
      await write(next);
      seen.push(tokenOf(next));
      const fresh = kubeFromConfig(await read());
      expect((await fresh.request('GET', `/api/v1/namespaces/${flow.namespace}`)).code).toBe(200);
    }
    // Every token: ten minutes, for ServiceAccount klutch-binder, bound to the kubeconfig Secret.
    const secret = await s.kube.core.readNamespacedSecret({ name: 'kubeconfig', namespace: flow.namespace });
    for (const t of seen) {
      const c = decodeJwt(t) as { exp: number; iat: number; sub: string; 'kubernetes.io': { secret?: { name: string; uid: string } } };
      expect(c.exp - c.iat).toBe(600);
      expect(c.sub).toBe(`system:serviceaccount:${flow.namespace}:klutch-binder`);
      expect(c['kubernetes.io'].secret).toEqual({ name: 'kubeconfig', uid: secret.metadata!.uid });
    }
    expect(new Set(seen).size).toBe(3);
  });

  it("unbinding revokes: the token dies with its kubeconfig Secret (within the API server's 10 s token cache), and the Secret is not made again", async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const consumer = kubeFromConfig(flow.kubeconfig);
    expect((await consumer.request('GET', `/api/v1/namespaces/${flow.namespace}`)).code).toBe(200);
    await s.kube.core.deleteNamespacedSecret({ name: 'kubeconfig', namespace: flow.namespace });
    // Refused once kube-apiserver's cache of successful token reviews (10 s, not configurable) forgets the token.
    const deleted = Date.now();
    await eventually(
      'the token to be refused',
      async () => ((await consumer.request('GET', '/api')).code === 401 ? true : undefined),
      15_000,
    );
    expect(Date.now() - deleted).toBeLessThan(12_000);
    await sleep((REFRESH_AFTER_S + 2) * 1000);
    expect((await s.kube.request('GET', `/api/v1/namespaces/${flow.namespace}/secrets/kubeconfig`)).code).toBe(404);
  });

  it('unbinding by deleting the cluster namespace revokes the token', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const consumer = kubeFromConfig(flow.kubeconfig);
    await s.kube.core.deleteNamespace({ name: flow.namespace });
    await eventually(
      'the token to be refused',
      async () => ((await consumer.request('GET', '/api')).code === 401 ? true : undefined),
      30_000,
    );
  });
});

describe('exports follow their CRD', () => {
  it('re-derives the export when the CRD changes and deletes it when the CRD goes', async () => {
    const flow = await bindFlow({
      backend: s.backend,
      idp: s.idp,
      callback: s.callback,
      user: s.user(),
      resource: widgets.plural,
      group: widgets.group,
    });
    const consumer = kubeFromConfig(flow.kubeconfig);
    const name = await requestExport(consumer, flow.namespace, widgets.group, widgets.plural);
    const path = `${BIND}/namespaces/${flow.namespace}/apiserviceexports/${name}`;
    const first = await eventually('the export', async () => {
      const r = await consumer.request('GET', path);
      return r.code === 200 ? r.body : undefined;
    });
    const hash = (first.metadata as { annotations: Record<string, string> }).annotations[Annotations.sourceSpecHash];
    const column = { name: 'Size', jsonPath: '.spec.size', type: 'integer' };
    await applyAt(
      s.kube,
      `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`,
      widgetCrd(widgets.group, widgets.plural, [column]),
    );
    const changed = await eventually('the re-derived export', async () => {
      const r = await consumer.request('GET', path);
      const h = (r.body.metadata as { annotations: Record<string, string> }).annotations[Annotations.sourceSpecHash];
      return h !== hash ? r.body : undefined;
    });
    expect((changed.spec as { versions: { additionalPrinterColumns?: unknown[] }[] }).versions[0]!.additionalPrinterColumns).toEqual([
      column,
    ]);
    // The changed CRD re-initializes its storage in the API server; a CRD deleted meanwhile has its finalizer fail
    // ("storage is (re)initializing") and retried on a backoff that outlasts the wait below (seen under load: 35 s).
    await eventually('the changed CRD served again', async () =>
      (await s.kube.request('GET', `/apis/${widgets.group}/v1/${widgets.plural}`)).code === 200 ? true : undefined,
    );
    await s.kube.request('DELETE', `/apis/apiextensions.k8s.io/v1/customresourcedefinitions/${name}`);
    await eventually(
      'the export to go with its CRD',
      async () => ((await consumer.request('GET', path)).code === 404 ? true : undefined),
      30_000,
    );
  });
});

describe('ClusterBinding health', () => {
  const healthy = async (consumer: Kube, ns: string) => {
    const r = await consumer.request('GET', `${BIND}/namespaces/${ns}/clusterbindings/cluster`);
    const conds = (r.body.status as { conditions?: { type: string; status: string; reason?: string }[] } | undefined)?.conditions ?? [];
    return { healthy: conds.find((c) => c.type === ClusterBindingConditions.Healthy), ready: conds.find((c) => c.type === 'Ready') };
  };
  const heartbeat = (consumer: Kube, ns: string, status: Record<string, unknown>) =>
    consumer.request('PATCH', `${BIND}/namespaces/${ns}/clusterbindings/cluster/status`, { status }, 'application/merge-patch+json');
  const until = (consumer: Kube, ns: string, want: string) =>
    eventually(
      `Healthy ${want}`,
      async () => {
        const h = await healthy(consumer, ns);
        return (h.healthy?.status === 'True' ? 'True' : h.healthy?.reason) === want ? h : undefined;
      },
      20_000,
    );

  it('is pending, healthy on heartbeats, and names a missing interval, a timeout and clock drift', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    const k = kubeFromConfig(flow.kubeconfig); // the konnector writes heartbeats with this kubeconfig
    const ns = flow.namespace;
    await until(k, ns, HealthyReasons.FirstHeartbeatPending);
    const now = () => new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    expect((await heartbeat(k, ns, { lastHeartbeatTime: now(), heartbeatInterval: '5m0s', konnectorVersion: 'v1.5.0' })).code).toBe(200);
    expect((await until(k, ns, 'True')).ready?.status).toBe('True');
    await heartbeat(k, ns, { heartbeatInterval: null });
    await until(k, ns, HealthyReasons.HeartbeatIntervalMissing);
    await heartbeat(k, ns, {
      heartbeatInterval: '5m0s',
      lastHeartbeatTime: new Date(Date.now() - 11 * 60_000).toISOString().replace(/\.\d+Z$/, 'Z'),
    });
    await until(k, ns, HealthyReasons.HeartbeatTimeout);
    await heartbeat(k, ns, { lastHeartbeatTime: new Date(Date.now() + 60_000).toISOString().replace(/\.\d+Z$/, 'Z') });
    await until(k, ns, HealthyReasons.HeartbeatTimeDrift);
    // Healthy turns into a timeout by itself once two intervals pass without a heartbeat.
    await heartbeat(k, ns, { heartbeatInterval: '2s', lastHeartbeatTime: now() });
    await until(k, ns, 'True');
    expect((await until(k, ns, HealthyReasons.HeartbeatTimeout)).ready?.status).toBe('False');
  });
});

describe('an export request for a CRD that does not exist', () => {
  it('waits with CRDNotFound, then fails after --export-request-timeout (a minute by default, as Klutch; shorter here)', async () => {
    const consumer = kubeFromConfig(waiting.flow.kubeconfig);
    const path = `${BIND}/namespaces/${waiting.flow.namespace}/apiserviceexportrequests/${waiting.name}`;
    const pending = await eventually('CRDNotFound', async () => {
      const r = await consumer.request('GET', path);
      const st = r.body.status as { phase?: string; conditions?: { reason?: string }[] } | undefined;
      return st?.conditions?.some((c) => c.reason === 'CRDNotFound') ? st : undefined;
    });
    expect(pending.phase === 'Pending' || (pending.phase === 'Failed' && Date.now() - waiting.createdAt > CRD_WAIT_S * 1000 - 2_000)).toBe(
      true,
    );
    const failed = await eventually(
      'the request to fail',
      async () => {
        const st = (await consumer.request('GET', path)).body.status as { phase?: string; terminalMessage?: string } | undefined;
        return st?.phase === 'Failed' ? st : undefined;
      },
      Math.max(5_000, (CRD_WAIT_S + 15) * 1000 - (Date.now() - waiting.createdAt)),
    );
    expect(Date.now() - waiting.createdAt).toBeGreaterThan(CRD_WAIT_S * 1000 - 2_000);
    expect(failed.terminalMessage).toContain(`CRD gadgets.${widgets.group} does not exist`);
    // The provider's operator reads why on the request itself (kubectl describe), as a Warning Event of the backend.
    const selector = encodeURIComponent(`involvedObject.kind=APIServiceExportRequest,involvedObject.name=${waiting.name}`);
    const event = await eventually('the Warning Event on the request', async () => {
      const r = await s.kube.request('GET', `/api/v1/namespaces/${waiting.flow.namespace}/events?fieldSelector=${selector}`);
      return (r.body.items as { type: string; reason: string; message: string; source?: { component?: string } }[] | undefined)?.[0];
    });
    expect(event).toMatchObject({ type: 'Warning', reason: 'CRDNotFound', source: { component: 'klutch-bind-backend' } });
    expect(event.message).toBe(failed.terminalMessage);
  }, 90_000);
});
