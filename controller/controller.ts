/**
 * A controller: informers map events to keys, a keyed work queue de-duplicates them, and workers run a level-based
 * reconcile per key. The reconcile re-reads what it needs (from informer caches), treats a missing object as done,
 * and returns nothing (done), `{ requeueAfterMs }` (look again later), or throws: a `TerminalError` is logged and not
 * retried; any other error is retried with the queue's capped exponential backoff.
 *
 * Written once for the bind backend and the konnector (kube-bind copies this loop into every controller).
 */
import { randomUUID } from 'node:crypto';
import { pino, type Logger } from 'pino';
import { Registry } from 'prom-client';
import { isTerminal } from './errors';
import type { InformerEvent, InformerObject, WatchInformer } from './informer';
import { controllerMetrics, registerQueue, type ControllerMetrics, type ReconcileOutcome } from './metrics';
import { WorkQueue } from './queue';

export interface ReconcileContext {
  /** The controller's logger with the key bound. */
  readonly log: Logger;
  /** Aborted when the controller stops; long waits inside a reconcile should honour it. */
  readonly signal: AbortSignal;
}

export type ReconcileResult = { readonly requeueAfterMs?: number } | undefined | void;

export type Reconcile = (key: string, ctx: ReconcileContext) => Promise<ReconcileResult>;

export interface ControllerOptions {
  /** Names the controller in logs and metrics (`exportrequests`). */
  readonly name: string;
  readonly reconcile: Reconcile;
  /** Keys reconciled at once (never the same key twice at once). @default 1 */
  readonly workers?: number;
  /** @default a silent logger */
  readonly log?: Logger;
  /** Where the controller's metrics go. @default a registry of its own */
  readonly registry?: Registry;
  /** @default 50 */
  readonly baseDelayMs?: number;
  /** @default 30_000 */
  readonly maxDelayMs?: number;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue;
  private readonly reconcileFn: Reconcile;
  private readonly workers: number;
  private readonly log: Logger;
  private readonly metrics: ControllerMetrics;
  /** client-go names a queue; ours is the controller's. */
  private readonly queueLabels: { controller: string; name: string };
  private readonly unwatch: (() => void)[] = [];
  /** When each reconcile in flight started (performance.now), by key: the queue hands out a key once at a time. */
  private readonly started = new Map<string, number>();
  private running = false;

  constructor(o: ControllerOptions) {
    if (!o.name) throw new Error('controller: name is required');
    this.name = o.name;
    this.workers = o.workers ?? 1;
    if (!Number.isInteger(this.workers) || this.workers < 1)
      throw new Error(`controller ${o.name}: workers must be a positive integer, not ${o.workers}`);
    this.reconcileFn = o.reconcile;
    this.log = (o.log ?? pino({ level: 'silent' })).child({ controller: o.name });
    const registry = o.registry ?? new Registry();
    this.metrics = controllerMetrics(registry);
    this.queueLabels = { controller: o.name, name: o.name };
    this.queue = new WorkQueue({
      baseDelayMs: o.baseDelayMs,
      maxDelayMs: o.maxDelayMs,
      onAdd: () => this.metrics.adds.inc(this.queueLabels),
      onGet: (_key, waitedMs) => this.metrics.queueSeconds.observe(this.queueLabels, waitedMs / 1000),
    });
    this.metrics.maxConcurrent.set({ controller: o.name }, this.workers);
    this.metrics.activeWorkers.set({ controller: o.name }, 0);
    registerQueue(registry, o.name, {
      depth: () => this.queue.length,
      working: () => {
        const now = performance.now();
        return [...this.started.values()].map((t) => (now - t) / 1000);
      },
    });
  }

  /** Enqueues the keys `map` returns for every add, update and delete of the informer's objects. */
  watch<T extends InformerObject>(informer: WatchInformer<T>, map: (obj: T, event: InformerEvent) => readonly string[]): this {
    for (const event of ['add', 'update', 'delete'] as const) {
      const cb = (obj: T) => {
        let keys: readonly string[];
        try {
          keys = map(obj, event);
        } catch (e) {
          this.log.error({ err: e, event, object: obj.metadata?.name }, 'cannot map an event to keys; event dropped');
          return;
        }
        for (const k of keys) this.queue.add(k);
      };
      informer.on(event, cb);
      this.unwatch.push(() => informer.off(event, cb));
    }
    return this;
  }

  enqueue(key: string): void {
    this.queue.add(key);
  }

  enqueueAfter(key: string, ms: number): void {
    this.queue.addAfter(key, ms);
  }

  /**
   * Runs the workers until `signal` aborts, then stops taking keys and resolves once the reconciles in flight have
   * finished (graceful shutdown: nothing is cut off half-way).
   */
  async run(signal: AbortSignal): Promise<void> {
    if (this.running) throw new Error(`controller ${this.name} is already running`);
    this.running = true;
    const stop = () => this.queue.shutDown();
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
    this.log.info({ workers: this.workers }, 'controller started');
    try {
      await Promise.all(Array.from({ length: this.workers }, () => this.worker(signal)));
      await this.queue.drain();
    } finally {
      signal.removeEventListener('abort', stop);
      for (const u of this.unwatch.splice(0)) u();
      this.running = false;
      this.log.info('controller stopped');
    }
  }

  private async worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.reconcileOne(key, signal);
      } finally {
        this.queue.done(key);
      }
    }
  }

  /** One reconcile of `key` and what follows from its outcome. */
  private async reconcileOne(key: string, signal: AbortSignal): Promise<void> {
    // controller-runtime's field: every line of one reconcile, the reconciler's own too, shares it.
    const log = this.log.child({ key, reconcileID: randomUUID() });
    const started = performance.now();
    this.started.set(key, started);
    const labels = { controller: this.name };
    const count = (result: ReconcileOutcome) => this.metrics.reconciles.inc({ ...labels, result });
    this.metrics.activeWorkers.inc(labels);
    try {
      const result = await this.reconcileFn(key, { log, signal });
      this.queue.forget(key);
      if (result?.requeueAfterMs !== undefined) {
        this.queue.addAfter(key, result.requeueAfterMs);
        count('requeue_after');
      } else {
        count('success');
      }
    } catch (e) {
      count('error');
      this.metrics.reconcileErrors.inc(labels);
      if (isTerminal(e)) {
        this.queue.forget(key);
        this.metrics.terminalErrors.inc(labels);
        log.error({ err: e }, 'reconcile failed for good; not retried until the object changes');
      } else {
        this.metrics.retries.inc(this.queueLabels);
        const retries = this.queue.numRequeues(key);
        this.queue.addRateLimited(key);
        log.warn({ err: e, retries: retries + 1, retryInMs: this.queue.backoff(retries) }, 'reconcile failed; retrying');
      }
    } finally {
      const seconds = (performance.now() - started) / 1000;
      this.started.delete(key);
      this.metrics.activeWorkers.dec(labels);
      this.metrics.reconcileSeconds.observe(labels, seconds);
      this.metrics.workSeconds.observe(this.queueLabels, seconds);
    }
  }
}
