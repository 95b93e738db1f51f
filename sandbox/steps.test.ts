import { describe, expect, it } from 'vitest';
import { Interrupted, Steps } from './steps';
import { sleep } from '../lib/abort';

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
      await sleep(200);
      finished = true;
    });
    setTimeout(() => abort.abort(), 20);
    await expect(running).rejects.toBeInstanceOf(Interrupted);
    expect(finished).toBe(false);
    await steps.settled();
    expect(finished).toBe(true);
  });

  it('starts no step after Ctrl-C: the next step throws Interrupted without running its work or printing its title', async () => {
    let out = '';
    const abort = new AbortController();
    const steps = new Steps((t) => (out += t), abort.signal);
    await steps.run('first', async () => 1);
    abort.abort();
    let started = false;
    await expect(steps.run('second', async () => void (started = true))).rejects.toBeInstanceOf(Interrupted);
    expect(started).toBe(false);
    expect(out).not.toContain('[2] second');
    await steps.settled();
  });

  it('runs work ahead of its step: its lines appear under the step that joins it, and settled() waits for it', async () => {
    let out = '';
    const steps = new Steps((t) => (out += t));
    let release = () => {};
    const gate = new Promise<void>((r) => (release = r));
    const ahead = steps.ahead(async (say) => {
      say('said before its step');
      await gate;
      say('said after the join');
      return 7;
    });
    await steps.run('first', async () => 1);
    expect(out).not.toContain('said before its step');
    let settled = false;
    void steps.settled().then(() => (settled = true));
    const joined = steps.run('second', () => ahead.join());
    await sleep(10);
    expect(out).toMatch(/\[2\] second\n {4}said before its step\n$/);
    expect(settled).toBe(false);
    release();
    expect(await joined).toBe(7);
    expect(out).toMatch(/\[2\] second\n {4}said before its step\n {4}said after the join\n {4}✓ \d+\.\d s\n$/);
    await steps.settled();
    expect(settled).toBe(true);
  });

  it('keeps a failure of work ahead for its step, not as an unhandled rejection', async () => {
    const steps = new Steps(() => undefined);
    const ahead = steps.ahead(() => Promise.reject(new Error('ahead failed')));
    await sleep(10);
    await steps.settled();
    await expect(steps.run('its step', () => ahead.join())).rejects.toThrow('ahead failed');
  });
});
