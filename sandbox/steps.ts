/**
 * The sandbox's progress output: each step on a line of its own with how long it took, detail lines indented under
 * it, and every timing kept for the summary (and for the test that runs the sandbox).
 */
export interface StepTiming {
  readonly step: string;
  readonly ms: number;
}

/** Work started before its step, because it needs less than the steps before it: its step joins it. */
export interface Ahead<T> {
  /** Inside its step: prints what the work said so far (and from then on as it says it) and waits for it. */
  join(): Promise<T>;
}

export class Steps {
  readonly timings: StepTiming[] = [];
  private readonly started = Date.now();
  /** The running step's own promise: an interrupted step runs on until it returns. */
  private inFlight: Promise<unknown> = Promise.resolve();
  /** Work started ahead of its step (`ahead`), each until it returns. */
  private readonly aheads: Promise<unknown>[] = [];

  /** `signal` (Ctrl-C) ends the running step at once with an `Interrupted` error. */
  constructor(
    private readonly write: (text: string) => void,
    private readonly signal?: AbortSignal,
  ) {}

  /** A detail line under the current step. */
  say(line: string): void {
    this.write(`    ${line}\n`);
  }

  /** Runs one step: prints its title, then `✓ <seconds>` when done or `✗` with the error when it fails. */
  async run<T>(title: string, fn: () => Promise<T>): Promise<T> {
    // After Ctrl-C no step starts: it would start what the stop then waits for and ends (a node, 30 s and more).
    if (this.signal?.aborted) throw new Interrupted();
    const n = this.timings.length + 1;
    this.write(`\n[${n}] ${title}\n`);
    const t = Date.now();
    try {
      const p = fn();
      this.inFlight = p.catch(() => undefined);
      const v = await this.interruptible(p);
      const ms = Date.now() - t;
      this.timings.push({ step: title, ms });
      this.write(`    ✓ ${seconds(ms)}\n`);
      return v;
    } catch (e) {
      this.write(`    ✗ failed after ${seconds(Date.now() - t)}\n`);
      throw e;
    }
  }

  /**
   * Starts `fn` now, beside the running step; its lines are held until the step that needs its result calls `join()`,
   * so the output reads as if it ran there. settled() waits for it too.
   */
  ahead<T>(fn: (say: (line: string) => void) => Promise<T>): Ahead<T> {
    const held: string[] = [];
    let joined = false;
    const p = fn((line) => (joined ? this.say(line) : held.push(line)));
    const settled = p.catch(() => undefined); // awaited by join(); a failure before then must not be unhandled
    this.aheads.push(settled);
    return {
      join: () => {
        joined = true;
        for (const line of held.splice(0)) this.say(line);
        return p;
      },
    };
  }

  private interruptible<T>(p: Promise<T>): Promise<T> {
    const signal = this.signal;
    if (!signal) return p;
    let onAbort = () => {};
    const aborted = new Promise<never>((_, reject) => {
      onAbort = () => reject(new Interrupted());
      if (signal.aborted) onAbort();
      else signal.addEventListener('abort', onAbort, { once: true });
    });
    return Promise.race([p, aborted]).finally(() => signal.removeEventListener('abort', onAbort));
  }

  /**
   * Resolves once the step that was running, and the work started ahead of its step, have returned or failed. After
   * Ctrl-C their work goes on (a node half started, an image being built): what it starts is registered for stop()
   * only when it returns.
   */
  settled(): Promise<void> {
    return Promise.all([this.inFlight, ...this.aheads]).then(() => undefined);
  }

  /** Seconds since the sandbox started. */
  total(): string {
    return seconds(Date.now() - this.started);
  }
}

export const seconds = (ms: number): string => `${(ms / 1000).toFixed(1)} s`;

/** A step ended by Ctrl-C. */
export class Interrupted extends Error {
  constructor() {
    super('interrupted');
  }
}
