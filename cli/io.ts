/**
 * What a command talks to besides the clusters: its streams, environment and the signal that Ctrl-C aborts. One
 * object, so `run()` works in-process (unit tests) and as the plugin process alike.
 */
import { createInterface, type Interface } from 'node:readline';
import type { Readable, Writable } from 'node:stream';
import { CliError, ExitCode } from './errors';

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

/**
 * Line-by-line answers from stdin, one reader for the whole run (several prompts read successive lines). Ctrl-C
 * (`signal`) ends a prompt that waits, with exit code 130, as it ends every other wait.
 */
export class Answers {
  private rl: Interface | undefined;
  private readonly lines: string[] = [];
  private waiting: { resolve: (line: string | undefined) => void; reject: (e: unknown) => void } | undefined;
  private ended = false;
  private readonly onAbort = () => {
    this.waiting?.reject(interrupted());
    this.waiting = undefined;
  };

  constructor(
    private readonly stdin: Readable,
    private readonly signal?: AbortSignal,
  ) {
    signal?.addEventListener('abort', this.onAbort, { once: true });
  }

  /** The next line, or undefined at the end of input. */
  next(): Promise<string | undefined> {
    if (this.signal?.aborted) return Promise.reject(interrupted());
    if (!this.rl) {
      this.rl = createInterface({ input: this.stdin, terminal: false });
      this.rl.on('line', (l) => {
        if (!this.waiting) return void this.lines.push(l);
        this.waiting.resolve(l);
        this.waiting = undefined;
      });
      this.rl.on('close', () => {
        this.ended = true;
        this.waiting?.resolve(undefined);
        this.waiting = undefined;
      });
    }
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    if (this.ended) return Promise.resolve(undefined);
    return new Promise((resolve, reject) => (this.waiting = { resolve, reject }));
  }

  close(): void {
    this.signal?.removeEventListener('abort', this.onAbort);
    this.rl?.close();
  }
}

const interrupted = () => new CliError('interrupted while waiting for an answer', undefined, ExitCode.Interrupted);
