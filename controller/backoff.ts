/**
 * Capped exponential backoff, the one formula of every retry here: the work queue's per-key delays, an informer's
 * restarts, and the retry loops outside the queue (the backend's start-up steps, the konnector's CRD install, an
 * unreachable app cluster).
 */

export interface Backoff {
  /** The delay after the first failure. */
  readonly baseMs: number;
  /** No delay is longer. */
  readonly maxMs: number;
}

/** The delay after `failures` earlier failures: `baseMs` × 2^failures, at most `maxMs`. */
export function backoffDelay(failures: number, b: Backoff): number {
  // The exponent is capped so that a long outage never makes 0 × Infinity (NaN) of a zero base.
  return Math.min(b.maxMs, b.baseMs * 2 ** Math.min(Math.max(0, failures), 30));
}
