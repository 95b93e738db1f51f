/**
 * The backend as it is deployed, on control planes of its own (it starts without the bind CRDs): the synthesized
 * manifests applied to a real API server, two replicas running as the synthesized ServiceAccount (so its ClusterRole
 * is shown to be enough), an issuer that is down at start, leader election, requests served by either replica, and
 * cookie keys rotated while running. The leader's loss mid-bind, with the backend as Pods of the install bundle, is in
 * platform-pods.test.ts.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { render } from '../../synth/synth';
import {
  BACKEND_CLIENT,
  callbackUri,
  startLoadBalancer,
  type LoadBalancer,
  installBindCrds,
  installClaimApi,
  newKey,
  startBindBackend,
  startLoopbackCallback,
  type RunningBindBackend,
  type LoopbackCallback,
} from '../../harness/parts/bind-backend';
import { browserLogin } from '../../harness/parts/bind-flow';
import { loadCatalog, parseYaml } from '../../harness/crossplane/catalog';
import { controlPlanes } from '../support/cluster';
import { bearerKubeconfigYaml, startControlPlanes, type ControlPlanes } from '../../harness/cluster/control-plane';
import { eventually, kubeFor, kubeFromConfig, type Kube } from '../../harness/cluster/kube';
import { startOidcProvider, type OidcTestProvider } from '../../harness/login/oidc';
import { freePorts, probe } from '../../harness/cluster/processes';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { type Ca, createCa } from '../../harness/cluster/pki';
import { sleep } from '../../lib/abort';

const NS = 'klutch-bind-backend';
let cp: ControlPlanes;
let kube: Kube;
let idp: OidcTestProvider | undefined;
let idpPort: number;
let callback: LoopbackCallback;
/** The Service in front of the replicas. */
let service: LoadBalancer;
const replicas: RunningBindBackend[] = [];
let backendKubeconfig: string;
let dir: string;
let idpCa: Ca;
/** The export template of postgresqlinstances, as synth writes it: no bind rule. */
let template: { name: string; namespace: string };

beforeAll(async () => {
  await controlPlanes(); // the shared setup has built the binary by now
  cp = await startControlPlanes({ clusters: ['bkd'], binary: kubeBinaryPath(), log: () => undefined });
  kube = kubeFor(cp.clusters.bkd!);
  dir = cp.runDir;
  callback = await startLoopbackCallback();
}, 120_000);

afterAll(async () => {
  await Promise.all(replicas.map((r) => r.stop()));
  await idp?.stop();
  await callback?.close();
  await service?.close();
  await cp?.stop();
});

/** What synth writes, with test addresses. */
async function rendered(): Promise<Map<string, string>> {
  return render({
    apis: await loadCatalog(),
    outdir: 'unused',
    backend: {
      issuerUrl: 'https://issuer.example.com',
      clientId: 'klutch-bind',
      publicUrl: 'https://bind.example.com',
      externalAddress: cp.clusters.bkd!.server.replace('127.0.0.1', 'localhost'),
    },
  });
}

/** The synthesized backend manifests. */
async function manifests(): Promise<Record<string, unknown>[]> {
  return [...(await rendered())]
    .filter(([p]) => p.startsWith('control-plane/backend/') && p.endsWith('.yaml'))
    .flatMap(([, text]) => parseYaml(text));
}

/** A setting of the install bundle's backend (its settings.env, which the Deployment reads through a ConfigMap). */
async function bundleSetting(name: string): Promise<string> {
  const env = (await rendered()).get('control-plane/backend/settings.env') ?? '';
  const line = env.split('\n').find((l) => l.startsWith(`${name}=`));
  if (line === undefined) throw new Error(`the bundle's backend/settings.env has no ${name}:\n${env}`);
  return line.slice(name.length + 1);
}

const ready = async (r: RunningBindBackend) => probe(`${r.probeUrl}/readyz`);

