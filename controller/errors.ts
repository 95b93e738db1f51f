import { causeOf } from '../lib/errors';

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

/** The cause-chain reader every caller shares (lib/errors.ts). */
export { causeOf };

/** Whether `e`, or an error in its `cause` chain, is terminal: wrapping an error to add context keeps it terminal. */
export function isTerminal(e: unknown): boolean {
  return causeOf(e, TerminalError) !== undefined;
}
