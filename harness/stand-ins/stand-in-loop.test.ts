import { describe, expect, it } from 'vitest';
import { standInLoop } from './stand-in-loop';

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
      5,
    );
    while (ticks < errors.length + 2) await new Promise((r) => setTimeout(r, 5));
    await loop.stop();
    const after = ticks;
    await new Promise((r) => setTimeout(r, 30));
    expect(ticks).toBe(after);
    expect(said).toEqual(['x stand-in: down (trying again)', 'x stand-in: gone (trying again)', 'x stand-in: down (trying again)']);
  });

  it('stop() does not wait out the pause between ticks', async () => {
    const loop = standInLoop(
      'y',
      async () => undefined,
      () => undefined,
      60_000,
    );
    await new Promise((r) => setTimeout(r, 10));
    const t = Date.now();
    await loop.stop();
    expect(Date.now() - t).toBeLessThan(1_000);
  });
});
