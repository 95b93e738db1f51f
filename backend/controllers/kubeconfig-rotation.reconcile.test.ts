import type { V1Secret } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { writtenFor, type Kubeconfig } from '../provision/kubeconfig';
import { BIND_WRITE_GRACE_MS, reconcileKubeconfig, type KubeconfigRotationDeps } from './kubeconfig-rotation.reconcile';

const now = Date.parse('2026-01-01T12:00:00Z');
const at = (s: number) => new Date(now + s * 1000).toISOString();
const target = { server: 'https://provider.example.com', ca: 'CA' };
const tokens = { lifetimeMs: 3_600_000, refreshBeforeMs: 600_000 };
const ref = { namespace: 'cluster-x', name: 'kubeconfig' };

function secret(o: { created?: number; expires?: number; data?: boolean; writtenFor?: string } = {}): V1Secret {
  return {
    metadata: {
      name: 'kubeconfig',
      namespace: 'cluster-x',
      creationTimestamp: at(o.created ?? -3600) as never,
      annotations: {
        ...(o.expires !== undefined ? { 'klutch-kit.anynines.com/token-expires': at(o.expires) } : {}),
        'klutch-kit.anynines.com/kubeconfig-for': o.writtenFor ?? writtenFor(target, 'cluster-x'),
      },
    },
    ...(o.data === false ? {} : { data: { kubeconfig: Buffer.from('apiVersion: v1').toString('base64') } }),
  };
}

function world(s: V1Secret | undefined, rotated?: Kubeconfig) {
  const calls: string[] = [];
  const d: KubeconfigRotationDeps = {
    target,
    tokens,
    ours: (ns) => ns.startsWith('cluster-'),
    now: () => now,
    getSecret: () => s,
    rotate: async (ns) => (calls.push(`rotate ${ns}`), rotated),
  };
  return { d, calls };
}
const ctx = { log: pino({ level: 'silent' }) };

describe('reconcileKubeconfig', () => {
  it('asks the API server nothing while the cached token is current, and comes back when it is due', async () => {
    const w = world(secret({ expires: 3000 }));
    expect(await reconcileKubeconfig(w.d, ref, ctx)).toEqual({ requeueAfterMs: 3_000_000 - 600_000 });
    expect(w.calls).toEqual([]);
  });

  it.each([
    ['due', secret({ expires: 60 })],
    ['written for another address or CA', secret({ expires: 3000, writtenFor: 'old' })],
    ['empty for longer than a bind takes', secret({ data: false, created: -60 })],
  ])('rotates a Secret whose token is %s, and comes back before the new one is due', async (_what, s) => {
    const w = world(s, { yaml: 'y', refreshAt: now + 3_000_000, written: true, secretUid: 's-1' });
    expect(await reconcileKubeconfig(w.d, ref, ctx)).toEqual({ requeueAfterMs: 3_000_000 });
    expect(w.calls).toEqual(['rotate cluster-x']);
  });

  it('leaves a Secret a bind is still writing to the bind', async () => {
    const w = world(secret({ data: false, created: -2 }));
    expect(await reconcileKubeconfig(w.d, ref, ctx)).toEqual({ requeueAfterMs: BIND_WRITE_GRACE_MS - 2000 });
    expect(w.calls).toEqual([]);
  });

  it('never makes a Secret again: gone from the cache, or gone when read live', async () => {
    const gone = world(undefined);
    expect(await reconcileKubeconfig(gone.d, ref, ctx)).toBeUndefined();
    expect(gone.calls).toEqual([]);
    const live = world(secret({ expires: 60 }), undefined);
    expect(await reconcileKubeconfig(live.d, ref, ctx)).toBeUndefined();
    expect(live.calls).toEqual(['rotate cluster-x']);
  });

  it("leaves another backend's consumers alone (another --namespace-prefix): their tokens are for that backend's address", async () => {
    const other = { namespace: 'team-b-x', name: 'kubeconfig' };
    const w = world({ ...secret({ expires: 60 }), metadata: { ...secret({ expires: 60 }).metadata, namespace: 'team-b-x' } });
    expect(await reconcileKubeconfig(w.d, other, ctx)).toBeUndefined();
    expect(w.calls).toEqual([]);
  });
});
