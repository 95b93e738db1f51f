import { describe, expect, it } from 'vitest';
import { conditionOf, sameConditions, setCondition, withSummary, type Condition } from './conditions';

const t0 = new Date('2025-01-01T00:00:00.123Z');
const t1 = new Date('2025-01-01T01:00:00Z');

describe('setCondition', () => {
  it('keeps the transition time while the status stays, and moves it when the status changes', () => {
    const a = setCondition(undefined, { type: 'Connected', status: 'True', reason: 'Connected' }, t0);
    expect(a).toEqual([{ type: 'Connected', status: 'True', reason: 'Connected', lastTransitionTime: '2025-01-01T00:00:00Z' }]);
    const b = setCondition(a, { type: 'Connected', status: 'True', reason: 'StillConnected', message: 'ok' }, t1);
    expect(b[0]).toMatchObject({ lastTransitionTime: '2025-01-01T00:00:00Z', reason: 'StillConnected', message: 'ok' });
    const c = setCondition(b, { type: 'Connected', status: 'False', reason: 'Unauthorized', message: 'token rejected' }, t1);
    expect(c[0]).toMatchObject({ status: 'False', severity: 'Error', lastTransitionTime: '2025-01-01T01:00:00Z' });
    expect(setCondition(c, { type: 'Connected', status: 'False', reason: 'Deleting', severity: 'Info' }, t1)[0]?.severity).toBe('Info');
  });

  it('writes a severity only on False, and no empty reason or message', () => {
    expect(setCondition(undefined, { type: 'A', status: 'Unknown', severity: 'Warning', reason: '', message: '' }, t0)).toEqual([
      { type: 'A', status: 'Unknown', lastTransitionTime: '2025-01-01T00:00:00Z' },
    ]);
  });

  it('sorts by type so the same conditions are written the same way', () => {
    const a = setCondition(
      setCondition(undefined, { type: 'SecretValid', status: 'True', reason: 'x' }, t0),
      { type: 'Connected', status: 'True', reason: 'y' },
      t0,
    );
    expect(a.map((c) => c.type)).toEqual(['Connected', 'SecretValid']);
  });
});

describe('withSummary', () => {
  it('is Ready only when every listed condition is True, else carries the first that is not', () => {
    const ok = withSummary(
      undefined,
      [
        { type: 'A', status: 'True', reason: 'a' },
        { type: 'B', status: 'True', reason: 'b' },
      ],
      'Ready',
      t0,
    );
    expect(conditionOf(ok, 'Ready')).toMatchObject({ status: 'True', reason: 'AllConditionsTrue' });
    const bad = withSummary(
      ok,
      [
        { type: 'A', status: 'Unknown', reason: 'Waiting' },
        { type: 'B', status: 'False', reason: 'Broken', message: 'b is broken' },
      ],
      'Ready',
      t1,
    );
    expect(conditionOf(bad, 'Ready')).toEqual({
      type: 'Ready',
      status: 'Unknown',
      reason: 'Waiting',
      lastTransitionTime: '2025-01-01T01:00:00Z',
    });
    expect(conditionOf(bad, 'B')).toMatchObject({ status: 'False', severity: 'Error', message: 'b is broken' });
  });
});

describe('sameConditions', () => {
  const at = new Date('2026-01-01T12:00:00Z');

  it('sees the list the API server hands back (keys sorted, list in its order) as the one written', () => {
    const written = setCondition(
      setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Pending', message: 'm' }, at),
      { type: 'Healthy', status: 'True' },
      at,
    );
    const cached = JSON.parse(
      JSON.stringify(written.map((c) => Object.fromEntries(Object.entries(c).sort(([a], [b]) => a.localeCompare(b))))),
    ) as Condition[];
    expect(JSON.stringify(cached)).not.toBe(JSON.stringify(written));
    expect(sameConditions(written, [...cached].reverse())).toBe(true);
  });

  it('sees a changed status, reason, message or transition time', () => {
    const c = setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Pending', message: 'm' }, at);
    for (const change of [
      { status: 'True' },
      { reason: 'Other' },
      { message: 'n' },
      { lastTransitionTime: '2026-01-02T00:00:00Z' },
    ] as const)
      expect(sameConditions(c, [{ ...c[0]!, ...change } as Condition])).toBe(false);
    expect(sameConditions(c, undefined)).toBe(false);
  });
});
