import { describe, expect, it } from 'vitest';
import { backoffDelay } from './backoff';

describe('backoffDelay', () => {
  const b = { baseMs: 500, maxMs: 30_000 };

  it('doubles from the base after each failure, up to the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 6, 7].map((n) => backoffDelay(n, b))).toEqual([500, 1000, 2000, 4000, 8000, 16_000, 30_000, 30_000]);
  });

  it('stays at the cap however long the outage, and at the base before any failure', () => {
    expect(backoffDelay(10_000, b)).toBe(30_000);
    expect(backoffDelay(-1, b)).toBe(500);
    expect(backoffDelay(5000, { baseMs: 0, maxMs: 1000 }), 'a zero base (tests) is no delay, not NaN').toBe(0);
  });
});
