import { pino } from 'pino';
import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { Controller, type Reconcile } from './controller';
import { TerminalError } from './errors';
import { sleep } from '../lib/abort';

const until = async (what: string, f: () => boolean, ms = 3000) => {
  const deadline = Date.now() + ms;
  while (!f()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(5);
  }
};

function harness(reconcile: Reconcile, workers = 1) {
  const registry = new Registry();
  const c = new Controller({ name: 'test', reconcile, workers, registry, baseDelayMs: 10, maxDelayMs: 40 });
  const ac = new AbortController();
  const running = c.run(ac.signal);
  return { c, registry, stop: async () => (ac.abort(), await running) };
}

const count = async (registry: Registry, result: string) =>
  (await registry.getSingleMetric('controller_runtime_reconcile_total')?.get())?.values.find((v) => v.labels.result === result)?.value ?? 0;
const terminal = async (registry: Registry) =>
  (await registry.getSingleMetric('controller_runtime_terminal_reconcile_errors_total')?.get())?.values[0]?.value ?? 0;

describe('Controller', () => {
  it('reconciles each enqueued key; a key enqueued many times while waiting is reconciled once', async () => {
    const seen: string[] = [];
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    const h = harness(async (key) => {
      if (key === 'first') await gate;
      seen.push(key);
    });
    h.c.enqueue('first');
    await until('first in flight', () => h.c.queue.inFlight === 1);
    for (let i = 0; i < 5; i++) h.c.enqueue('a');
    release();
    await until('a reconciled', () => seen.includes('a'));
    await h.stop();
    expect(seen).toEqual(['first', 'a']);
  });

  it('retries an error with backoff until it succeeds, and counts each outcome', async () => {
    let calls = 0;
    const h = harness(async () => {
      calls++;
      if (calls < 3) throw new Error('API server away');
    });
    h.c.enqueue('x');
    await until('3 calls', () => calls === 3);
    await h.stop();
    expect(await count(h.registry, 'error')).toBe(2);
    expect(await count(h.registry, 'success')).toBe(1);
    expect(h.c.queue.numRequeues('x'), 'success resets the backoff').toBe(0);
  });

  it('does not retry a TerminalError', async () => {
    let calls = 0;
    const h = harness(async () => {
      calls++;
      throw new TerminalError('the spec can never be valid');
    });
    h.c.enqueue('x');
    await until('1 call', () => calls === 1);
    await sleep(100);
    await h.stop();
    expect(calls).toBe(1);
    expect(await terminal(h.registry)).toBe(1);
    expect(await count(h.registry, 'error')).toBe(1);
  });

  it('does not retry a TerminalError wrapped for context (found through the cause chain)', async () => {
    let calls = 0;
    const h = harness(async () => {
      calls++;
      const terminal = new TerminalError('the spec can never be valid');
      throw new Error('cannot sync Widget ns/x: the spec can never be valid', { cause: new Error('applying', { cause: terminal }) });
    });
    h.c.enqueue('x');
    await until('1 call', () => calls === 1);
    await sleep(100);
    await h.stop();
    expect(calls).toBe(1);
    expect(await terminal(h.registry)).toBe(1);
    expect(await count(h.registry, 'error')).toBe(1);
  });

  it('requeues after the time a reconcile asks for', async () => {
    const at: number[] = [];
    const h = harness(async () => {
      at.push(Date.now());
      return at.length < 2 ? { requeueAfterMs: 60 } : undefined;
    });
    h.c.enqueue('x');
    await until('2 calls', () => at.length === 2);
    await h.stop();
    expect((at[1] as number) - (at[0] as number)).toBeGreaterThanOrEqual(55);
    expect(await count(h.registry, 'requeue_after')).toBe(1);
  });

  it('runs different keys in parallel but never one key twice at once', async () => {
    let active = 0;
    let max = 0;
    const perKey = new Map<string, number>();
    let overlap = false;
    const h = harness(async (key) => {
      active++;
      max = Math.max(max, active);
      perKey.set(key, (perKey.get(key) ?? 0) + 1);
      if ((perKey.get(key) ?? 0) > 1) overlap = true;
      await sleep(20);
      perKey.set(key, (perKey.get(key) ?? 1) - 1);
      active--;
    }, 4);
    for (let i = 0; i < 20; i++) h.c.enqueue(`k${i % 4}`);
    await sleep(10);
    for (let i = 0; i < 20; i++) h.c.enqueue(`k${i % 4}`);
    await until('idle', () => h.c.queue.length === 0 && h.c.queue.inFlight === 0, 5000);
    await h.stop();
    expect(max).toBe(4);
    expect(overlap).toBe(false);
  });

  it('on stop, finishes the reconcile in flight and starts no other', async () => {
    const finished: string[] = [];
    const h = harness(async (key) => {
      await sleep(80);
      finished.push(key);
    });
    h.c.enqueue('a');
    h.c.enqueue('b');
    await until('a in flight', () => h.c.queue.inFlight === 1);
    await h.stop();
    expect(finished).toEqual(['a']);
  });

  it("exposes controller-runtime's and client-go's queue and reconcile metrics, by controller", async () => {
    const h = harness(async () => undefined);
    h.c.enqueue('a');
    await until('done', () => h.c.queue.inFlight === 0 && h.c.queue.length === 0);
    await h.stop();
    const text = await h.registry.metrics();
    expect(text).toContain('workqueue_depth{controller="test",name="test"} 0');
    expect(text).toContain('workqueue_adds_total{controller="test",name="test"} 1');
    expect(text).toContain('workqueue_queue_duration_seconds_count{controller="test",name="test"} 1');
    expect(text).toContain('workqueue_work_duration_seconds_count{controller="test",name="test"} 1');
    expect(text).toContain('controller_runtime_reconcile_time_seconds_count{controller="test"} 1');
    expect(text).toContain('controller_runtime_reconcile_total{controller="test",result="success"} 1');
    expect(text).toContain('controller_runtime_max_concurrent_reconciles{controller="test"} 1');
    expect(text).toContain('controller_runtime_active_workers{controller="test"} 0');
    expect(text).toContain('workqueue_unfinished_work_seconds{controller="test",name="test"} 0');
    expect(text).toContain('workqueue_longest_running_processor_seconds{controller="test",name="test"} 0');
  });

  it("shows a reconcile that does not return in client-go's stuck-worker gauges while it runs", async () => {
    let release = () => undefined as void;
    const h = harness(() => new Promise<undefined>((r) => (release = () => r(undefined))), 2);
    h.c.enqueue('stuck');
    await until('in flight', () => h.c.queue.inFlight === 1);
    await sleep(120);
    const value = (text: string, family: string) =>
      Number(new RegExp(`^${family}\\{controller="test",name="test"\\} (\\S+)$`, 'm').exec(text)?.[1]);
    const during = await h.registry.metrics();
    expect(value(during, 'workqueue_longest_running_processor_seconds')).toBeGreaterThanOrEqual(0.1);
    expect(value(during, 'workqueue_unfinished_work_seconds')).toBeGreaterThanOrEqual(0.1);
    release();
    await until('done', () => h.c.queue.inFlight === 0);
    await h.stop();
    const after = await h.registry.metrics();
    expect(value(after, 'workqueue_longest_running_processor_seconds')).toBe(0);
    expect(value(after, 'workqueue_unfinished_work_seconds')).toBe(0);
  });

  it('refuses bad options, naming them', () => {
    expect(() => new Controller({ name: 'x', workers: 0, reconcile: async () => undefined })).toThrow(
      'workers must be a positive integer, not 0',
    );
  });
});

