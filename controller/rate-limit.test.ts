import { describe, expect, it } from 'vitest';
import { TokenBucket } from './rate-limit';
import { sleep } from '../lib/abort';

/** Lets resolved promises run, but no timer. */
const microtasks = async () => {
  for (let i = 0; i < 5; i++) await Promise.resolve();
};

describe('TokenBucket', () => {
  it('lets a burst through at once, then spaces requests at the rate', async () => {
    const bucket = new TokenBucket({ qps: 20, burst: 3 });
    const start = performance.now();
    const done: number[] = [];
    const all = Promise.all(Array.from({ length: 7 }, () => bucket.take().then(() => done.push(performance.now() - start))));
    await microtasks();
    expect(done).toHaveLength(3);
    await all;
    // The other four one every 50 ms after the burst: the last no sooner than 200 ms.
    expect(done[3]).toBeGreaterThanOrEqual(45);
    expect(done[6]).toBeGreaterThanOrEqual(195);
  });

  it('refills while idle, never beyond the burst', async () => {
    const bucket = new TokenBucket({ qps: 100, burst: 2 });
    await bucket.take();
    await bucket.take();
    await sleep(100); // ten tokens' worth of time: still only two
    let through = 0;
    const start = performance.now();
    const all = Promise.all([1, 2, 3].map(() => bucket.take().then(() => through++)));
    await microtasks();
    expect(through).toBe(2);
    await all;
    expect(performance.now() - start).toBeGreaterThanOrEqual(8);
  });

  it('refuses a limit that cannot work, naming it', () => {
    expect(() => new TokenBucket({ qps: 0, burst: 1 })).toThrow('rate limit: qps 0 must be a positive number');
    expect(() => new TokenBucket({ qps: 5, burst: 0 })).toThrow('rate limit: burst 0 must be a whole number of at least 1');
  });
});
