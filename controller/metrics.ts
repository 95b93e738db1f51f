/**
 * The Prometheus metrics every controller reports, under controller-runtime's and client-go's names and labels
 * (`controller_runtime_reconcile_total{controller,result}`, `workqueue_depth{controller,name}`,
 * `leader_election_master_status{name}`, ...), so the dashboards and alerts operators already keep for
 * controller-runtime projects work on ours unchanged. Registered once per registry (several controllers share one
 * process-wide registry; prom-client refuses a metric name twice).
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/** controller-runtime's reconcile results; a terminal error counts as `error` and in `terminalErrors` too. */
export type ReconcileOutcome = 'success' | 'requeue_after' | 'error';

export interface ControllerMetrics {
  readonly reconciles: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  /** Errors that are not retried (controller-runtime's `reconcile.TerminalError`). */
  readonly terminalErrors: Counter<'controller'>;
  readonly reconcileSeconds: Histogram<'controller'>;
  readonly maxConcurrent: Gauge<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  /** Every add to a queue, de-duplicated or not (client-go counts them so). */
  readonly adds: Counter<'controller' | 'name'>;
  /** How long keys waited in the queue before a worker took them. */
  readonly queueSeconds: Histogram<'controller' | 'name'>;
  readonly workSeconds: Histogram<'controller' | 'name'>;
  readonly retries: Counter<'controller' | 'name'>;
  readonly queueDepth: Gauge<'controller' | 'name'>;
}

const byRegistry = new WeakMap<Registry, ControllerMetrics>();
/** What a controller's queue reports when the registry is scraped. */
export interface QueueReader {
  /** Keys waiting. */
  depth(): number;
  /** Seconds each reconcile in flight has run so far. */
  working(): readonly number[];
}

/** Queue readers per registry, by controller, read when the registry is scraped. */
const queueReaders = new WeakMap<Registry, Map<string, QueueReader>>();

/** controller-runtime's reconcile-time buckets. */
const RECONCILE_BUCKETS = [
  0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9, 1, 1.25, 1.5, 1.75, 2, 2.5, 3, 3.5, 4, 4.5,
  5, 6, 7, 8, 9, 10, 15, 20, 25, 30, 40, 50, 60,
];
/** client-go's workqueue buckets (1 ns × 10^i up to 10 s, in seconds). */
const QUEUE_BUCKETS = [1e-8, 1e-7, 1e-6, 1e-5, 1e-4, 1e-3, 0.01, 0.1, 1, 10];

/**
 * client-go's `rest_client_requests_total{code,host,method}`: the requests of this process's API clients
 * (controller/clients.ts) by status code, `<error>` where no response came. One per process, as its clients are;
 * every registry with controllers reports it. Watches, long requests of client-node's own, are not counted.
 */
export const restClientRequests = new Counter({
  name: 'rest_client_requests_total',
  help: 'Number of HTTP requests, partitioned by status code, method, and host.',
  labelNames: ['code', 'host', 'method'] as const,
  registers: [],
});

