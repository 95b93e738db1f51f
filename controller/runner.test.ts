import { describe, expect, it } from 'vitest';
import { sleep } from '../lib/abort';
import { runWithInformers, type Runnable, type RunnerInformer } from './runner';

/** An informer whose first list is up to the test: `sync()` lists it, `fail()` is a list refused. */
function informer(name: string, log: string[]) {
  let markSynced!: () => void;
  const synced = new Promise<void>((r) => (markSynced = r));
  let error: string | undefined;
  let listed = false;
  const i = {
    start: async () => void log.push(`start ${name}`),
    synced,
    stop: async () => void log.push(`stop ${name}`),
    hasSynced: () => listed,
    lastError: () => error,
    sync: () => ((listed = true), (error = undefined), markSynced()),
    fail: (why: string) => (error = why),
  };
  return i satisfies RunnerInformer;
}

/** A controller with one reconcile in flight when it is stopped: it finishes that first, as `Controller.run` does. */
function controller(name: string, log: string[], inFlightMs = 20): Runnable {
  return {
    run: async (signal) => {
      log.push(`run ${name}`);
      await new Promise<void>((r) => signal.addEventListener('abort', () => r(), { once: true }));
      await sleep(inFlightMs);
      log.push(`drained ${name}`);
    },
  };
}

const settled = async (p: Promise<unknown>) => {
  let done = false;
  void p.then(
    () => (done = true),
    () => (done = true),
  );
  await sleep(10);
  return done;
};

describe('runWithInformers', () => {
  it('runs the controllers only once every informer listed', async () => {
    const log: string[] = [];
    const a = informer('a', log);
    const b = informer('b', log);
    const ac = new AbortController();
    const synced: string[] = [];
    const running = runWithInformers(
      { informers: [a, b], controllers: [controller('c', log)], onSynced: () => synced.push('synced') },
      ac.signal,
    );
    a.sync();
    await sleep(10);
    expect(log).toEqual(['start a', 'start b']);
    b.sync();
    await sleep(10);
    expect(synced).toEqual(['synced']);
    expect(log).toEqual(['start a', 'start b', 'run c']);
    ac.abort();
    await running;
  });

  it('stops cleanly on an abort before the first list, running no controller', async () => {
    const log: string[] = [];
    const a = informer('a', log);
    const ac = new AbortController();
    let synced = false;
    let beforeStop = false;
    const running = runWithInformers(
      {
        informers: [a],
        controllers: [controller('c', log)],
        onSynced: () => (synced = true),
        beforeStop: () => void (beforeStop = true),
      },
      ac.signal,
    );
    await sleep(10);
    ac.abort();
    await running;
    expect(log).toEqual(['start a', 'stop a']);
    expect(synced).toBe(false);
    expect(beforeStop, 'what lives on the informers is stopped whether or not they listed').toBe(true);
  });

  it('on abort, drains every controller before anything is stopped, then stops the informers', async () => {
    const log: string[] = [];
    const a = informer('a', log);
    const b = informer('b', log);
    a.sync();
    b.sync();
    const ac = new AbortController();
    const running = runWithInformers(
      {
        informers: [a, b],
        controllers: [controller('c1', log, 30), controller('c2', log, 10)],
        beforeStop: async () => void log.push('before stop'),
      },
      ac.signal,
    );
    await sleep(10);
    ac.abort();
    await running;
    expect(log).toEqual(['start a', 'start b', 'run c1', 'run c2', 'drained c2', 'drained c1', 'before stop', 'stop a', 'stop b']);
  });

  it('keeps waiting on an informer that cannot list, which shows why; it goes on once the informer listed', async () => {
    const log: string[] = [];
    const a = informer('a', log);
    const b = informer('b', log);
    a.sync();
    b.fail('secrets is forbidden');
    const ac = new AbortController();
    const running = runWithInformers({ informers: [a, b], controllers: [controller('c', log)] }, ac.signal);
    expect(await settled(running)).toBe(false);
    expect(log, 'no controller runs, nothing is stopped').toEqual(['start a', 'start b']);
    expect([a, b].filter((i) => !i.hasSynced()).map((i) => i.lastError())).toEqual(['secrets is forbidden']);
    b.sync(); // the informer restarts itself with backoff until it lists
    await sleep(10);
    expect(log).toEqual(['start a', 'start b', 'run c']);
    ac.abort();
    await running;
  });

  it('stops the informers when a controller fails, and fails with its error', async () => {
    const log: string[] = [];
    const a = informer('a', log);
    a.sync();
    const broken: Runnable = { run: async () => Promise.reject(new Error('controller c: already running')) };
    await expect(runWithInformers({ informers: [a], controllers: [broken] }, new AbortController().signal)).rejects.toThrow(
      'already running',
    );
    expect(log).toEqual(['start a', 'stop a']);
  });
});
