import { describe, expect, it } from 'vitest';
import { standInLoop } from './stand-in-loop';

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

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
    while (ticks < errors.length + 2) await pause(5);
    await loop.stop();
    const after = ticks;
    await pause(30);
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
    await pause(10);
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
    await pause(10);
    expect(ticks).toBe(1);
    loop.wake();
    await pause(10);
    expect(ticks, 'woken: a second tick at once').toBe(2);
    // Two wakes while the second tick runs: one more tick after it, not two, and then the pause.
    loop.wake();
    loop.wake();
    release();
    await pause(20);
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
    await pause(40);
    await loop.stop();
    expect(ticks).toBe(2);
  });
});
