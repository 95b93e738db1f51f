/**
 * What suites of the `cluster` project use: the shared control planes started by test/support/cluster.setup.ts,
 * and a fresh namespace per test.
 *
 * Files of the project run in several workers at once (vitest.config.ts). Each worker leases a slot for its life
 * (cluster-slots.ts) and has clusters `a` and `b` of that slot (`a<slot>`, `b<slot>` in the run), so files that run
 * at the same time never share a cluster, and a file sees exactly `a` and `b`, as if it ran alone. `a` of every slot
 * starts with the run (in the background while the unit project runs); `b`, which fewer than half the files use,
 * starts when a file of the worker first asks for it (`cluster('b')`): an idle API server is not free
 * (docs/decisions/test-control-planes.md).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { inject, onTestFinished } from 'vitest';
import type { ClusterInfo, TokenUser } from '../../harness/cluster/control-plane';
import { type Lease, leaseSlot } from './cluster-slots';
import { type Kube, kubeFor } from '../../harness/cluster/kube';
import { sleep } from '../../lib/abort';

/** The clusters every run starts: two, so tests can check that they are apart (bind backend and konnector need two). */
export const CLUSTERS = ['a', 'b'] as const;
export type ClusterName = (typeof CLUSTERS)[number];
/** The clusters of each slot started with the run; the others start when a file first asks (`cluster(name)`). */
export const EAGER_CLUSTERS: readonly ClusterName[] = ['a'];
/** The question a worker asks on its lease for a cluster of its slot that is not started yet (cluster.setup.ts). */
export const START_QUESTION = 'cluster';

/** Static-token users on every cluster. RBAC grants them nothing: a test binds what it needs in its own namespace. */
export const IDENTITIES: readonly TokenUser[] = [
  { name: 'developer', groups: ['klutch-kit:developers'] },
  { name: 'operator', groups: ['klutch-kit:operators'] },
];

export type ControlPlaneState = { clusters: Record<string, ClusterInfo>; runDir: string } | { error: string };

/** How long a suite waits for the control planes: a first run builds Kubernetes from source. */
const START_TIMEOUT_MS = 40 * 60_000;
/** How long a worker waits for a slot: only as long as a finished worker takes to exit. */
const SLOT_TIMEOUT_MS = 5 * 60_000;

interface WorkerState {
  /** The slot's clusters that are up: the eager ones, and each other one once asked for. */
  readonly clusters: Record<string, ClusterInfo>;
  readonly runDir: string;
  readonly lease: Lease;
}
let state: Promise<WorkerState> | undefined;
const starting = new Map<string, Promise<ClusterInfo>>();

/** The name in the run of cluster `name` of a slot (`a` in slot 3 is `a3`). */
export function runClusterName(name: string, slot: string): string {
  return `${name}${slot}`;
}

/**
 * The running control planes of this worker: `clusters` has `a`, and `b` once a file of this worker asked for it
 * (`cluster('b')`). Waits for the global setup to bring them up.
 */
export function controlPlanes(): Promise<WorkerState> {
  state ??= (async () => {
    const file = inject('controlPlaneState');
    if (!file) throw new Error('no control planes: this suite runs in the vitest project `cluster` (vitest.config.ts)');
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!existsSync(file)) {
      if (Date.now() > deadline) throw new Error(`the control planes did not start within ${START_TIMEOUT_MS / 60_000} minutes`);
      await sleep(250);
    }
    const s = JSON.parse(readFileSync(file, 'utf8')) as ControlPlaneState;
    if ('error' in s) throw new Error(`the control planes failed to start:\n${s.error}`);
    const lease = await leaseSlot(inject('clusterSlots'), SLOT_TIMEOUT_MS);
    const slot = String(lease.slot);
    const mine = Object.fromEntries(
      EAGER_CLUSTERS.map((n) => {
        const c = s.clusters[runClusterName(n, slot)];
        if (!c)
          throw new Error(`no cluster ${runClusterName(n, slot)} for slot ${slot}; the run has ${Object.keys(s.clusters).join(', ')}`);
        return [n, c];
      }),
    );
    return { clusters: mine, runDir: s.runDir, lease };
  })();
  return state;
}

/** One cluster of this worker's slot; the first call for a cluster that is not started yet starts it. */
export async function cluster(name: ClusterName = 'a'): Promise<ClusterInfo> {
  const s = await controlPlanes();
  const up = s.clusters[name];
  if (up) return up;
  if (!CLUSTERS.includes(name)) throw new Error(`no cluster "${name}": the clusters of a slot are ${CLUSTERS.join(', ')}`);
  let p = starting.get(name);
  if (!p) {
    p = s.lease.ask(`${START_QUESTION} ${name}`).then(
      (answer) => (s.clusters[name] = JSON.parse(answer) as ClusterInfo),
      (e: Error) => {
        throw new Error(`cluster ${name} of slot ${s.lease.slot} did not start: ${e.message}`);
      },
    );
    starting.set(name, p);
  }
  return p;
}

/** The admin client of a cluster. */
export async function admin(name: ClusterName = 'a'): Promise<Kube> {
  return kubeFor(await cluster(name));
}

/**
 * Creates a namespace for the current test (named after `prefix` plus a random suffix) and deletes it when the test
 * finishes, so tests on a shared cluster never see each other's objects.
 */
export async function testNamespace(kube: Kube, prefix = 't'): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString('hex')}`;
  await kube.core.createNamespace({ body: { metadata: { name, labels: { 'klutch-kit.test/namespace': 'true' } } } });
  onTestFinished(async () => {
    // Not awaited to completion: the namespace controller finishes the deletion in the background.
    await kube.core.deleteNamespace({ name }).catch(() => undefined);
  });
  return name;
}