describe('the synthesized backend on a real API server', () => {
  it('applies: Namespace, RBAC, Deployment, Service, NetworkPolicies and the admission policies are accepted as written', async () => {
    const objs = await manifests();
    expect(objs.map((o) => o.kind).sort()).toEqual([
      'ClusterRole',
      'ClusterRoleBinding',
      'Deployment',
      'Namespace',
      'NetworkPolicy',
      'NetworkPolicy',
      'Role',
      'RoleBinding',
      'Service',
      'ServiceAccount',
      // Its root namespaces, its containment (issue 34 item 6), the consumers' Secret types (item 10) and the
      // consumers' claims kept free of Crossplane's own fields.
      ...Array<string>(4).fill('ValidatingAdmissionPolicy'),
      ...Array<string>(4).fill('ValidatingAdmissionPolicyBinding'),
    ]);
    // Cluster-scoped first, so the namespaced objects have their namespace.
    const scoped = (o: Record<string, unknown>) => ((o.metadata as { namespace?: string }).namespace ? 1 : 0);
    for (const o of objs.sort((a, b) => scoped(a) - scoped(b))) {
      const m = o.metadata as { name: string; namespace?: string };
      const apiVersion = String(o.apiVersion);
      const base = apiVersion.includes('/') ? `/apis/${apiVersion}` : `/api/${apiVersion}`;
      const plural = String(o.kind).toLowerCase().replace(/y$/, 'ie') + 's';
      const path = `${base}${m.namespace ? `/namespaces/${m.namespace}` : ''}/${plural}/${m.name}?fieldManager=klutch-kit-tests&fieldValidation=Strict`;
      const r = await kube.request('PATCH', path, o, 'application/apply-patch+yaml');
      expect(r.code, `${o.kind}/${m.name}: ${JSON.stringify(r.body)}`).toBeLessThan(300);
    }
  });

  it('starts as the synthesized ServiceAccount without issuer and CRDs, says why it is not ready, and becomes ready when they come', async () => {
    const tr = await kube.core.createNamespacedServiceAccountToken({
      name: NS,
      namespace: NS,
      body: { spec: { audiences: [], expirationSeconds: 7200 } },
    });
    const c = cp.clusters.bkd!;
    backendKubeconfig = `${dir}/backend-sa.kubeconfig`;
    writeFileSync(backendKubeconfig, bearerKubeconfigYaml('bkd', c.server, c.ca, 'backend', tr.status!.token!));
    const [port, port2, servicePort] = (await freePorts(3)) as [number, number, number];
    service = await startLoadBalancer(() => replicas.filter((r) => r.proc.exited() === undefined).map((r) => r.url), servicePort);
    idpPort = (await freePorts(1))[0]!;
    const issuer = { issuer: `https://127.0.0.1:${idpPort}`, caFile: `${dir}/oidc-ca.crt` };
    // The provider is not running yet, but its CA exists: the backend trusts it from the start.
    idpCa = await createCa('backend-deploy OpenID provider CA');
    writeFileSync(issuer.caFile, idpCa.cert);
    const keys = `${newKey()}\n`;
    for (const [i, p] of [port, port2].entries()) {
      replicas.push(
        await startBindBackend({
          cluster: c,
          idp: issuer,
          port: p,
          namespace: NS,
          kubeconfig: backendKubeconfig,
          keys,
          waitReady: false,
          // Both replicas behind one Service, whose address is the public callback.
          args: [
            `--identity=replica-${i}`,
            `--oidc-callback-url=${callbackUri(servicePort)}`,
            '--namespace-prefix=tenant',
            // As the bundle sets it: no one binds an API the operator has not granted (issue 34 item 10).
            `--default-bind-policy=${await bundleSetting('BACKEND_DEFAULT_BIND_POLICY')}`,
          ],
        }),
      );
    }
    const notReady = await ready(replicas[0]!);
    expect(notReady.code).toBe(503);
    expect(notReady.body).toContain(`[-]issuer failed: the OpenID provider https://127.0.0.1:${idpPort} is not reachable yet`);
    expect(notReady.body).toContain('[-]crds failed: missing CRDs apiserviceexports.klutch.anynines.com');
    expect(notReady.body).toContain(
      "install the bind CRDs, the install bundle's crds/: kubectl apply --server-side -k <the bundle or your overlay> (https://",
    );
    const log = readFileSync(replicas[0]!.proc.logPath, 'utf8');
    expect(log).toContain('cannot read the OpenID provider discovery document; retrying');
    expect(replicas.every((r) => r.proc.exited() === undefined)).toBe(true);

    await installBindCrds(kube);
    await eventually(
      'the CRD check to pass',
      async () => ((await ready(replicas[0]!)).body.includes('[+]crds ok') ? true : undefined),
      45_000,
    );
    await kube.request('POST', '/api/v1/namespaces', { metadata: { name: 'templates' } });
    template = (await installClaimApi(kube, 'postgresqlinstances', 'templates')).template.metadata as { name: string; namespace: string };
    idp = await startOidcProvider({
      port: idpPort,
      ca: idpCa,
      logDir: `${dir}/oidc`,
      clients: [{ ...BACKEND_CLIENT, redirectUris: [callbackUri(servicePort)] }],
      users: [{ sub: 'alice' }, { sub: 'bob' }, { sub: 'carol' }],
    });
    for (const r of replicas) await eventually(`${r.url} ready`, async () => ((await ready(r)).code === 200 ? true : undefined), 45_000);
  }, 120_000);
});

