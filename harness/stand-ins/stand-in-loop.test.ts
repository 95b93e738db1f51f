import { describe, expect, it } from 'vitest';
import { standInLoop } from './stand-in-loop';
import { sleep } from '../../lib/abort';

describe('standInLoop', () => {
  it('ticks until stopped, says each distinct error once, and says it again after a success', async () => {
    const said: string[] = [];
    const errors = ['down', 'down', 'gone', undefined, 'down'];
    let ticks = 0;
    const loop = standInLoop(
      'x stand-in',
      async () => {
        const e = errors[ticks++];
        if (e) throw new Error(e);
      },
      (l) => said.push(l),
      { everyMs: 5 },
    );
    while (ticks < errors.length + 2) await sleep(5);
    await loop.stop();
    const after = ticks;
    await sleep(30);
    expect(ticks).toBe(after);
    expect(said).toEqual(['x stand-in: down (trying again)', 'x stand-in: gone (trying again)', 'x stand-in: down (trying again)']);
  });

  it('stop() does not wait out the pause between ticks', async () => {
    const loop = standInLoop(
      'y',
      async () => undefined,
      () => undefined,
      { everyMs: 60_000 },
    );
    await sleep(10);
    const t = Date.now();
    await loop.stop();
    expect(Date.now() - t).toBeLessThan(1_000);
  });

  it('ticks when woken instead of waiting out the pause, once more for wakes during a tick', async () => {
    let ticks = 0;
    let release: () => void = () => undefined;
    const loop = standInLoop(
      'w',
      async () => {
        ticks++;
        if (ticks === 2) await new Promise<void>((r) => (release = r));
      },
      () => undefined,
      { everyMs: 60_000 },
    );
    await sleep(10);
    expect(ticks).toBe(1);
    loop.wake();
    await sleep(10);
    expect(ticks, 'woken: a second tick at once').toBe(2);
    // Two wakes while the second tick runs: one more tick after it, not two, and then the pause.
    loop.wake();
    loop.wake();
    release();
    await sleep(20);
    expect(ticks).toBe(3);
    await loop.stop();
  });

  it('tries a failed tick again after retryMs, not after the whole pause', async () => {
    let ticks = 0;
    const loop = standInLoop(
      'r',
      async () => {
        if (++ticks === 1) throw new Error('conflict');
      },
      () => undefined,
      { everyMs: 60_000, retryMs: 5 },
    );
    await sleep(40);
    await loop.stop();
    expect(ticks).toBe(2);
  });
});
