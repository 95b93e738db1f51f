import type { V1Namespace } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Annotations, type ClusterBinding } from '../../exports/bind-api';
import { reconcileLifecycle, type ConsumerLifecycleDeps } from './consumer-lifecycle.reconcile';

const now = Date.parse('2026-01-01T12:00:00Z');
const HOUR = 3_600_000;
const ref = { name: 'cluster-x' };
const ctx = { log: pino({ level: 'silent' }) };
const ns = (ageMs: number, identity: string | undefined = 'alice#c1'): V1Namespace => ({
  metadata: {
    name: 'cluster-x',
    creationTimestamp: new Date(now - ageMs).toISOString() as never,
    ...(identity ? { annotations: { [Annotations.identity]: identity } } : {}),
  },
});
const cb = (firstExport?: string): ClusterBinding =>
  ({
    metadata: {
      name: 'cluster',
      namespace: 'cluster-x',
      ...(firstExport ? { annotations: { 'klutch-kit.anynines.com/first-export': firstExport } } : {}),
    },
  }) as ClusterBinding;

function world(o: { ns?: V1Namespace; cb?: ClusterBinding; sns?: boolean; exports?: boolean; pending?: boolean }) {
  const writes: string[] = [];
  const d: ConsumerLifecycleDeps = {
    unboundTtlMs: HOUR,
    now: () => now,
    getNamespace: () => o.ns,
    getClusterBinding: () => o.cb,
    hasServiceNamespaces: () => o.sns ?? false,
    hasExports: () => o.exports ?? false,
    hasPendingRequests: () => o.pending ?? false,
    markFirstExport: async (n, at) => void writes.push(`first-export ${n} ${at}`),
    deleteNamespace: async (n) => void writes.push(`delete namespace ${n}`),
  };
  return { d, writes };
}

describe('reconcileLifecycle', () => {
  it('deletes a consumer that got no export within the TTL', async () => {
    const w = world({ ns: ns(HOUR + 1), cb: cb() });
    expect(await reconcileLifecycle(w.d, ref, ctx)).toBeUndefined();
    expect(w.writes).toEqual(['delete namespace cluster-x']);
  });

  it('looks again when the TTL ends, and waits for a request still pending', async () => {
    const young = world({ ns: ns(HOUR - 60_000), cb: cb() });
    expect(await reconcileLifecycle(young.d, ref, ctx)).toEqual({ requeueAfterMs: 60_000 });
    const pending = world({ ns: ns(HOUR + 1), cb: cb(), pending: true });
    expect(await reconcileLifecycle(pending.d, ref, ctx)).toEqual({ requeueAfterMs: 1000 });
    expect([...young.writes, ...pending.writes]).toEqual([]);
  });

  it('remembers the first export on the ClusterBinding, and from then on never deletes the consumer', async () => {
    const exported = world({ ns: ns(HOUR + 1), cb: cb(), exports: true });
    await reconcileLifecycle(exported.d, ref, ctx);
    expect(exported.writes).toEqual(['first-export cluster-x 2026-01-01T12:00:00.000Z']);
    const unbound = world({ ns: ns(10 * HOUR), cb: cb('2026-01-01T00:00:00Z') });
    expect(await reconcileLifecycle(unbound.d, ref, ctx)).toBeUndefined();
    expect(unbound.writes).toEqual([]);
  });

  it.each([
    ['with provider namespaces (claims, so data)', { ns: ns(10 * HOUR), cb: cb(), sns: true }],
    ['without an identity (not a cluster namespace)', { ns: ns(10 * HOUR, ''), cb: cb() }],
    ['exported but without its ClusterBinding yet', { ns: ns(10 * HOUR), exports: true }],
    ['gone', {}],
  ])('never touches a consumer %s', async (_what, o) => {
    const w = world(o);
    expect(await reconcileLifecycle(w.d, ref, ctx)).toBeUndefined();
    expect(w.writes).toEqual([]);
  });
});
