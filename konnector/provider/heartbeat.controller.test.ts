import { describe, expect, it } from 'vitest';
import type { Runtime } from '../runtime';
import { commitHeartbeat } from './heartbeat.controller';
import type { ProviderConnection } from './connection';
import type { HeartbeatOutcome } from './heartbeat.reconcile';

/** A connection as the heartbeat sees it, counting how often it told its bindings to look again. */
function world() {
  let told = 0;
  const conn: Pick<ProviderConnection, 'heartbeat' | 'refusedRotations' | 'statusChanged'> = {
    heartbeat: {},
    refusedRotations: new Map(),
    statusChanged: () => void told++,
  };
  const warned: string[] = [];
  const rt = {
    metrics: { heartbeats: { inc: () => undefined } },
    kubeconfigSecret: () => undefined,
    warn: (_o: unknown, reason: string) => void warned.push(reason),
  } as unknown as Pick<Runtime, 'metrics' | 'kubeconfigSecret' | 'warn'>;
  const beat = (o: Partial<HeartbeatOutcome>) => {
    const before = told;
    commitHeartbeat(conn, rt, { requeueAfterMs: 1, refused: [], ...o });
    return told - before;
  };
  return { conn, beat, warned };
}

describe('commitHeartbeat: what the bindings learn of a heartbeat', () => {
  it('tells the bindings when the first beat lands, when beats start failing and when they work again; not on every beat', () => {
    const w = world();
    expect(w.beat({ beatAt: new Date('2026-12-07T10:00:00Z') })).toBe(1);
    expect(w.beat({ beatAt: new Date('2026-12-07T10:00:05Z') })).toBe(0);
    // The binding's HeartbeatFailed shows at once, not at its next refresh a minute later.
    expect(w.beat({ error: new Error('cannot write the heartbeat: connection refused') })).toBe(1);
    expect(w.conn.heartbeat.error).toMatch(/connection refused/);
    expect(w.beat({ error: new Error('cannot write the heartbeat: connection refused') })).toBe(0);
    expect(w.beat({ beatAt: new Date('2026-12-07T10:00:20Z') })).toBe(1);
    expect(w.conn.heartbeat).toEqual({ at: new Date('2026-12-07T10:00:20Z') });
  });

  it('keeps the newest beat it knew when the cache lags behind its own write', () => {
    const w = world();
    w.beat({ beatAt: new Date('2026-12-07T10:00:10Z') });
    w.beat({ beatAt: new Date('2026-12-07T10:00:05Z') });
    expect(w.conn.heartbeat.at).toEqual(new Date('2026-12-07T10:00:10Z'));
  });

  it('tells the bindings when the refused rotations change, and warns on each refused Secret', () => {
    const w = world();
    w.beat({ beatAt: new Date('2026-12-07T10:00:00Z') });
    const refused: HeartbeatOutcome['refused'] = [
      {
        target: { namespace: 'klutch-bind', name: 'kubeconfig-a', key: 'kubeconfig', kubeconfig: undefined },
        reason: 'KubeconfigInvalid',
        message: 'm',
      },
    ];
    expect(w.beat({ refused })).toBe(1);
    expect(w.beat({ refused })).toBe(0);
    expect(w.warned).toEqual(['KubeconfigInvalid', 'KubeconfigInvalid']);
    expect(w.beat({})).toBe(1);
  });
});
