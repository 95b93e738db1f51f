import { describe, expect, it } from 'vitest';
import { health, lastActivity } from './cluster-bindings';

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
});
