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
    revokeLegacyToken: async (n) => (calls.push(`check ${n}`), o.legacy ?? { state: 'none' }),
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
    const revoked = world({ cached: ns('bk-b'), legacy: { state: 'revoked', secrets: ['klutch-binder-token'] } });
    await reconcileKlutchAdoption(revoked.d, { name: 'bk-b' }, ctx);
    expect([...none.d.clean, ...revoked.d.clean]).toEqual(['bk-a', 'bk-b']);
  });

  it('keeps a legacy token until the grace has passed, and looks again then', async () => {
    const w = world({ cached: ns('bk-a'), legacy: { state: 'kept', secrets: ['t'], reason: 'no heartbeat yet', after: now + 60_000 } });
    expect(await reconcileKlutchAdoption(w.d, { name: 'bk-a' }, ctx)).toEqual({ requeueAfterMs: 61_000 });
    expect(w.d.clean.size).toBe(0);
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
