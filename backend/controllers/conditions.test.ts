import { describe, expect, it } from 'vitest';
import type { Condition } from '../../exports/bind-api';
import { sameConditions, setCondition } from './conditions';

const at = new Date('2026-01-01T12:00:00Z');

describe('sameConditions', () => {
  it('sees the list the API server hands back (keys sorted, list in its order) as the one written', () => {
    const written = setCondition(
      setCondition(undefined, { type: 'Ready', status: 'False', reason: 'Pending', message: 'm' }, at),
      {
        type: 'Healthy',
        status: 'True',
      },
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
