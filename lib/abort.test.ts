import { describe, expect, it } from 'vitest';
import { sleep, untilAborted } from './abort';

describe('sleep', () => {
  it('waits its time', async () => {
    const start = performance.now();
    await sleep(30, new AbortController().signal);
    expect(performance.now() - start).toBeGreaterThanOrEqual(25);
  });
  it('ends at once when aborted, before or during', async () => {
    const before = new AbortController();
    before.abort();
    const during = new AbortController();
    const start = performance.now();
    const p = sleep(60_000, during.signal);
    during.abort();
    await Promise.all([sleep(60_000, before.signal), p]);
    expect(performance.now() - start).toBeLessThan(1_000);
  });
});

describe('untilAborted', () => {
  it('resolves with the promise, or undefined once aborted while it never settles', async () => {
    expect(await untilAborted(Promise.resolve(7), new AbortController().signal)).toBe(7);
    const c = new AbortController();
    const never = new Promise<number>(() => {});
    const p = untilAborted(never, c.signal);
    c.abort();
    expect(await p).toBeUndefined();
  });
  it('passes a rejection through', async () => {
    await expect(untilAborted(Promise.reject(new Error('boom')), new AbortController().signal)).rejects.toThrow('boom');
  });
  it('leaves no abort listener behind once the promise settles (a loop may wait on one signal without bound)', async () => {
    const c = new AbortController();
    let added = 0;
    let removed = 0;
    const add = c.signal.addEventListener.bind(c.signal);
    const remove = c.signal.removeEventListener.bind(c.signal);
    c.signal.addEventListener = (...a: Parameters<AbortSignal['addEventListener']>) => (added++, add(...a));
    c.signal.removeEventListener = (...a: Parameters<AbortSignal['removeEventListener']>) => (removed++, remove(...a));
    for (let i = 0; i < 100; i++) await untilAborted(Promise.resolve(i), c.signal);
    expect(added).toBe(100);
    expect(removed).toBe(100);
  });
});
