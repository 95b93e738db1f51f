/**
 * Scrape targets for the Prometheus Operator: a ServiceMonitor for the bind backend (its Service's `metrics` port), a
 * PodMonitor for the konnector (its `probes` port, in the app cluster) and one for the composition function (the Pods
 * Crossplane runs for the Function, port `metrics`). Field names as in monitoring.coreos.com/v1.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { selectorLabels } from '../lib/workload';

export interface ScrapeProps {
  readonly namespace: string;
  /** Labels the Prometheus Operator's `serviceMonitorSelector`/`podMonitorSelector` matches. @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** @default 30s */
  readonly interval?: string;
}

const meta = (name: string, p: ScrapeProps) => ({ name, namespace: p.namespace, ...(p.labels ? { labels: { ...p.labels } } : {}) });

/** ServiceMonitor `klutch-bind-backend`: the backend Service's `metrics` port. */
export class BackendServiceMonitor extends Construct {
  constructor(scope: Construct, id: string, p: ScrapeProps) {
    super(scope, id);
    new ApiObject(this, 'ServiceMonitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'ServiceMonitor',
      metadata: meta('klutch-bind-backend', p),
      spec: {
        selector: { matchLabels: selectorLabels('klutch-bind-backend') },
        endpoints: [{ port: 'metrics', path: '/metrics', interval: p.interval ?? '30s' }],
      },
    });
  }
}

/** PodMonitor `konnector`: the konnector Pods' `probes` port (/metrics beside /healthz and /readyz). */
export class KonnectorPodMonitor extends Construct {
  constructor(scope: Construct, id: string, p: ScrapeProps) {
    super(scope, id);
    new ApiObject(this, 'PodMonitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: meta('konnector', p),
      spec: {
        selector: { matchLabels: selectorLabels('konnector') },
        podMetricsEndpoints: [{ port: 'probes', path: '/metrics', interval: p.interval ?? '30s' }],
      },
    });
  }
}

/** PodMonitor `<function>`: the Pods Crossplane runs for the Function (label `pkg.crossplane.io/function`), port `metrics`. */
export class FunctionPodMonitor extends Construct {
  constructor(scope: Construct, id: string, p: ScrapeProps & { readonly functionName: string }) {
    super(scope, id);
    new ApiObject(this, 'PodMonitor', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PodMonitor',
      metadata: meta(p.functionName, p),
      spec: {
        selector: { matchLabels: { 'pkg.crossplane.io/function': p.functionName } },
        podMetricsEndpoints: [{ port: 'metrics', path: '/metrics', interval: p.interval ?? '30s' }],
      },
    });
  }
}
