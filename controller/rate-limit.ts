/**
 * A client-side request rate limit, as client-go's token bucket (`--kube-api-qps`, `--kube-api-burst`): on average
 * `qps` requests a second, with bursts of up to `burst`. Callers that find the bucket empty reserve the next token and
 * wait for it, so waiting callers go in the order they came and none waits longer than its place in line.
 */
import { sleep } from '../lib/abort';

export interface RateLimit {
  /** Requests per second on average. */
  readonly qps: number;
  /** Requests allowed at once after a quiet spell. */
  readonly burst: number;
}

export class TokenBucket {
  private tokens: number;
  private last: number;

  /** `now`: the clock the caller uses, in ms (performance.now() by default). */
  constructor(
    private readonly limit: RateLimit,
    now = performance.now(),
  ) {
    if (!(limit.qps > 0) || !Number.isFinite(limit.qps)) throw new Error(`rate limit: qps ${limit.qps} must be a positive number`);
    if (!Number.isInteger(limit.burst) || limit.burst < 1)
      throw new Error(`rate limit: burst ${limit.burst} must be a whole number of at least 1`);
    this.tokens = limit.burst;
    this.last = now;
  }

  private refill(now: number): void {
    this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.last) / 1000) * this.limit.qps);
    this.last = now;
  }

  /** Resolves when the caller may send its request (a client waits its turn). */
  take(): Promise<void> {
    this.refill(performance.now());
    // A negative count is the line of callers that have reserved tokens not yet made.
    this.tokens -= 1;
    if (this.tokens >= 0) return Promise.resolve();
    const waitMs = (-this.tokens / this.limit.qps) * 1000;
    return sleep(waitMs);
  }

  /** Takes a token if there is one and answers 0; else takes nothing and answers the ms until one is there (a server refuses). */
  tryTake(now = performance.now()): number {
    this.refill(now);
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return 0;
    }
    return Math.ceil(((1 - this.tokens) / this.limit.qps) * 1000);
  }

  /** Whether it has refilled to its burst (a bucket in that state is the same as a new one). */
  full(now = performance.now()): boolean {
    this.refill(now);
    return this.tokens >= this.limit.burst;
  }
}
