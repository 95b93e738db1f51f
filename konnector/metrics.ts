/**
 * The konnector's own metrics, beside the controller machinery's (queue depth, reconciles, retries): how long a
 * change takes to cross clusters, per direction, and what fails.
 */
import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

export type Direction = 'up' | 'down' | 'claims' | 'delete';

export interface KonnectorMetrics {
  /** From the event that announced a change to the write that carried it across. */
  readonly syncSeconds: Histogram<'direction'>;
  readonly syncErrors: Counter<'direction'>;
  readonly connections: Gauge;
  readonly heartbeats: Counter<'result'>;
  /** 1 while an APIServiceBinding is Ready, 0 while it is not; gone with the binding. */
  readonly bindingReady: Gauge<'binding_namespace' | 'binding'>;
}

export function konnectorMetrics(registry: Registry): KonnectorMetrics {
  return {
    syncSeconds: new Histogram({
      name: 'klutch_konnector_sync_duration_seconds',
      help: 'Time from the event that announced a change to the write that carried it to the other cluster, by direction (up: spec, down: status, claims: Secrets/ConfigMaps, delete: upstream deletion).',
      labelNames: ['direction'],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    syncErrors: new Counter({
      name: 'klutch_konnector_sync_errors_total',
      help: 'Failed sync attempts by direction (retried with backoff).',
      labelNames: ['direction'],
      registers: [registry],
    }),
    connections: new Gauge({ name: 'klutch_konnector_provider_connections', help: 'Open provider connections.', registers: [registry] }),
    heartbeats: new Counter({
      name: 'klutch_konnector_heartbeats_total',
      help: 'Heartbeats written into ClusterBindings, by result.',
      labelNames: ['result'],
      registers: [registry],
    }),
    bindingReady: new Gauge({
      name: 'klutch_konnector_binding_ready',
      help: 'Whether an APIServiceBinding is Ready (1) or not (0), by its namespace and name.',
      // Not `namespace`: Prometheus sets that target label to the konnector Pod's and renames ours exported_namespace.
      labelNames: ['binding_namespace', 'binding'],
      registers: [registry],
    }),
  };
}

/**
 * Remembers when a key was first announced since its last reconcile, so a write can be timed from the event that
 * caused it. Entries are dropped after every reconcile of the key: the map never outgrows the keys in the queue.
 */
export class Stopwatch {
  private readonly since = new Map<string, number>();
  mark(key: string): void {
    if (!this.since.has(key)) this.since.set(key, performance.now());
  }
  /** Seconds since the key was marked (0 when it was not). */
  elapsed(key: string): number {
    const t = this.since.get(key);
    return t === undefined ? 0 : (performance.now() - t) / 1000;
  }
  clear(key: string): void {
    this.since.delete(key);
  }
}
