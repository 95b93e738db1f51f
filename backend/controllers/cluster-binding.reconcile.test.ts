import type { V1Secret } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { ClusterBinding, Condition } from '../../exports/bind-api';
import { health, lastActivity, reconcileClusterBinding, type ClusterBindingDeps } from './cluster-binding.reconcile';

const now = Date.parse('2026-01-01T12:00:00Z');
const at = (s: number) => new Date(now + s * 1000).toISOString();

describe('health', () => {
  it.each([
    ['no heartbeat yet', undefined, 'FirstHeartbeatPending'],
    ['no interval', { lastHeartbeatTime: at(-10) }, 'HeartbeatIntervalMissing'],
    ['older than two intervals', { lastHeartbeatTime: at(-601), heartbeatInterval: '5m0s' }, 'HeartbeatTimeout'],
    ['in the future beyond 10 s', { lastHeartbeatTime: at(11), heartbeatInterval: '5m0s' }, 'HeartbeatTimeDrift'],
  ])('%s → False %s', (_what, status, reason) => {
    expect(health(status, now)).toMatchObject({ status: 'False', reason });
  });

  it('is True for a recent heartbeat (Klutch reports drift here) and says when to look again', () => {
    expect(health({ lastHeartbeatTime: at(-2), heartbeatInterval: '5m0s' }, now)).toEqual({ status: 'True', recheckInMs: 598_001 });
    expect(health({ lastHeartbeatTime: at(5), heartbeatInterval: '5m0s' }, now).status).toBe('True');
  });
});

describe('lastActivity', () => {
  it('is the latest of heartbeat, last bind and creation', () => {
    const b = (status?: { lastHeartbeatTime?: string }, bind?: string) => ({
      metadata: {
        creationTimestamp: at(-100),
        ...(bind ? { annotations: { 'klutch-kit.anynines.com/last-bind': bind } } : {}),
      },
      status,
    });
    expect(lastActivity(b())).toBe(now - 100_000);
    expect(lastActivity(b({ lastHeartbeatTime: at(-50) }))).toBe(now - 50_000);
    expect(lastActivity(b({ lastHeartbeatTime: at(-50) }, at(-10)))).toBe(now - 10_000);
  });

  it('clamps a heartbeat in the future to now; one beyond the drift counts from when it was first seen', () => {
    const b = (lastHeartbeatTime: string, seen?: string) => ({
      metadata: {
        creationTimestamp: at(-100),
        ...(seen ? { annotations: { 'klutch-kit.anynines.com/future-heartbeat': seen } } : {}),
      },
      status: { lastHeartbeatTime },
    });
    expect(lastActivity(b(at(5)), now)).toBe(now);
    expect(lastActivity(b('9999-12-31T00:00:00Z'), now)).toBe(now);
    expect(lastActivity(b('9999-12-31T00:00:00Z', `9999-12-31T00:00:00Z ${at(-60)}`), now)).toBe(now - 60_000);
    // Recorded for another heartbeat, or unreadable: seen now.
    expect(lastActivity(b('9999-12-31T00:00:00Z', `9999-12-30T00:00:00Z ${at(-60)}`), now)).toBe(now);
    expect(lastActivity(b('9999-12-31T00:00:00Z', 'nonsense'), now)).toBe(now);
  });
});

const DAY = 86_400_000;
const ctx = { log: pino({ level: 'silent' }) };
const ref = { namespace: 'cluster-x', name: 'cluster' };

function binding(o: { status?: ClusterBinding['status']; created?: number; lastBind?: number } = {}): ClusterBinding {
  return {
    apiVersion: 'klutch.anynines.com/v1alpha1',
    kind: 'ClusterBinding',
    metadata: {
      name: 'cluster',
      namespace: 'cluster-x',
      creationTimestamp: at(o.created ?? -100) as never,
      ...(o.lastBind !== undefined ? { annotations: { 'klutch-kit.anynines.com/last-bind': at(o.lastBind) } } : {}),
    },
    spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'p' },
    ...(o.status ? { status: o.status } : {}),
  };
}

