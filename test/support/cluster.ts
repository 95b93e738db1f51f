/**
 * What suites of the `cluster` project use: the shared control planes started by test/support/cluster.setup.ts,
 * and a fresh namespace per test.
 *
 * Files of the project run in several workers at once (vitest.config.ts). Each worker leases a slot for its life
 * (cluster-slots.ts) and has clusters `a` and `b` of that slot (`a<slot>`, `b<slot>` in the run), so files that run
 * at the same time never share a cluster, and a file sees exactly `a` and `b`, as if it ran alone.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { inject, onTestFinished } from 'vitest';
import type { ClusterInfo, Identity } from './control-plane';
import { leaseSlot } from './cluster-slots';
import { type Kube, kubeFor } from './kube';

/** The clusters every run starts: two, so tests can check that they are apart (bind backend and konnector need two). */
export const CLUSTERS = ['a', 'b'] as const;
export type ClusterName = (typeof CLUSTERS)[number];

/** Static-token users on every cluster. RBAC grants them nothing: a test binds what it needs in its own namespace. */
export const IDENTITIES: readonly Identity[] = [
  { name: 'developer', groups: ['klutch-kit:developers'] },
  { name: 'operator', groups: ['klutch-kit:operators'] },
];

export type ControlPlaneState = { clusters: Record<string, ClusterInfo>; runDir: string } | { error: string };

/** How long a suite waits for the control planes: a first run builds Kubernetes from source. */
const START_TIMEOUT_MS = 40 * 60_000;
/** How long a worker waits for a slot: only as long as a finished worker takes to exit. */
const SLOT_TIMEOUT_MS = 5 * 60_000;

let state: Promise<{ clusters: Record<string, ClusterInfo>; runDir: string }> | undefined;

/** The name in the run of cluster `name` of a slot (`a` in slot 3 is `a3`). */
export function runClusterName(name: string, slot: string): string {
  return `${name}${slot}`;
}

/** The running control planes of this worker (`a`, `b`); waits for the global setup to bring them up. */
export function controlPlanes(): Promise<{ clusters: Record<string, ClusterInfo>; runDir: string }> {
  state ??= (async () => {
    const file = inject('controlPlaneState');
    if (!file) throw new Error('no control planes: this suite runs in the vitest project `cluster` (vitest.config.ts)');
    const deadline = Date.now() + START_TIMEOUT_MS;
    while (!existsSync(file)) {
      if (Date.now() > deadline) throw new Error(`the control planes did not start within ${START_TIMEOUT_MS / 60_000} minutes`);
      await new Promise((r) => setTimeout(r, 250));
    }
    const s = JSON.parse(readFileSync(file, 'utf8')) as ControlPlaneState;
    if ('error' in s) throw new Error(`the control planes failed to start:\n${s.error}`);
    const slot = String((await leaseSlot(inject('clusterSlots'), SLOT_TIMEOUT_MS)).slot);
    const mine = Object.fromEntries(
      CLUSTERS.map((n) => {
        const c = s.clusters[runClusterName(n, slot)];
        if (!c)
          throw new Error(`no cluster ${runClusterName(n, slot)} for slot ${slot}; the run has ${Object.keys(s.clusters).join(', ')}`);
        return [n, c];
      }),
    );
    return { clusters: mine, runDir: s.runDir };
  })();
  return state;
}

/** One cluster of the running control planes. */
export async function cluster(name: ClusterName = 'a'): Promise<ClusterInfo> {
  const c = (await controlPlanes()).clusters[name];
  if (!c) throw new Error(`no cluster "${name}" is running`);
  return c;
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
