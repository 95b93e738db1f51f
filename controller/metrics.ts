/**
 * The Prometheus metrics every controller reports, registered once per registry (several controllers share one
 * process-wide registry; prom-client refuses a metric name twice).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export interface ControllerMetrics {
  /** Reconciles by controller and result: `success`, `requeue`, `error`, `terminal`. */
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly reconcileSeconds: Histogram<'controller'>;
  /** How long keys waited in the queue before a worker took them. */
  readonly queueWaitSeconds: Histogram<'controller'>;
  readonly queueDepth: Gauge<'controller'>;
  readonly retries: Counter<'controller'>;
}

const byRegistry = new WeakMap<Registry, ControllerMetrics>();
/** Depth readers per registry, read when the registry is scraped. */
const depthReaders = new WeakMap<Registry, Map<string, () => number>>();

const BUCKETS = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

export function controllerMetrics(registry: Registry): ControllerMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  const readers = new Map<string, () => number>();
  depthReaders.set(registry, readers);
  const m: ControllerMetrics = {
    reconciles: new Counter({
      name: 'klutch_controller_reconcile_total',
      help: 'Reconciles by controller and result (success, requeue, error, terminal).',
      labelNames: ['controller', 'result'],
      registers: [registry],
    }),
    reconcileSeconds: new Histogram({
      name: 'klutch_controller_reconcile_duration_seconds',
      help: 'Time spent in one reconcile.',
      labelNames: ['controller'],
      buckets: BUCKETS,
      registers: [registry],
    }),
    queueWaitSeconds: new Histogram({
      name: 'klutch_workqueue_wait_duration_seconds',
      help: 'How long a key waited in the work queue before a worker took it.',
      labelNames: ['controller'],
      buckets: BUCKETS,
      registers: [registry],
    }),
    queueDepth: new Gauge({
      name: 'klutch_workqueue_depth',
      help: 'Keys waiting in the work queue (not in flight, not delayed).',
      labelNames: ['controller'],
      registers: [registry],
      collect() {
        for (const [controller, read] of readers) this.set({ controller }, read());
      },
    }),
    retries: new Counter({
      name: 'klutch_workqueue_retries_total',
      help: 'Keys queued again after a failed reconcile.',
      labelNames: ['controller'],
      registers: [registry],
    }),
  };
  byRegistry.set(registry, m);
  return m;
}

/** Reports the depth of a controller's queue when the registry is scraped. */
export function registerQueueDepth(registry: Registry, controller: string, read: () => number): void {
  controllerMetrics(registry);
  depthReaders.get(registry)?.set(controller, read);
}