/** Plain functions over one ClusterBinding and one Secret; `writes` records every write in order. */
function world(b: ClusterBinding | undefined, secret?: V1Secret, legacy: string[] = []) {
  const writes: string[] = [];
  const d: ClusterBindingDeps = {
    abandonedAfterMs: DAY,
    now: () => now,
    getClusterBinding: () => b,
    getKubeconfigSecret: () => secret,
    deleteKubeconfigSecret: async (ns, uid) => void writes.push(`delete ${ns}/kubeconfig uid=${uid}`),
    deleteLegacyTokens: async (ns) => (legacy.length && writes.push(`delete ${ns}/${legacy.join(',')}`), legacy),
    annotate: async (r, a) =>
      void writes.push(
        `annotate ${r.namespace}/${r.name} ${Object.entries(a)
          .map(([k, v]) => `${k.replace(/^.*\//, '')}=${v}`)
          .join(' ')}`,
      ),
    warn: (o, reason) => void writes.push(`event ${o.apiVersion} ${o.kind} ${o.metadata.namespace}/${o.metadata.name} ${reason}`),
    writeConditions: async (r, conditions: Condition[]) =>
      void writes.push(`status ${r.namespace}/${r.name} ${conditions.map((c) => `${c.type}=${c.status}:${c.reason ?? ''}`).join(' ')}`),
  };
  return { d, writes };
}

describe('reconcileClusterBinding', () => {
  it('writes Healthy and Ready once, in one status write, and looks again when the heartbeat would time out', async () => {
    const w = world(binding({ status: { lastHeartbeatTime: at(-2), heartbeatInterval: '5m0s' } }));
    expect(await reconcileClusterBinding(w.d, ref, ctx)).toEqual({ requeueAfterMs: 598_001 });
    expect(w.writes).toEqual(['status cluster-x/cluster Healthy=True: Ready=True:']);
  });

  it('writes nothing when the conditions already say it', async () => {
    const first = world(binding());
    await reconcileClusterBinding(first.d, ref, ctx);
    const conditions = [
      {
        type: 'Healthy',
        status: 'False',
        severity: 'Error',
        lastTransitionTime: at(0).replace(/\.\d{3}Z$/, 'Z'),
        reason: 'FirstHeartbeatPending',
        message: 'waiting for the first heartbeat of the konnector',
      },
      {
        type: 'Ready',
        status: 'False',
        severity: 'Error',
        lastTransitionTime: at(0).replace(/\.\d{3}Z$/, 'Z'),
        reason: 'FirstHeartbeatPending',
        message: 'waiting for the first heartbeat of the konnector',
      },
    ] as Condition[];
    const again = world(binding({ status: { conditions } }));
    await reconcileClusterBinding(again.d, ref, ctx);
    expect(first.writes).toEqual(['status cluster-x/cluster Healthy=False:FirstHeartbeatPending Ready=False:FirstHeartbeatPending']);
    expect(again.writes).toEqual([]);
  });

  it('revokes the credentials of an abandoned consumer: the Secret first, then one status write saying so', async () => {
    const w = world(binding({ created: -3 * 86_400 }), {
      metadata: { name: 'kubeconfig', uid: 's-1', creationTimestamp: at(-3 * 86_400) as never },
    });
    await reconcileClusterBinding(w.d, ref, ctx);
    expect(w.writes).toEqual([
      'delete cluster-x/kubeconfig uid=s-1',
      'event klutch.anynines.com/v1alpha1 ClusterBinding cluster-x/cluster CredentialsRevoked',
      'status cluster-x/cluster CredentialsRevoked=True:Abandoned Healthy=False:FirstHeartbeatPending Ready=False:FirstHeartbeatPending',
    ]);
  });

  it('says a revocation once, as a Warning Event: a consumer with nothing left to revoke gets none', async () => {
    const w = world(binding({ created: -3 * 86_400 }));
    await reconcileClusterBinding(w.d, ref, ctx);
    expect(w.writes).toEqual([
      'status cluster-x/cluster CredentialsRevoked=True:Abandoned Healthy=False:FirstHeartbeatPending Ready=False:FirstHeartbeatPending',
    ]);
  });

  it("revokes an abandoned adopted consumer's legacy token too, also when its kubeconfig Secret is gone already", async () => {
    const w = world(binding({ created: -3 * 86_400 }), undefined, ['klutch-binder']);
    await reconcileClusterBinding(w.d, ref, ctx);
    expect(w.writes).toEqual([
      'delete cluster-x/klutch-binder',
      'event klutch.anynines.com/v1alpha1 ClusterBinding cluster-x/cluster CredentialsRevoked',
      'status cluster-x/cluster CredentialsRevoked=True:Abandoned Healthy=False:FirstHeartbeatPending Ready=False:FirstHeartbeatPending',
    ]);
  });

  it("stamps this backend's release on a ClusterBinding that states another or none, once, beside a future heartbeat", async () => {
    const status = { lastHeartbeatTime: at(-2), heartbeatInterval: '5m0s' };
    const stamped = (v?: string): ClusterBinding => {
      const b = binding({ status });
      return v ? { ...b, metadata: { ...b.metadata, annotations: { 'klutch-kit.anynines.com/backend-version': v } } } : b;
    };
    const versioned = (b: ClusterBinding) => {
      const w = world(b);
      return { ...w, d: { ...w.d, backendVersion: 'v0.5.0' } };
    };
    for (const b of [stamped(), stamped('v0.4.9')]) {
      const w = versioned(b);
      await reconcileClusterBinding(w.d, ref, ctx);
      expect(w.writes[0]).toBe('annotate cluster-x/cluster backend-version=v0.5.0');
    }
    const same = versioned(stamped('v0.5.0'));
    await reconcileClusterBinding(same.d, ref, ctx);
    expect(same.writes.filter((x) => x.startsWith('annotate'))).toEqual([]);
    const future = versioned(binding({ status: { ...status, lastHeartbeatTime: '2999-01-01T00:00:00Z' } }));
    await reconcileClusterBinding(future.d, ref, ctx);
    expect(future.writes[0]).toBe(`annotate cluster-x/cluster future-heartbeat=2999-01-01T00:00:00Z ${at(0)} backend-version=v0.5.0`);
  });

  it('counts a heartbeat dated in the future as sent when first seen: recorded, and abandoned a day after that', async () => {
    const hb = '2999-01-01T00:00:00Z';
    const status = { lastHeartbeatTime: hb, heartbeatInterval: '5m0s' };
    const first = world(binding({ created: -3 * 86_400, status }));
    expect(await reconcileClusterBinding(first.d, ref, ctx)).toEqual({ requeueAfterMs: DAY });
    expect(first.writes[0]).toBe(`annotate cluster-x/cluster future-heartbeat=${hb} ${at(0)}`);
    const seen = (s: number) => ({
      ...binding({ created: -3 * 86_400, status }),
      metadata: {
        ...binding({ created: -3 * 86_400 }).metadata,
        annotations: { 'klutch-kit.anynines.com/future-heartbeat': `${hb} ${at(s)}` },
      },
    });
    const later = world(seen(-DAY / 1000 - 1), {
      metadata: { name: 'kubeconfig', uid: 's-3', creationTimestamp: at(-3 * 86_400) as never },
    });
    await reconcileClusterBinding(later.d, ref, ctx);
    expect(later.writes[0]).toBe('delete cluster-x/kubeconfig uid=s-3');
    // Another heartbeat, also in the future, is a new sign of life.
    const other = world({ ...seen(-DAY / 1000 - 1), status: { ...status, lastHeartbeatTime: '2999-01-02T00:00:00Z' } });
    await reconcileClusterBinding(other.d, ref, ctx);
    expect(other.writes[0]).toBe(`annotate cluster-x/cluster future-heartbeat=2999-01-02T00:00:00Z ${at(0)}`);
    expect(other.writes.join()).not.toContain('CredentialsRevoked');
  });

  it('counts a kubeconfig Secret made anew as a bind: no revocation, and CredentialsRevoked goes', async () => {
    const revoked = { type: 'CredentialsRevoked', status: 'True', reason: 'Abandoned', lastTransitionTime: at(-10) } as Condition;
    const w = world(binding({ created: -3 * 86_400, status: { conditions: [revoked] } }), {
      metadata: { name: 'kubeconfig', uid: 's-2', creationTimestamp: at(-5) as never },
    });
    expect(await reconcileClusterBinding(w.d, ref, ctx)).toEqual({ requeueAfterMs: DAY - 5_000 + 1000 });
    expect(w.writes).toEqual(['status cluster-x/cluster Healthy=False:FirstHeartbeatPending Ready=False:FirstHeartbeatPending']);
  });

  it('does not write again what it wrote onto the same cached version (the cache has not shown the write yet)', async () => {
    const w = world(binding());
    w.d.justWritten = (b, conditions) => b.metadata.name === 'cluster' && conditions.some((c) => c.reason === 'FirstHeartbeatPending');
    await reconcileClusterBinding(w.d, ref, ctx);
    expect(w.writes).toEqual([]);
  });

  it('leaves a missing or deleting ClusterBinding alone', async () => {
    const gone = world(undefined);
    const deleting = world({ ...binding(), metadata: { ...binding().metadata, deletionTimestamp: at(0) as never } });
    expect(await reconcileClusterBinding(gone.d, ref, ctx)).toBeUndefined();
    expect(await reconcileClusterBinding(deleting.d, ref, ctx)).toBeUndefined();
    expect([...gone.writes, ...deleting.writes]).toEqual([]);
  });
});
