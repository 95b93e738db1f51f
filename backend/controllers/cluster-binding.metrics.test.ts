import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { BIND_API_VERSION, type ClusterBinding } from '../../exports/bind-api';
import { clusterBindingHealth } from './cluster-binding.metrics';

const now = Date.parse('2026-01-01T12:00:00Z');
const at = (s: number) => new Date(now + s * 1000).toISOString();

function binding(namespace: string, status?: ClusterBinding['status'], deleting = false): ClusterBinding {
  return {
    apiVersion: BIND_API_VERSION,
    kind: 'ClusterBinding',
    metadata: { name: 'cluster', namespace, ...(deleting ? { deletionTimestamp: at(-1) } : {}) },
    spec: {} as ClusterBinding['spec'],
    ...(status ? { status } : {}),
  } as ClusterBinding;
}

/** The gauge's lines as /metrics shows them. */
async function lines(registry: Registry): Promise<string[]> {
  return (await registry.metrics()).split('\n').filter((l) => l.startsWith('klutch_cluster_binding_healthy{'));
}

describe('klutch_cluster_binding_healthy', () => {
  it("says each consumer's heartbeat verdict at scrape time, and the reason when it is late", async () => {
    const registry = new Registry();
    let clock = now;
    const g = clusterBindingHealth(registry, () => clock);
    const bindings = [
      binding('klutch-bind-a', { lastHeartbeatTime: at(-60), heartbeatInterval: '5m0s' }),
      binding('klutch-bind-b'),
      binding('klutch-bind-gone', { lastHeartbeatTime: at(-60), heartbeatInterval: '5m0s' }, true),
    ];
    g.observe(() => bindings);
    expect(await lines(registry)).toEqual([
      'klutch_cluster_binding_healthy{cluster_namespace="klutch-bind-a",reason=""} 1',
      'klutch_cluster_binding_healthy{cluster_namespace="klutch-bind-b",reason="FirstHeartbeatPending"} 0',
    ]);
    // Eleven minutes on, with no new heartbeat: more than twice the interval, without any reconcile in between.
    clock = now + 11 * 60_000;
    expect(await lines(registry)).toContain(
      'klutch_cluster_binding_healthy{cluster_namespace="klutch-bind-a",reason="HeartbeatTimeout"} 0',
    );
  });

  it('names a consumer whose credentials were revoked for silence as such, not as a timeout', async () => {
    const registry = new Registry();
    const g = clusterBindingHealth(registry, () => now);
    const revoked = binding('klutch-bind-a', {
      lastHeartbeatTime: at(-86_400 * 40),
      heartbeatInterval: '5m0s',
      conditions: [{ type: 'CredentialsRevoked', status: 'True', reason: 'Abandoned', message: '', lastTransitionTime: at(-1) }],
    });
    g.observe(() => [revoked]);
    expect(await lines(registry)).toEqual([
      'klutch_cluster_binding_healthy{cluster_namespace="klutch-bind-a",reason="CredentialsRevoked"} 0',
    ]);
  });

  it('exports nothing once the replica no longer leads, so a stale verdict never outlives the lead', async () => {
    const registry = new Registry();
    const g = clusterBindingHealth(registry, () => now);
    g.observe(() => [binding('klutch-bind-a', { lastHeartbeatTime: at(-60), heartbeatInterval: '5m0s' })]);
    expect(await lines(registry)).toHaveLength(1);
    g.observe(undefined);
    expect(await lines(registry)).toEqual([]);
    // One gauge per registry, whoever asks: the next term reuses it.
    expect(clusterBindingHealth(registry)).toBe(g);
  });
});
