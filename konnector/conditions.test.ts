import { describe, expect, it } from 'vitest';
import { conditionOf, setCondition, withSummary } from './conditions';

const t0 = new Date('2025-01-01T00:00:00.123Z');
const t1 = new Date('2025-01-01T01:00:00Z');

describe('setCondition', () => {
  it('keeps the transition time while the status stays, and moves it when the status changes', () => {
    const a = setCondition(undefined, { type: 'Connected', status: true, reason: 'Connected' }, t0);
    expect(a).toEqual([{ type: 'Connected', status: 'True', reason: 'Connected', lastTransitionTime: '2025-01-01T00:00:00Z' }]);
    const b = setCondition(a, { type: 'Connected', status: true, reason: 'StillConnected', message: 'ok' }, t1);
    expect(b[0]).toMatchObject({ lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'StillConnected', message: 'ok' });
    const c = setCondition(b, { type: 'Connected', status: false, reason: 'Unauthorized', message: 'token rejected' }, t1);
    expect(c[0]).toMatchObject({ status: 'False', severity: 'Error', lastTransitionTime: '2025-01-01T01:00:00Z' });
  });

  it('sorts by type so the same conditions are written the same way', () => {
    const a = setCondition(
      setCondition(undefined, { type: 'SecretValid', status: true, reason: 'x' }, t0),
      { type: 'Connected', status: true, reason: 'y' },
      t0,
    );
    expect(a.map((c) => c.type)).toEqual(['Connected', 'SecretValid']);
  });
});

describe('withSummary', () => {
  it('is Ready only when every listed condition is True, else carries the first failing one', () => {
    const ok = withSummary(
      undefined,
      [
        { type: 'A', status: true, reason: 'a' },
        { type: 'B', status: true, reason: 'b' },
      ],
      'Ready',
      t0,
    );
    expect(conditionOf(ok, 'Ready')).toMatchObject({ status: 'True', reason: 'AllConditionsTrue' });
    const bad = withSummary(
      ok,
      [
        { type: 'A', status: true, reason: 'a' },
        { type: 'B', status: false, reason: 'Broken', message: 'b is broken' },
      ],
      'Ready',
      t1,
    );
    expect(conditionOf(bad, 'Ready')).toMatchObject({ status: 'False', reason: 'Broken', message: 'b is broken', severity: 'Error' });
  });
});
