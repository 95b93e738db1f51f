import type { V1Namespace } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BackendAnnotations } from '../labels';
import type { LegacyTokenState } from '../provision/klutch-adoption';
import { reconcileKlutchAdoption, SWEEP, SWEEP_EVERY_MS, type KlutchAdoptionDeps } from './klutch-adoption.reconcile';

const now = Date.parse('2026-01-01T12:00:00Z');
const ctx = { log: pino({ level: 'silent' }) };
const ns = (name: string): V1Namespace => ({ metadata: { name } });

function world(o: { klutch?: string[]; cached?: V1Namespace; legacy?: LegacyTokenState }) {
  const calls: string[] = [];
  const d: KlutchAdoptionDeps = {
    now: () => now,
    klutchNamespaces: async () => (o.klutch ?? []).map(ns),
    adopt: async (n) => (
      calls.push(`adopt ${n.metadata?.name}`),
      { namespace: n.metadata!.name!, identity: 'alice#c1', providerNamespaces: [], kubeconfigSecret: true }
    ),
    enqueue: (n) => void calls.push(`enqueue ${n}`),
    getNamespace: () => o.cached,
    revokeLegacyToken: async (n, adoptedAt) => (
      calls.push(`check ${n} adopted ${new Date(adoptedAt).toISOString()}`),
      o.legacy ?? { state: 'none' }
    ),
    markAdopted: async (n, at) => void calls.push(`mark ${n} adopted ${at}`),
    clean: new Set(),
  };
  return { d, calls };
}

describe('reconcileKlutchAdoption', () => {
  it("sweeps: adopts each of Klutch's cluster namespaces and brings it to the legacy-token check; again in five minutes", async () => {
    const w = world({ klutch: ['bk-a', 'bk-b'] });
    expect(await reconcileKlutchAdoption(w.d, { name: SWEEP }, ctx)).toEqual({ requeueAfterMs: SWEEP_EVERY_MS });
    expect(w.calls).toEqual(['adopt bk-a', 'enqueue bk-a', 'adopt bk-b', 'enqueue bk-b']);
  });

  it('remembers a namespace without a legacy token, or whose token it revoked, so later heartbeats cost nothing', async () => {
    const none = world({ cached: ns('bk-a') });
    await reconcileKlutchAdoption(none.d, { name: 'bk-a' }, ctx);
    const revoked = world({ cached: ns('bk-b'), legacy: { state: 'revoked', secrets: ['klutch-binder-token'], reason: 'heartbeat' } });
    await reconcileKlutchAdoption(revoked.d, { name: 'bk-b' }, ctx);
    expect([...none.d.clean, ...revoked.d.clean]).toEqual(['bk-a', 'bk-b']);
  });

  const adopted = (at: string): V1Namespace => ({ metadata: { name: 'bk-a', annotations: { [BackendAnnotations.adopted]: at } } });

  it('keeps a legacy token until the grace (or the maximum age after the adoption) has passed, and looks again then', async () => {
    const kept = { state: 'kept', secrets: ['t'], reason: 'no heartbeat yet', after: now + 60_000 } as const;
    const w = world({ cached: adopted('2026-01-01T11:00:00.000Z'), legacy: kept });
    expect(await reconcileKlutchAdoption(w.d, { name: 'bk-a' }, ctx)).toEqual({ requeueAfterMs: 61_000 });
    expect(w.calls).toEqual(['check bk-a adopted 2026-01-01T11:00:00.000Z']);
    expect(w.d.clean.size).toBe(0);
    // A deadline weeks away: looked at daily (setTimeout overflows beyond ~24 days).
    const far = world({ cached: adopted('2026-01-01T11:00:00.000Z'), legacy: { ...kept, after: now + 30 * 86_400_000 } });
    expect(await reconcileKlutchAdoption(far.d, { name: 'bk-a' }, ctx)).toEqual({ requeueAfterMs: 86_400_000 });
  });

  it('counts the maximum age from now for a namespace adopted before the time was recorded, and records it', async () => {
    const w = world({ cached: ns('bk-a'), legacy: { state: 'kept', secrets: ['t'], reason: 'no heartbeat yet', after: now + 60_000 } });
    await reconcileKlutchAdoption(w.d, { name: 'bk-a' }, ctx);
    expect(w.calls).toEqual(['check bk-a adopted 2026-01-01T12:00:00.000Z', 'mark bk-a adopted 2026-01-01T12:00:00.000Z']);
  });

  it('remembers a namespace whose legacy token went at its maximum age', async () => {
    const w = world({ cached: adopted('2025-12-01T00:00:00Z'), legacy: { state: 'revoked', secrets: ['t'], reason: 'maxAge' } });
    expect(await reconcileKlutchAdoption(w.d, { name: 'bk-a' }, ctx)).toBeUndefined();
    expect([...w.d.clean]).toEqual(['bk-a']);
  });

  it('asks nothing about a cluster namespace this backend made itself (never a legacy token in it), and remembers it', async () => {
    const w = world({ cached: { metadata: { name: 'bk-a', annotations: { [BackendAnnotations.provisioned]: 'true' } } } });
    expect(await reconcileKlutchAdoption(w.d, { name: 'bk-a' }, ctx)).toBeUndefined();
    expect(w.calls).toEqual([]);
    expect([...w.d.clean]).toEqual(['bk-a']);
  });

  it('asks nothing about a namespace that is not in the cache (not adopted yet, or gone)', async () => {
    const w = world({});
    expect(await reconcileKlutchAdoption(w.d, { name: 'bk-a' }, ctx)).toBeUndefined();
    expect(w.calls).toEqual([]);
  });
});
