/**
 * What each API request of a first bind costs, measured alone (`node scripts/run-ts.mjs bench/backend/request-costs.ts`):
 * the where-does-it-go table behind docs/decisions/bind-flow-cost.md. On a control plane of its own, BENCH_N (default
 * 100) requests of each kind a first bind makes, in the bind's order and with its bodies (one new namespace per
 * request set), BENCH_PARALLEL (default 10) in flight, through the backend's own clients (backend/kube.ts). Per request:
 * the CPU of the control plane (kube-apiserver, etcd, controller-manager: what the request and its consequences cost,
 * the idle rate subtracted) and of this process (the client). Then the client's path alone: the same Secret create
 * through client-node and as a plain node:https request on the same keep-alive agent, and a request on a new TLS
 * connection (with and without session resumption) against one on a kept connection.
 *
 * The backend's informers are not running here, so the watch fan-out each write causes in a real backend (one event
 * per informer that watches the kind) is not in the API server's figures; the bench's flows count it.
 */
import https from 'node:https';
import tls from 'node:tls';
import { KubeConfig } from '@kubernetes/client-node';
import { BIND_API_VERSION, BindResources, bindObjects, CLUSTER_BINDING_NAME, Kinds, type ClusterBinding } from '../../exports/bind-api';
import { APPLY_PATCH, backendClients, MERGE_PATCH } from '../../backend/kube';
import { binderRoleBinding, BINDER } from '../../backend/provision/rbac';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { installBindCrds } from '../../harness/parts/bind-backend';
import { kubeFor } from '../../harness/cluster/kube';
import { ensureKubeBinary } from '../../harness/tools/kube';
import { sleep } from '../../lib/abort';
import { cpuSeconds } from '../measure';

const N = Number(process.env.BENCH_N ?? 100);
const PARALLEL = Number(process.env.BENCH_PARALLEL ?? 10);

const cp = await startControlPlanes({ clusters: ['costs'], binary: await ensureKubeBinary(), log: () => undefined });
const cluster = cp.clusters.costs!;
const kc = new KubeConfig();
kc.loadFromFile(cluster.kubeconfig);
const c = backendClients(kc);
const serverCpuMs = () => cp.pids.reduce((s, p) => s + cpuSeconds(p) * 1000, 0);
const clientCpuMs = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** Runs `f(i)` for i < N, PARALLEL at a time. */
async function pooled(f: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: PARALLEL }, async () => {
      while (next < N) await f(next++);
    }),
  );
}

interface Cost {
  readonly what: string;
  readonly serverMs: number;
  readonly clientMs: number;
}
const costs: Cost[] = [];
let idlePerMs = 0;

/** N requests of one kind: CPU per request of the control plane (until it settled: 1.5 s, idle rate subtracted) and of this process. */
async function measure(what: string, f: (i: number) => Promise<unknown>): Promise<void> {
  const s0 = serverCpuMs();
  const c0 = clientCpuMs();
  const t0 = performance.now();
  await pooled(f);
  const c1 = clientCpuMs();
  await sleep(1500);
  const elapsed = performance.now() - t0;
  costs.push({ what, serverMs: (serverCpuMs() - s0 - idlePerMs * elapsed) / N, clientMs: (c1 - c0) / N });
}