describe('two replicas', () => {
  const leaseHolder = async () =>
    (await kube.request('GET', `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases/klutch-bind-backend`)).body.spec as
      { holderIdentity?: string } | undefined;

  it('serve one login across both (stateless HTTP) and bind with the synthesized RBAC; the leader exports', async () => {
    // Every request through the Service, which alternates between the replicas: each step lands on another one.
    const flow = await browserLogin({ backend: service, idp: idp!, callback, user: 'alice' });
    expect(flow.page.status).toBe(200);
    const bind = () => flow.browser.get(`${service.url}/bind?s=${flow.sid}&resource=postgresqlinstances&group=anynines.com`);
    // The bundle binds nothing the operator has not granted (--default-bind-policy=deny-all): refused, saying how to
    // grant it; once the template names alice, either replica binds.
    const refused = await bind();
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('--default-bind-policy=deny-all');
    await kube.request(
      'PATCH',
      `/apis/example-backend.klutch.anynines.com/v1alpha1/namespaces/${template.namespace}/apiserviceexporttemplates/${template.name}`,
      { metadata: { annotations: { 'klutch-kit.anynines.com/bind-allowed-subjects': 'alice' } } },
      'application/merge-patch+json',
    );
    const bound = await eventually('alice granted', async () => {
      const r = await bind();
      return r.status === 200 ? r : undefined;
    });
    expect([...service.served.keys()].sort()).toEqual(replicas.map((r) => r.url).sort());
    const response = JSON.parse(Buffer.from(new URL(bound.url).searchParams.get('response')!, 'base64').toString()) as {
      kubeconfig: string;
      requests: { metadata: { name: string } }[];
    };
    const kubeconfig = Buffer.from(response.kubeconfig, 'base64').toString();
    const consumer = kubeFromConfig(kubeconfig);
    const ns = /namespace: (\S+)/.exec(kubeconfig)![1]!;
    expect(ns.startsWith('tenant-')).toBe(true);
    await consumer.request('POST', `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiserviceexportrequests`, response.requests[0]);
    await eventually('the export', async () => {
      const r = await consumer.request(
        'GET',
        `/apis/klutch.anynines.com/v1alpha1/namespaces/${ns}/apiserviceexports/postgresqlinstances.anynines.com`,
      );
      return r.code === 200 ? true : undefined;
    });
    expect(['replica-0', 'replica-1']).toContain((await leaseHolder())?.holderIdentity);
    const metrics = await Promise.all(replicas.map(async (r) => (await fetch(`${r.probeUrl}/metrics`)).text()));
    expect(metrics.filter((m) => /^klutch_backend_binds_total\{result="ok"\} 1$/m.test(m))).toHaveLength(1);
    expect(metrics.join('\n')).toMatch(/^controller_runtime_reconcile_total\{controller="exportrequests",result="[a-z_]+"\} \d+$/m);
    // Exactly one replica says it leads.
    expect(metrics.map((m) => /^leader_election_master_status\{name="klutch-bind-backend"\} (\d)$/m.exec(m)?.[1]).sort()).toEqual([
      '0',
      '1',
    ]);
  });

  it('rotate cookie keys while running: a new first key seals, the old still opens until it is removed', async () => {
    const r = replicas[0]!;
    const old = readFileSync(r.keysFile, 'utf8').trim();
    const { browser, sid } = await browserLogin({ backend: r, idp: idp!, callback, user: 'carol' });
    const resources = `${r.url}/resources?s=${sid}`;
    expect((await browser.get(resources)).status).toBe(200);
    // Every replica reads the same keys (one Secret in the Deployment): the login's callback comes through the
    // Service, to either replica.
    const keysOf = (text: string) => replicas.forEach((x) => writeFileSync(x.keysFile, text));
    keysOf(`${newKey()}\n${old}\n`);
    await sleep(1500); // the backend re-reads the file at most once a second
    expect((await browser.get(resources)).status).toBe(200);
    const fresh = await browserLogin({ backend: r, idp: idp!, callback, user: 'carol' });
    keysOf(`${readFileSync(r.keysFile, 'utf8').split('\n')[0]}\n`);
    await sleep(1500);
    expect((await browser.get(resources)).status).toBe(401); // sealed with the removed key
    expect((await fresh.browser.get(`${r.url}/resources?s=${fresh.sid}`)).status).toBe(200);
  });

  it('stop gracefully on SIGTERM, releasing the Lease', async () => {
    const r = replicas[0]!;
    await r.proc.stop(20_000);
    expect(r.proc.exited()).toBe('code 0');
    expect(readFileSync(r.proc.logPath, 'utf8')).toContain('"msg":"stopped"');
    replicas.splice(0, 1);
  });
});
