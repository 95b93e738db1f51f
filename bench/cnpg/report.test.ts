import { describe, expect, it } from 'vitest';
import { row, sampleLoad, table } from './report';

describe("bench/cnpg's report", () => {
  it('gives p50 and p99 of the samples, nearest rank', () => {
    const xs = Array.from({ length: 10 }, (_, i) => (i + 1) * 1000);
    expect(row('claim created → x', xs)).toEqual({ what: 'claim created → x', n: 10, p50Ms: 5000, p99Ms: 10000 });
  });

  it('prints the rows aligned in seconds, signed where the platform came before CNPG', () => {
    const out = table([row('a long row name', [45_300]), row('short', [-1_250])]).split('\n');
    expect(out).toEqual([
      'what               n      p50      p99',
      'a long row name    1   45.3 s   45.3 s',
      'short              1   -1.3 s   -1.3 s',
    ]);
  });

  it("sums up the machine's load average over the window", () => {
    const l = sampleLoad(60_000).stop();
    expect(l.samples).toBe(2);
    expect(l.min).toBeLessThanOrEqual(l.p50);
    expect(l.p50).toBeLessThanOrEqual(l.max);
    expect(l.min).toBeGreaterThanOrEqual(0);
  });
});