try {
  await installBindCrds(kubeFor(cluster));
  await sleep(3000); // the CRDs established, the controller-manager's start settled
  const s = serverCpuMs();
  await sleep(5000);
  idlePerMs = (serverCpuMs() - s) / 5000;

  const run = Math.random().toString(36).slice(2, 7);
  const ns = (i: number) => `cost-${run}-${i}`;
  const labels = { 'app.kubernetes.io/managed-by': 'klutch-kit-bench' };
  const secretUid: string[] = [];
  await measure('POST namespaces (+ controller-manager: default ServiceAccount, kube-root-ca.crt)', (i) =>
    c.core.createNamespace({ body: { metadata: { name: ns(i), labels } } }),
  );
  await measure(`LIST namespaces (by a label one of ${N} has, as a bind lists its subject's)`, (i) =>
    c.core.listNamespace({ labelSelector: `kubernetes.io/metadata.name=${ns(i)}` }),
  );
  await measure('POST serviceaccounts', (i) =>
    c.core.createNamespacedServiceAccount({ namespace: ns(i), body: { metadata: { name: BINDER, namespace: ns(i), labels } } }),
  );
  await measure('POST rolebindings', (i) =>
    c.rbac.createNamespacedRoleBinding({ namespace: ns(i), body: binderRoleBinding(ns(i), ns(i), BINDER) }),
  );
  const clusterBindings = bindObjects<ClusterBinding>(c.custom, BindResources.clusterBindings);
  await measure('POST clusterbindings (a custom resource)', (i) =>
    clusterBindings.create({
      apiVersion: BIND_API_VERSION,
      kind: Kinds.ClusterBinding,
      metadata: { name: CLUSTER_BINDING_NAME, namespace: ns(i), labels },
      spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'bench' },
    }),
  );
  const quota = (i: number) => ({
    apiVersion: 'v1',
    kind: 'ResourceQuota',
    metadata: { name: BINDER, namespace: ns(i), labels },
    spec: { hard: { 'count/apiservicenamespaces.kube-bind.io': '10', 'count/apiserviceexportrequests.kube-bind.io': '10' } },
  });
  await measure('APPLY_PATCH resourcequotas (server-side apply)', (i) =>
    c.core.patchNamespacedResourceQuota(
      { name: BINDER, namespace: ns(i), fieldManager: 'bench', force: true, body: quota(i) },
      APPLY_PATCH,
    ),
  );
  await measure('PATCH resourcequotas/status (merge)', (i) =>
    c.core.patchNamespacedResourceQuotaStatus(
      {
        name: BINDER,
        namespace: ns(i),
        body: {
          status: {
            hard: quota(i).spec.hard,
            used: { 'count/apiservicenamespaces.kube-bind.io': '0', 'count/apiserviceexportrequests.kube-bind.io': '0' },
          },
        },
      },
      MERGE_PATCH,
    ),
  );
  await measure('POST secrets', async (i) => {
    const made = await c.core.createNamespacedSecret({
      namespace: ns(i),
      body: { metadata: { name: 'kubeconfig', namespace: ns(i), labels }, type: 'Opaque' },
    });
    secretUid[i] = made.metadata!.uid!;
  });
  const token = (i: number) =>
    c.core.createNamespacedServiceAccountToken({
      name: BINDER,
      namespace: ns(i),
      body: {
        spec: {
          audiences: [],
          expirationSeconds: 3600,
          boundObjectRef: { apiVersion: 'v1', kind: 'Secret', name: 'kubeconfig', uid: secretUid[i] },
        },
      },
    });
  await measure('POST serviceaccounts/token (bound to the Secret)', token);
  await measure('PUT secrets (the kubeconfig, ~2 KiB)', async (i) => {
    const s = await c.core.readNamespacedSecret({ name: 'kubeconfig', namespace: ns(i) });
    return c.core.replaceNamespacedSecret({
      name: 'kubeconfig',
      namespace: ns(i),
      body: { ...s, data: { kubeconfig: Buffer.from('x'.repeat(1500)).toString('base64') } },
    });
  });
  // The PUT above includes its read: the read alone, to subtract.
  await measure('GET secrets (subtracted from the PUT)', (i) => c.core.readNamespacedSecret({ name: 'kubeconfig', namespace: ns(i) }));
  await measure('PATCH clusterbindings/status (merge: first conditions)', (i) =>
    clusterBindings.patchStatus(
      { namespace: ns(i), name: CLUSTER_BINDING_NAME },
      {
        conditions: [
          { type: 'Ready', status: 'False', reason: 'FirstHeartbeatPending', message: 'x', lastTransitionTime: new Date().toISOString() },
        ],
      },
    ),
  );

  // The client's path: client-node against a plain node:https request with the same token, CA and a keep-alive agent.
  const agent = new https.Agent({ keepAlive: true, maxSockets: 32, ca: cluster.ca });
  const plain = (method: string, path: string, body?: unknown, a: https.Agent = agent) =>
    new Promise<number>((resolve, reject) => {
      const data = body === undefined ? undefined : JSON.stringify(body);
      const req = https.request(
        `${cluster.server}${path}`,
        {
          method,
          agent: a,
          headers: {
            authorization: `Bearer ${cluster.tokens.admin}`,
            accept: 'application/json',
            ...(data ? { 'content-type': 'application/json' } : {}),
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (ch: Buffer) => chunks.push(ch));
          res.on('end', () => {
            JSON.parse(Buffer.concat(chunks).toString());
            resolve(res.statusCode ?? 0);
          });
        },
      );
      req.on('error', reject);
      req.end(data);
    });
  await measure('client path: POST secrets through client-node', (i) =>
    c.core.createNamespacedSecret({ namespace: ns(i), body: { metadata: { name: 'a', namespace: ns(i) }, type: 'Opaque' } }),
  );
  await measure('client path: POST secrets as a plain node:https request', (i) =>
    plain('POST', `/api/v1/namespaces/${ns(i)}/secrets`, { metadata: { name: 'b', namespace: ns(i) }, type: 'Opaque' }),
  );
  await measure('client path: GET a Secret, kept connection (plain)', (i) => plain('GET', `/api/v1/namespaces/${ns(i)}/secrets/b`));
  const fresh = () => new https.Agent({ keepAlive: false, ca: cluster.ca, maxCachedSessions: 0 });
  await measure('client path: GET a Secret, new TLS connection, full handshake', (i) =>
    plain('GET', `/api/v1/namespaces/${ns(i)}/secrets/b`, undefined, fresh()),
  );
  const resuming = new https.Agent({ keepAlive: false, ca: cluster.ca });
  await plain('GET', '/version', undefined, resuming);
  await measure('client path: GET a Secret, new TLS connection, session resumed', (i) =>
    plain('GET', `/api/v1/namespaces/${ns(i)}/secrets/b`, undefined, resuming),
  );
  // What controller/clients.ts does since: one TLS context for all of an agent's connections.
  const shared = new https.Agent({ keepAlive: false, secureContext: tls.createSecureContext({ ca: cluster.ca }) });
  await plain('GET', '/version', undefined, shared);
  await measure('client path: GET a Secret, new TLS connection, session resumed, one TLS context', (i) =>
    plain('GET', `/api/v1/namespaces/${ns(i)}/secrets/b`, undefined, shared),
  );
  agent.destroy();
  resuming.destroy();
  shared.destroy();
} finally {
  await cp.stop();
}

console.log(
  `\nCPU per request, ${N} of each kind (${PARALLEL} in flight), control plane idle rate ${(idlePerMs * 1000).toFixed(0)} ms/s subtracted`,
);
console.log(`${'request'.padEnd(84)} ${'API server+etcd ms'.padStart(18)} ${'client ms'.padStart(10)}`);
for (const k of costs) console.log(`${k.what.padEnd(84)} ${k.serverMs.toFixed(2).padStart(18)} ${k.clientMs.toFixed(2).padStart(10)}`);
