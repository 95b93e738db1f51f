import { describe, expect, it } from 'vitest';
import { formatGoDuration, parseGoDuration } from './duration';

describe('parseGoDuration', () => {
  it.each([
    ['500ms', 500],
    ['15s', 15_000],
    ['2m30s', 150_000],
    ['1h', 3_600_000],
    ['1h30m', 5_400_000],
    ['1.5h', 5_400_000],
    ['0', 0],
  ])('%s is %i ms', (text, ms) => expect(parseGoDuration(text)).toBe(ms));

  it.each(['', '10', '5x', '1h 30m', '-1s', 'm', '1m30'])('refuses %j', (text) => expect(parseGoDuration(text)).toBeUndefined());
});

describe('formatGoDuration', () => {
  it.each([
    [300_000, '5m0s'],
    [20_000, '20s'],
    [3_600_000, '1h0m0s'],
    [150_000, '2m30s'],
  ])('formats %i ms as %s', (ms, s) => expect(formatGoDuration(ms)).toBe(s));
});