export function controllerMetrics(registry: Registry): ControllerMetrics {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  registry.registerMetric(restClientRequests);
  const readers = new Map<string, QueueReader>();
  queueReaders.set(registry, readers);
  /** Sets `gauge` per controller to `value` of its queue. */
  const perQueue = (gauge: Gauge<'controller' | 'name'>, value: (q: QueueReader) => number) => {
    for (const [controller, q] of readers) gauge.set({ controller, name: controller }, value(q));
  };
  const registers = [registry];
  const m: ControllerMetrics = {
    reconciles: new Counter({
      name: 'controller_runtime_reconcile_total',
      help: 'Total number of reconciliations per controller',
      labelNames: ['controller', 'result'],
      registers,
    }),
    reconcileErrors: new Counter({
      name: 'controller_runtime_reconcile_errors_total',
      help: 'Total number of reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    terminalErrors: new Counter({
      name: 'controller_runtime_terminal_reconcile_errors_total',
      help: 'Total number of terminal reconciliation errors per controller',
      labelNames: ['controller'],
      registers,
    }),
    reconcileSeconds: new Histogram({
      name: 'controller_runtime_reconcile_time_seconds',
      help: 'Length of time per reconciliation per controller',
      labelNames: ['controller'],
      buckets: RECONCILE_BUCKETS,
      registers,
    }),
    maxConcurrent: new Gauge({
      name: 'controller_runtime_max_concurrent_reconciles',
      help: 'Maximum number of concurrent reconciles per controller',
      labelNames: ['controller'],
      registers,
    }),
    activeWorkers: new Gauge({
      name: 'controller_runtime_active_workers',
      help: 'Number of currently used workers per controller',
      labelNames: ['controller'],
      registers,
    }),
    adds: new Counter({
      name: 'workqueue_adds_total',
      help: 'Total number of adds handled by workqueue',
      labelNames: ['controller', 'name'],
      registers,
    }),
    queueSeconds: new Histogram({
      name: 'workqueue_queue_duration_seconds',
      help: 'How long in seconds an item stays in workqueue before being requested',
      labelNames: ['controller', 'name'],
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    workSeconds: new Histogram({
      name: 'workqueue_work_duration_seconds',
      help: 'How long in seconds processing an item from workqueue takes',
      labelNames: ['controller', 'name'],
      buckets: QUEUE_BUCKETS,
      registers,
    }),
    retries: new Counter({
      name: 'workqueue_retries_total',
      help: 'Total number of retries handled by workqueue',
      labelNames: ['controller', 'name'],
      registers,
    }),
    queueDepth: new Gauge({
      name: 'workqueue_depth',
      help: 'Current depth of workqueue',
      labelNames: ['controller', 'name'],
      registers,
      collect() {
        perQueue(this, (q) => q.depth());
      },
    }),
  };
  // client-go's stuck-worker gauges: a reconcile that never returns shows here long before any histogram, which
  // observes only what finished.
  new Gauge({
    name: 'workqueue_unfinished_work_seconds',
    help: "How many seconds of work has been done that is in progress and hasn't been observed by work_duration. Large values indicate stuck threads. One can deduce the number of stuck threads by observing the rate at which this increases.",
    labelNames: ['controller', 'name'],
    registers,
    collect() {
      perQueue(this, (q) => q.working().reduce((a, b) => a + b, 0));
    },
  });
  new Gauge({
    name: 'workqueue_longest_running_processor_seconds',
    help: 'How many seconds has the longest running processor for workqueue been running.',
    labelNames: ['controller', 'name'],
    registers,
    collect() {
      perQueue(this, (q) => Math.max(0, ...q.working()));
    },
  });
  byRegistry.set(registry, m);
  return m;
}

/** Reports a controller's queue (its depth, its reconciles in flight) when the registry is scraped. */
export function registerQueue(registry: Registry, controller: string, q: QueueReader): void {
  controllerMetrics(registry);
  queueReaders.get(registry)?.set(controller, q);
}

const leaderGauges = new WeakMap<Registry, Gauge<'name'>>();

/** client-go's `leader_election_master_status{name}`: 1 while this replica holds the named Lease, else 0. */
export function leaderGauge(registry: Registry): Gauge<'name'> {
  let g = leaderGauges.get(registry);
  if (!g) {
    g = new Gauge({
      name: 'leader_election_master_status',
      help: "Gauge of if the reporting system is master of the relevant lease, 0 indicates backup, 1 indicates master. 'name' is the string used to identify the lease. Please make sure to group by name.",
      labelNames: ['name'],
      registers: [registry],
    });
    leaderGauges.set(registry, g);
  }
  return g;
}

export interface LeaderCampaignMetrics {
  /** `klutch_leader_election_errors_total{name,code}`: Lease requests that failed, by HTTP status or `unreachable`. */
  readonly errors: Counter<'name' | 'code'>;
  /** Adds a Lease to `klutch_leader_election_leaderless_seconds{name}`, read from `seconds` at each scrape. */
  leaderless(name: string, seconds: () => number): void;
}

const campaignMetrics = new WeakMap<Registry, LeaderCampaignMetrics>();

/**
 * What a campaign that cannot win shows: its failed Lease requests, and how long no replica has led as this one sees
 * it (the KlutchNoLeader alert fires when that passes the lease duration on every replica).
 */
export function leaderCampaignMetrics(registry: Registry): LeaderCampaignMetrics {
  const existing = campaignMetrics.get(registry);
  if (existing) return existing;
  const readers = new Map<string, () => number>();
  const errors = new Counter({
    name: 'klutch_leader_election_errors_total',
    help: 'Lease requests of leader election that failed, by Lease name and HTTP status (unreachable: no answer)',
    labelNames: ['name', 'code'],
    registers: [registry],
  });
  new Gauge({
    name: 'klutch_leader_election_leaderless_seconds',
    help: 'Seconds since this replica last saw a replica lead the named Lease (0 while one does): over the lease duration on every replica, nobody leads',
    labelNames: ['name'],
    registers: [registry],
    collect() {
      for (const [name, read] of readers) this.set({ name }, read());
    },
  });
  const m: LeaderCampaignMetrics = { errors, leaderless: (name, seconds) => void readers.set(name, seconds) };
  campaignMetrics.set(registry, m);
  return m;
}