describe('Controller logs', () => {
  it('logs a failed reconcile with the Error itself: type, message, stack and cause reach the log line', async () => {
    const lines: Record<string, any>[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const cause = new Error('connection refused');
    const c = new Controller({
      name: 'logged',
      reconcile: async () => {
        throw new TerminalError('cannot apply Widget x', { cause });
      },
      registry: new Registry(),
      log,
    });
    const ac = new AbortController();
    const running = c.run(ac.signal);
    c.enqueue('x');
    await until('the failure logged', () => lines.some((l) => l.msg?.startsWith('reconcile failed')));
    ac.abort();
    await running;
    const err = lines.find((l) => l.msg?.startsWith('reconcile failed'))!.err;
    expect(err).toMatchObject({ type: 'TerminalError', message: expect.stringContaining('cannot apply Widget x') });
    expect(err.stack).toContain('controller.test.ts');
    expect(JSON.stringify(err)).toContain('connection refused');
  });

  it("gives each reconcile's lines, the reconciler's own too, one reconcileID of their own", async () => {
    const lines: Record<string, any>[] = [];
    const log = pino({ level: 'info' }, { write: (l: string) => void lines.push(JSON.parse(l)) });
    const c = new Controller({
      name: 'traced',
      reconcile: async (key, ctx) => {
        ctx.log.info('reconciling');
        if (key === 'a') throw new TerminalError('cannot apply Widget a');
        return undefined;
      },
      registry: new Registry(),
      log,
    });
    const ac = new AbortController();
    const running = c.run(ac.signal);
    c.enqueue('a');
    c.enqueue('b');
    await until(
      'both reconciled',
      () => lines.filter((l) => l.msg === 'reconciling').length === 2 && lines.some((l) => l.msg?.startsWith('reconcile failed')),
    );
    ac.abort();
    await running;
    const of = (key: string) => lines.filter((l) => l.key === key);
    expect(of('a').map((l) => l.msg)).toEqual(['reconciling', expect.stringMatching(/^reconcile failed/)]);
    const ids = new Set(of('a').map((l) => l.reconcileID));
    expect([...ids]).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect(of('b').map((l) => l.reconcileID)).toEqual([expect.stringMatching(/^[0-9a-f-]{36}$/)]);
    expect(ids.has(of('b')[0]!.reconcileID)).toBe(false);
  });
});
