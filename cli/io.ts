/**
 * What a command talks to besides the clusters: its streams, environment and the signal that Ctrl-C aborts. One
 * object, so `run()` works in-process (unit tests) and as the plugin process alike.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';

export interface Io {
  readonly stdout: Writable;
  readonly stderr: Writable;
  readonly stdin: Readable;
  readonly env: NodeJS.ProcessEnv;
  /** Whether stderr is a terminal: the countdown then updates in place. */
  readonly interactive: boolean;
  /** Aborted on Ctrl-C. */
  readonly signal: AbortSignal;
}

/** The process's own. */
export function processIo(signal: AbortSignal): Io {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    interactive: process.stderr.isTTY === true,
    signal,
  };
}

/** Line-by-line answers from stdin, one reader for the whole run (several prompts read successive lines). */
export class Answers {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private waiting: ((line: string | undefined) => void) | undefined;
  private ended = false;

  constructor(private readonly stdin: Readable) {}

  /** The next line, or undefined at the end of input. */
  next(): Promise<string | undefined> {
    if (!this.rl) {
      this.rl = createInterface({ input: this.stdin, terminal: false });
      this.rl.on('line', (l) => (this.waiting ? (this.waiting(l), (this.waiting = undefined)) : this.lines.push(l)));
      this.rl.on('close', () => {
        this.ended = true;
        this.waiting?.(undefined);
        this.waiting = undefined;
      });
    }
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((r) => (this.waiting = r));
  }

  close(): void {
    this.rl?.close();
  }
}
