/**
 * NetworkPolicies hold on the Pod platform (issue 34 items 2, 5 and 10): its nodes run kube-network-policies
 * (harness/node/network-policies.ts), so the fences we ship are tested with real connections between Pods, not read
 * off the objects. First the enforcement itself (a connection admitted before a policy and dropped after it), then the
 * fence of a binding root namespace as the AppClusterBinding controller writes it, then the composition function's,
 * then the monitoring Component's scrape policies (issue 38): a Pod of the monitoring namespace GETs /metrics. The
 * cnpg instances' policy is tested in cnpg.test.ts, on a real instance.
 */
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AppClusterBinding } from '../../exports/bind-api';
import { rootNetworkPolicy } from '../../backend/app-cluster-binding/app-cluster-binding.objects';
import { applyAt, getObject, type Kube, requireOk, type WireObject } from '../../harness/cluster/kube';
import type { AttachedNode } from '../../harness/node/attach';
import { KONNECTOR_PROBE_PORT } from '../../lib/konnector-runtime';
import { FUNCTION_GRPC_PORT, FUNCTION_METRICS_PORT } from '../../functions/dataservices/deploy/function-runtime';
import { BACKEND_PROBE_PORT } from '../../backend/deploy/bind-backend';
import { CROSSPLANE_NAMESPACE } from '../../synth/synth';
import { holdV1, podControlPlane, podPlatform } from '../support/platform/pod-platform';
import { testNamespace } from '../support/cluster';
import { listener, type PodNode, reaches, type Target } from '../support/reach';

let kube: Kube;
let node: AttachedNode;
let apiPort: number;

const policy = (ns: string, name: string, spec: WireObject) =>
  applyAt(kube, `/apis/networking.k8s.io/v1/namespaces/${ns}/networkpolicies/${name}`, {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name, namespace: ns },
    spec,
  });

let release: (() => void) | undefined;

beforeAll(async () => {
  // The Pods probed here (the function's among them) must not be replaced by the package move meanwhile.
  release = await holdV1('test/cluster/network-policies.test.ts');
  const platform = await podControlPlane();
  kube = platform.control;
  node = platform.node;
  // Where the `kubernetes` Service leads inside the node (harness/node/endpoints.ts writes its EndpointSlice).
  const slice = await requireOk(kube, 'GET', '/apis/discovery.k8s.io/v1/namespaces/default/endpointslices/kubernetes-node');
  apiPort = slice.ports[0].port as number;
}, 40 * 60_000);

afterAll(() => release?.());

describe('the nodes enforce NetworkPolicies', () => {
  it('a connection admitted before a policy isolates its Pod is dropped after, unless a rule of the policy admits it', async () => {
    const [target, friend, stranger] = [
      await testNamespace(kube, 'np-target'),
      await testNamespace(kube, 'np-friend'),
      await testNamespace(kube, 'np-stranger'),
    ];
    const ip = await listener(kube, node, target, 'server', [8080, 9090]);
    const both = { http: { host: ip, port: 8080 }, other: { host: ip, port: 9090 } };
    // No policy selects the server yet: everything reaches it (the probe sees an open port as open).
    expect(await reaches(kube, node, stranger, 'before', both)).toEqual({ http: true, other: true });
    await policy(target, 'server', {
      podSelector: { matchLabels: { app: 'server' } },
      policyTypes: ['Ingress'],
      ingress: [
        {
          from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': friend } } }],
          ports: [{ protocol: 'TCP', port: 8080 }],
        },
      ],
    });
    // The agent syncs on the policy's event; the first probe may race it, so it is repeated until it holds.
    await expectEventually(() => reaches(kube, node, stranger, 'after', both), { http: false, other: false });
    expect(await reaches(kube, node, friend, 'friend', both)).toEqual({ http: true, other: false });
  }, 240_000);
});

