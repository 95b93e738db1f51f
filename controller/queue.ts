/**
 * A keyed work queue with client-go's semantics:
 * - de-duplication: a key that is waiting is queued once, however often it is added;
 * - a key is never processed by two workers at once: added while in flight, it is queued again when `done`;
 * - delayed adds (`addAfter`), keeping the earliest when a key is delayed twice;
 * - per-key exponential backoff for failures (`addRateLimited`), capped, reset by `forget`;
 * - `shutDown` stops handing out keys; `drain` waits for the keys in flight.
 *
 * Memory is bounded by the number of distinct keys, never by the number of events.
 */
import { backoffDelay } from './backoff';

export interface WorkQueueOptions {
  /** First retry delay after a failure. @default 50 */
  readonly baseDelayMs?: number;
  /** Longest retry delay. @default 30_000 */
  readonly maxDelayMs?: number;
  /** Called when a key is handed to a worker, with how long it waited since it was (last) queued. */
  readonly onGet?: (key: string, waitedMs: number) => void;
  /** Called on every add, de-duplicated or not (client-go's `workqueue_adds_total` counts them so). */
  readonly onAdd?: (key: string) => void;
}

export class WorkQueue {
  private readonly baseDelayMs: number;
  private readonly maxDelayMs: number;
  private readonly onGet?: (key: string, waitedMs: number) => void;
  private readonly onAdd?: (key: string) => void;
  /** Keys waiting to be processed, in order. */
  private readonly queue: string[] = [];
  /** Keys that need processing (queued, or added again while in flight), with when they were added. */
  private readonly dirty = new Map<string, number>();
  private readonly processing = new Set<string>();
  private readonly failures = new Map<string, number>();
  private readonly timers = new Map<string, { at: number; timer: NodeJS.Timeout }>();
  private readonly waiters: ((key: string | undefined) => void)[] = [];
  private drainWaiters: (() => void)[] = [];
  private shuttingDown = false;

  constructor(o: WorkQueueOptions = {}) {
    this.baseDelayMs = o.baseDelayMs ?? 50;
    this.maxDelayMs = o.maxDelayMs ?? 30_000;
    if (this.baseDelayMs <= 0 || this.maxDelayMs < this.baseDelayMs) {
      throw new Error(`work queue: baseDelayMs (${this.baseDelayMs}) must be > 0 and <= maxDelayMs (${this.maxDelayMs})`);
    }
    this.onGet = o.onGet;
    this.onAdd = o.onAdd;
  }

  /** Keys waiting (not counting those in flight or delayed). */
  get length(): number {
    return this.queue.length;
  }

  /** Keys in flight. */
  get inFlight(): number {
    return this.processing.size;
  }

  /** Keys waiting for a delayed add or a retry. */
  get delayed(): number {
    return this.timers.size;
  }

  get isShuttingDown(): boolean {
    return this.shuttingDown;
  }

  /** Queues `key` unless it is already waiting; a key in flight is queued again once it is done. */
  add(key: string): void {
    if (this.shuttingDown) return;
    this.onAdd?.(key);
    if (this.dirty.has(key)) return;
    this.dirty.set(key, Date.now());
    if (this.processing.has(key)) return;
    const waiter = this.waiters.shift();
    if (waiter) this.hand(key, waiter);
    else this.queue.push(key);
  }

  /** Queues `key` after `ms`; an earlier pending add of the same key wins. */
  addAfter(key: string, ms: number): void {
    if (this.shuttingDown) return;
    if (ms <= 0) return this.add(key);
    const at = Date.now() + ms;
    const pending = this.timers.get(key);
    if (pending && pending.at <= at) return;
    if (pending) clearTimeout(pending.timer);
    const timer = setTimeout(() => {
      this.timers.delete(key);
      this.add(key);
    }, ms);
    timer.unref();
    this.timers.set(key, { at, timer });
  }

  /** Queues `key` after its backoff: base × 2^(failures so far), capped. */
  addRateLimited(key: string): void {
    const n = this.failures.get(key) ?? 0;
    this.failures.set(key, n + 1);
    this.addAfter(key, this.backoff(n));
  }

  /** The delay the `n`-th consecutive failure (from 0) waits. */
  backoff(n: number): number {
    return backoffDelay(n, { baseMs: this.baseDelayMs, maxMs: this.maxDelayMs });
  }

  /** How often `key` failed in a row. */
  numRequeues(key: string): number {
    return this.failures.get(key) ?? 0;
  }

  /** Clears the backoff of `key` (it succeeded, or failed for good). */
  forget(key: string): void {
    this.failures.delete(key);
  }

  /** The next key, or undefined once the queue shuts down. Call `done(key)` when finished with it. */
  get(): Promise<string | undefined> {
    if (this.shuttingDown) return Promise.resolve(undefined);
    const key = this.queue.shift();
    if (key !== undefined) return new Promise((resolve) => this.hand(key, resolve));
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  /** Marks `key` finished; if it was added meanwhile, it is queued again. */
  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key) && !this.shuttingDown) {
      const waiter = this.waiters.shift();
      if (waiter) this.hand(key, waiter);
      else this.queue.push(key);
    }
    if (this.processing.size === 0) {
      const w = this.drainWaiters;
      this.drainWaiters = [];
      for (const f of w) f();
    }
  }

  /** Stops handing out keys (waiting `get`s resolve undefined) and drops waiting and delayed keys. */
  shutDown(): void {
    this.shuttingDown = true;
    for (const { timer } of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    this.queue.length = 0;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  /** Resolves when no key is in flight. */
  drain(): Promise<void> {
    if (this.processing.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.drainWaiters.push(resolve));
  }

  private hand(key: string, to: (key: string) => void): void {
    const since = this.dirty.get(key) ?? Date.now();
    this.dirty.delete(key);
    this.processing.add(key);
    this.onGet?.(key, Date.now() - since);
    to(key);
  }
}
