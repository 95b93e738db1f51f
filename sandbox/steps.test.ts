import { describe, expect, it } from 'vitest';
import { Interrupted, Steps } from './steps';

describe('Steps', () => {
  it('prints each step with its timing and keeps it', async () => {
    let out = '';
    const steps = new Steps((t) => (out += t));
    expect(await steps.run('first', async () => 42)).toBe(42);
    await expect(steps.run('second', () => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    expect(out).toMatch(/^\n\[1\] first\n {4}✓ \d+\.\d s\n\n\[2\] second\n {4}✗ failed after \d+\.\d s\n$/);
    expect(steps.timings.map((t) => t.step)).toEqual(['first']);
  });

  it('ends the running step at Ctrl-C, and settled() waits for the work it had started', async () => {
    const abort = new AbortController();
    const steps = new Steps(() => undefined, abort.signal);
    let finished = false;
    const running = steps.run('slow', async () => {
      await new Promise((r) => setTimeout(r, 200));
      finished = true;
    });
    setTimeout(() => abort.abort(), 20);
    await expect(running).rejects.toBeInstanceOf(Interrupted);
    expect(finished).toBe(false);
    await steps.settled();
    expect(finished).toBe(true);
  });
});