describe('the fence of a binding root namespace (the AppClusterBinding controller writes it)', () => {
  it("attack: a Pod there (a konnector running an override's code) reaches DNS and the API server, no tenant's database; into it only the monitoring namespace's scrapes", async () => {
    const [root, tenant, otherRoot, monitoring] = [
      await testNamespace(kube, 'klutch-bind-np'),
      await testNamespace(kube, 'cluster-np'),
      await testNamespace(kube, 'klutch-bind-npo'),
      await testNamespace(kube, 'np-monitoring'),
    ];
    const acb: AppClusterBinding = {
      apiVersion: 'klutch.anynines.com/v1alpha1',
      kind: 'AppClusterBinding',
      metadata: { name: 'np', namespace: 'ops', uid: randomBytes(8).toString('hex') },
      spec: {
        kubeconfigSecretRef: { namespace: 'ops', name: 'np-kubeconfig', key: 'kubeconfig' },
        apiExports: [{ group: 'anynines.com', resource: 'postgresqlinstances' }],
        konnector: { deploy: true },
      },
    };
    const fence = rootNetworkPolicy(acb, root, [443, 6443, apiPort], monitoring);
    await applyAt(kube, `/apis/networking.k8s.io/v1/namespaces/${root}/networkpolicies/${fence.metadata!.name}`, fence);
    const database = await listener(kube, node, tenant, 'pg', [5432], { 'cnpg.io/cluster': 'pg' });
    const konnector = await listener(kube, node, root, 'konnector-np', [KONNECTOR_PROBE_PORT]);
    const out = {
      api: { host: 'kubernetes.default.svc.cluster.local', port: 443 },
      database: { host: database, port: 5432 },
    };
    await expectEventually(() => reaches(kube, node, root, 'override', out), { api: true, database: false });
    const probe = { konnector: { host: konnector, port: KONNECTOR_PROBE_PORT } };
    expect({
      tenant: (await reaches(kube, node, tenant, 'scrape', probe)).konnector,
      otherRoot: (await reaches(kube, node, otherRoot, 'scrape', probe)).konnector,
      monitoring: (await reaches(kube, node, monitoring, 'scrape', probe)).konnector,
    }).toEqual({ tenant: false, otherRoot: false, monitoring: true });
  }, 300_000);
});

describe("the composition function's fence (it reads every tenant's claims)", () => {
  it("attack: a Pod of another namespace reaches neither the function's gRPC port nor its metrics", async () => {
    const stranger = await testNamespace(kube, 'np-fn');
    const pods = (await requireOk(kube, 'GET', `/api/v1/namespaces/${CROSSPLANE_NAMESPACE}/pods`)).items as WireObject[];
    const fn = pods.find((p) => p.metadata.labels?.['pkg.crossplane.io/function'] && p.status?.podIP);
    expect(fn, 'the function Pod runs').toBeDefined();
    const fnPolicy = await getObject(
      kube,
      `/apis/networking.k8s.io/v1/namespaces/${CROSSPLANE_NAMESPACE}/networkpolicies/${fn!.metadata.labels['pkg.crossplane.io/function']}`,
    );
    expect(fnPolicy, 'the shipped NetworkPolicy of the function').toBeDefined();
    const ip = fn!.status.podIP as string;
    expect(
      await reaches(kube, node, stranger, 'caller', {
        grpc: { host: ip, port: FUNCTION_GRPC_PORT },
        metrics: { host: ip, port: FUNCTION_METRICS_PORT },
      }),
    ).toEqual({
      grpc: false,
      metrics: false,
    });
  }, 180_000);
});

