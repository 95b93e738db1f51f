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

/**
 * The first error of class `C` in `e`'s `cause` chain (`e` itself first), if any: a caller that decides by the kind
 * of error (terminal, a refusal to report as data) still sees it beneath a wrap that only added context.
 */
export function causeOf<C extends Error>(e: unknown, kind: abstract new (...args: never[]) => C): C | undefined {
  for (let c: unknown = e, depth = 0; c instanceof Error && depth < 32; c = c.cause, depth++) if (c instanceof kind) return c;
  return undefined;
}

/** Whether `e`, or an error in its `cause` chain, is terminal: wrapping an error to add context keeps it terminal. */
export function isTerminal(e: unknown): boolean {
  return causeOf(e, TerminalError) !== undefined;
}

export function errorMessage(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}
