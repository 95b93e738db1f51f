/**
 * An error a retry cannot fix (a spec that can never be valid, a missing permission the operator must grant): the
 * controller records and logs it and drops the key until an event enqueues it again, instead of retrying with
 * backoff. Every other error is retried.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}

/** Whether `e`, or an error in its `cause` chain, is terminal: wrapping an error to add context keeps it terminal. */
export function isTerminal(e: unknown): boolean {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 32; c = c.cause, depth++) if (c instanceof TerminalError) return true;
  return false;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
