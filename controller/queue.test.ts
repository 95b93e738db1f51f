import { describe, expect, it, vi } from 'vitest';
import { WorkQueue } from './queue';
import { sleep } from '../lib/abort';

describe('WorkQueue', () => {
  it('hands out a key once however often it was added while waiting', async () => {
    const adds: string[] = [];
    const q = new WorkQueue({ onAdd: (k) => adds.push(k) });
    q.add('a');
    q.add('b');
    q.add('a');
    expect(q.length).toBe(2);
    expect(adds, 'every add is reported, as client-go counts workqueue_adds_total').toEqual(['a', 'b', 'a']);
    expect(await q.get()).toBe('a');
    expect(await q.get()).toBe('b');
    expect(q.length).toBe(0);
  });

  it('never hands a key to two workers: added while in flight, it comes back after done()', async () => {
    const q = new WorkQueue();
    q.add('a');
    const first = await q.get();
    q.add('a');
    expect(q.length, 'not queued while in flight').toBe(0);
    const second = q.get();
    let got: string | undefined;
    void second.then((k) => (got = k));
    await sleep(0);
    expect(got, 'a second worker waits').toBeUndefined();
    q.done(first as string);
    expect(await second).toBe('a');
  });

  it('delays keys, and the earlier of two delayed adds wins', async () => {
    // On a fake clock: a wall-clock bound failed under a loaded full run (164 ms against 150).
    vi.useFakeTimers();
    try {
      const q = new WorkQueue();
      q.addAfter('a', 200);
      q.addAfter('a', 20);
      q.addAfter('a', 500);
      expect(q.delayed).toBe(1);
      let got: string | undefined;
      void q.get().then((k) => (got = k));
      await vi.advanceTimersByTimeAsync(19);
      expect(got, 'not before the earliest delay').toBeUndefined();
      await vi.advanceTimersByTimeAsync(1);
      expect(got, 'at the earliest delay, not the later ones').toBe('a');
      expect(q.delayed).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it('backs off exponentially per key, capped, until forget()', () => {
    const q = new WorkQueue({ baseDelayMs: 10, maxDelayMs: 100 });
    expect([0, 1, 2, 3, 4, 10].map((n) => q.backoff(n))).toEqual([10, 20, 40, 80, 100, 100]);
    q.addRateLimited('a');
    q.addRateLimited('a');
    expect(q.numRequeues('a')).toBe(2);
    expect(q.numRequeues('b')).toBe(0);
    q.forget('a');
    expect(q.numRequeues('a')).toBe(0);
    q.shutDown();
  });

  it('retries a failing key after its backoff', async () => {
    const q = new WorkQueue({ baseDelayMs: 30 });
    // Timed from before the add: on a busy machine the add and get() can be 10 ms apart (CI: 21 ms seen after it).
    const t = Date.now();
    q.addRateLimited('a');
    expect(q.length).toBe(0);
    expect(await q.get()).toBe('a');
    // Node may fire a timer up to a millisecond early.
    expect(Date.now() - t).toBeGreaterThanOrEqual(29);
  });

  it('shuts down: waiting workers get undefined, nothing more is handed out, drain() waits for keys in flight', async () => {
    const q = new WorkQueue();
    q.add('a');
    q.add('b');
    q.addAfter('c', 10_000);
    const a = await q.get();
    const waiting = [q.get()];
    expect(await waiting[0]).toBe('b');
    const idle = q.get();
    q.shutDown();
    expect(await idle).toBeUndefined();
    expect(await q.get()).toBeUndefined();
    q.add('d');
    expect(q.length).toBe(0);
    expect(q.delayed, 'delayed keys are dropped').toBe(0);
    let drained = false;
    const d = q.drain().then(() => (drained = true));
    await sleep(0);
    expect(drained, 'a and b are still in flight').toBe(false);
    q.done(a as string);
    q.done('b');
    await d;
    expect(drained).toBe(true);
  });

  it('reports how long a key waited', async () => {
    const waits: [string, number][] = [];
    const q = new WorkQueue({ onGet: (k, ms) => waits.push([k, ms]) });
    q.add('a');
    await sleep(30);
    await q.get();
    expect(waits[0]?.[0]).toBe('a');
    expect(waits[0]?.[1]).toBeGreaterThanOrEqual(25);
  });

  it('refuses nonsensical backoff settings', () => {
    expect(() => new WorkQueue({ baseDelayMs: 100, maxDelayMs: 10 })).toThrow('baseDelayMs (100) must be > 0 and <= maxDelayMs (10)');
  });
});
