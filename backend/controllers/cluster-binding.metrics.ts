/**
 * `klutch_cluster_binding_healthy{cluster_namespace,reason}`: the control plane's own view of each consumer's
 * heartbeats, the verdict the ClusterBinding controller writes as `Healthy` (`health()`), worked out at each scrape
 * so it falls due on time. Konnector metrics live in the app clusters; an operator who scrapes only the control
 * plane still sees an app cluster whose konnector stopped.
 *
 * Only the replica that leads has the ClusterBindings cached: the others export no series, and a replica that lost
 * the lead drops its series at once, so `max by (cluster_namespace)` over replicas never reads a stale verdict.
 */
import { Gauge, type Registry } from 'prom-client';
import type { ClusterBinding } from '../../exports/bind-api';
import { CREDENTIALS_REVOKED, health } from './cluster-binding.reconcile';

const CLUSTER_BINDING_HEALTHY = 'klutch_cluster_binding_healthy';

export interface ClusterBindingHealth {
  /** Where the ClusterBindings are read at each scrape, while this replica leads; undefined: none exported. */
  observe(source: (() => readonly ClusterBinding[]) | undefined): void;
}

const byRegistry = new WeakMap<Registry, ClusterBindingHealth>();

/** The gauge on `registry` (one per registry: prom-client refuses a name twice). */
export function clusterBindingHealth(registry: Registry, now: () => number = Date.now): ClusterBindingHealth {
  const existing = byRegistry.get(registry);
  if (existing) return existing;
  let source: (() => readonly ClusterBinding[]) | undefined;
  new Gauge({
    name: CLUSTER_BINDING_HEALTHY,
    help: "1 when the konnector of the consumer's cluster namespace heartbeats in time, else 0 with the reason (the ClusterBinding's Healthy condition); exported by the leading replica only.",
    labelNames: ['cluster_namespace', 'reason'],
    registers: [registry],
    collect() {
      this.reset();
      const at = now();
      for (const b of source?.() ?? []) {
        const ns = b.metadata.namespace;
        if (!ns || b.metadata.deletionTimestamp) continue;
        // A consumer whose credentials were revoked for silence is known to be gone: said so, not as a timeout.
        const revoked = b.status?.conditions?.some((c) => c.type === CREDENTIALS_REVOKED && c.status === 'True');
        const h = health(b.status, at);
        this.set({ cluster_namespace: ns, reason: revoked ? CREDENTIALS_REVOKED : (h.reason ?? '') }, h.status === 'True' ? 1 : 0);
      }
    },
  });
  const g: ClusterBindingHealth = {
    observe: (s) => {
      source = s;
    },
  };
  byRegistry.set(registry, g);
  return g;
}