describe('the monitoring Components (dist/control-plane/monitoring, dist/app-cluster/monitoring)', () => {
  /** A running Pod's address in `ns` by label selector (presence alone: `key`). */
  const ipOf = async (k: Kube, ns: string, selector: string) => {
    const pods = (await requireOk(k, 'GET', `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(selector)}`))
      .items as WireObject[];
    const running = pods.find((p) => p.status?.phase === 'Running' && p.status.podIP);
    expect(running, `a running Pod ${ns} ${selector}`).toBeDefined();
    return running!.status.podIP as string;
  };

  /**
   * A Pod of `monitoring` GETs each target's /metrics only once the Component's NetworkPolicies (read from `dir` as
   * synth wrote them) are applied; a Pod of another namespace never does. Removes the policies and namespaces after.
   */
  async function scrapedOnlyFromMonitoring(k: Kube, n: PodNode, dir: string, targets: Record<string, Target>): Promise<string[]> {
    const policies = readdirSync(dir)
      .filter((f) => f.startsWith('networkpolicy-'))
      .map((f) => parse(readFileSync(join(dir, f), 'utf8')) as WireObject);
    const path = (p: WireObject) => `/apis/networking.k8s.io/v1/namespaces/${p.metadata.namespace}/networkpolicies/${p.metadata.name}`;
    const none = Object.fromEntries(Object.keys(targets).map((t) => [t, false]));
    const all = Object.fromEntries(Object.keys(targets).map((t) => [t, true]));
    const stranger = await testNamespace(k, 'np-scrape');
    const made: string[] = [];
    if ((await k.request('GET', '/api/v1/namespaces/monitoring')).code !== 200) {
      await requireOk(k, 'POST', '/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'monitoring' } });
      made.push('monitoring');
    }
    try {
      // Without the Component the ports are shut to Prometheus too (the bundle's own policies).
      expect(await reaches(k, n, 'monitoring', 'prometheus', targets)).toEqual(none);
      for (const p of policies) await applyAt(k, path(p), p);
      await expectEventually(() => reaches(k, n, 'monitoring', 'prometheus', targets), all);
      expect(await reaches(k, n, stranger, 'prometheus', targets)).toEqual(none);
    } finally {
      for (const p of policies) await k.request('DELETE', path(p));
      await Promise.all(made.map((ns) => k.request('DELETE', `/api/v1/namespaces/${ns}`)));
    }
    return policies.map((p) => p.metadata.name as string).sort();
  }

  it("control plane: lets the monitoring namespace, and no other, scrape the backend's and the function's /metrics", async () => {
    const { synthDir } = await podControlPlane();
    const targets = {
      backend: {
        host: await ipOf(kube, 'klutch-bind-backend', 'app.kubernetes.io/name=klutch-bind-backend'),
        port: BACKEND_PROBE_PORT,
        http: '/metrics',
      },
      function: {
        host: await ipOf(kube, CROSSPLANE_NAMESPACE, 'pkg.crossplane.io/function'),
        port: FUNCTION_METRICS_PORT,
        http: '/metrics',
      },
    };
    expect(await scrapedOnlyFromMonitoring(kube, node, join(synthDir, 'control-plane', 'monitoring'), targets)).toEqual([
      'scrape-klutch-bind-backend',
      'scrape-klutch-kit-function-dataservices',
    ]);
  }, 240_000);

  it("app cluster: lets the monitoring namespace, and no other, scrape the konnector's /metrics", async () => {
    const platform = await podPlatform();
    const targets = {
      konnector: {
        host: await ipOf(platform.app, 'klutch-bind', 'app.kubernetes.io/name=konnector'),
        port: KONNECTOR_PROBE_PORT,
        http: '/metrics',
      },
    };
    expect(
      await scrapedOnlyFromMonitoring(platform.app, platform.node.app, join(platform.synthDir, 'app-cluster', 'monitoring'), targets),
    ).toEqual(['scrape-konnector']);
  }, 240_000);
});

describe("the fences of the backend's and the konnector's namespaces (the install bundle's)", () => {
  /**
   * Code run as the Pod (a compromised backend or konnector: its labels, its namespace) reaches the API server through
   * DNS, and any address on the API servers' ports (a Pod's 6443 here: egress names ports, not addresses), but not a
   * database Pod's port; any other Pod of the namespace reaches neither Pod (default-deny). The API server and DNS
   * run on the node itself, whose own traffic this CNI does not judge (kube-network-policies queues forwarded
   * packets), so the other Pod is not asked for them. The probe is restricted (the namespaces enforce it) and never
   * Ready (the backend's Service selects the same labels).
   */
  async function fenced(k: Kube, n: PodNode, ns: string, deployment: string): Promise<Record<string, Record<string, boolean>>> {
    const d = await requireOk(k, 'GET', `/apis/apps/v1/namespaces/${ns}/deployments/${deployment}`);
    const labels = d.spec.selector.matchLabels as Record<string, string>;
    const tenant = await testNamespace(k, 'np-tenant');
    const [database, api] = [await listener(k, n, tenant, 'pg', [5432]), await listener(k, n, tenant, 'api', [6443])];
    const pods = { apiPort: { host: api, port: 6443 }, database: { host: database, port: 5432 } };
    return {
      pod: await reaches(k, n, ns, 'np-as-pod', { api: { host: 'kubernetes.default.svc.cluster.local', port: 443 }, ...pods }, labels, {
        restricted: true,
      }),
      other: await reaches(k, n, ns, 'np-other', pods, {}, { restricted: true }),
    };
  }

  const want = { pod: { api: true, apiPort: true, database: false }, other: { apiPort: false, database: false } };

  it("attack: code running as the backend reaches the API server, no tenant's database; another Pod there reaches no Pod", async () => {
    expect(await fenced(kube, node, 'klutch-bind-backend', 'klutch-bind-backend')).toEqual(want);
  }, 240_000);

  it("attack: code running as the konnector reaches the API server, no app's database; another Pod there reaches no Pod", async () => {
    const platform = await podPlatform();
    expect(await fenced(platform.app, platform.node.app, 'klutch-bind', 'konnector')).toEqual(want);
  }, 240_000);
});

/** `probe()` again, a few seconds apart, until it equals `want` (a policy takes effect once the agent has synced). */
async function expectEventually<T>(probe: () => Promise<T>, want: T, tries = 4): Promise<void> {
  let last: T | undefined;
  for (let i = 0; i < tries; i++) {
    last = await probe();
    if (JSON.stringify(last) === JSON.stringify(want)) return;
    await new Promise((r) => setTimeout(r, 2_000));
  }
  expect(last).toEqual(want);
}
