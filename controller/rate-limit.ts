/**
 * A client-side request rate limit, as client-go's token bucket (`--kube-api-qps`, `--kube-api-burst`): on average
 * `qps` requests a second, with bursts of up to `burst`. Callers that find the bucket empty reserve the next token and
 * wait for it, so waiting callers go in the order they came and none waits longer than its place in line.
 */
export interface RateLimit {
  /** Requests per second on average. */
  readonly qps: number;
  /** Requests allowed at once after a quiet spell. */
  readonly burst: number;
}

export class TokenBucket {
  private tokens: number;
  private last = performance.now();

  constructor(private readonly limit: RateLimit) {
    if (!(limit.qps > 0) || !Number.isFinite(limit.qps)) throw new Error(`rate limit: qps ${limit.qps} must be a positive number`);
    if (!Number.isInteger(limit.burst) || limit.burst < 1)
      throw new Error(`rate limit: burst ${limit.burst} must be a whole number of at least 1`);
    this.tokens = limit.burst;
  }

  /** Resolves when the caller may send its request. */
  take(): Promise<void> {
    const now = performance.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((now - this.last) / 1000) * this.limit.qps);
    this.last = now;
    // A negative count is the line of callers that have reserved tokens not yet made.
    this.tokens -= 1;
    if (this.tokens >= 0) return Promise.resolve();
    const waitMs = (-this.tokens / this.limit.qps) * 1000;
    return new Promise((resolve) => setTimeout(resolve, waitMs));
  }
}
