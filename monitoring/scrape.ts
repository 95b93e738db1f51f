/**
 * Scrape targets for the Prometheus Operator: a ServiceMonitor for the bind backend (its Service's `metrics` port), a
 * PodMonitor for the konnector (its `probes` port, in the app cluster) and one for the composition function (the Pods
 * Crossplane runs for the Function, port `metrics`). Field names as in monitoring.coreos.com/v1.
 */
import { ApiObject } from 'cdk8s';
import { Namespaces, NetworkPolicy, NetworkPolicyPort, NetworkPolicyTrafficDefault, Pods } from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import { selectorLabels } from '../lib/workload';

export interface ScrapeProps {
  readonly namespace: string;
  /** Labels the Prometheus Operator's `serviceMonitorSelector`/`podMonitorSelector` matches. @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** @default 30s */
  readonly interval?: string;
}

/** One ServiceMonitor or PodMonitor: what it selects and the named port whose /metrics it scrapes. */
class Monitor extends Construct {
  constructor(
    scope: Construct,
    id: string,
    kind: 'ServiceMonitor' | 'PodMonitor',
    name: string,
    matchLabels: Readonly<Record<string, string>>,
    port: string,
    p: ScrapeProps,
  ) {
    super(scope, id);
    const endpoint = { port, path: '/metrics', interval: p.interval ?? '30s' };
    new ApiObject(this, kind, {
      apiVersion: 'monitoring.coreos.com/v1',
      kind,
      metadata: { name, namespace: p.namespace, ...(p.labels ? { labels: { ...p.labels } } : {}) },
      spec: {
        selector: { matchLabels: { ...matchLabels } },
        ...(kind === 'ServiceMonitor' ? { endpoints: [endpoint] } : { podMetricsEndpoints: [endpoint] }),
      },
    });
  }
}

/** ServiceMonitor `klutch-bind-backend`: the backend Service's `metrics` port. */
export class BackendServiceMonitor extends Monitor {
  constructor(scope: Construct, id: string, p: ScrapeProps) {
    super(scope, id, 'ServiceMonitor', 'klutch-bind-backend', selectorLabels('klutch-bind-backend'), 'metrics', p);
  }
}

/** PodMonitor `konnector`: the konnector Pods' `probes` port (/metrics beside /healthz and /readyz). */
export class KonnectorPodMonitor extends Monitor {
  constructor(scope: Construct, id: string, p: ScrapeProps) {
    super(scope, id, 'PodMonitor', 'konnector', selectorLabels('konnector'), 'probes', p);
  }
}

/** PodMonitor `<function>`: the Pods Crossplane runs for the Function (label `pkg.crossplane.io/function`), port `metrics`. */
export class FunctionPodMonitor extends Monitor {
  constructor(scope: Construct, id: string, p: ScrapeProps & { readonly functionName: string }) {
    super(scope, id, 'PodMonitor', p.functionName, { 'pkg.crossplane.io/function': p.functionName }, 'metrics', p);
  }
}

export interface ScrapeAccessProps {
  /** Where the Pods run. */
  readonly namespace: string;
  /** The policy's name: `scrape-<name>`. */
  readonly name: string;
  /** The Pods' labels, as their own policies select them. */
  readonly pods: Readonly<Record<string, string>>;
  /** The metrics port (its number: a NetworkPolicy names the Pod's port). */
  readonly port: number;
  /** Prometheus' namespace. */
  readonly monitoringNamespace: string;
}

/**
 * NetworkPolicy `scrape-<name>`: Prometheus' namespace may reach the Pods' metrics port. The Pods' own policies
 * (lib/pod-security.ts, the function's) admit it only from the `monitoringNamespace` their props name, none by
 * default, so on a CNI that enforces policies the Component's monitors would scrape nothing without this. Policies
 * add up: this one opens the port to that namespace and nothing else (it lists no egress, and isolates nothing the
 * Pods' own policies do not already).
 */
export class ScrapeAccess extends Construct {
  constructor(scope: Construct, id: string, p: ScrapeAccessProps) {
    super(scope, id);
    const policy = new NetworkPolicy(this, 'Policy', {
      metadata: { name: `scrape-${p.name}`, namespace: p.namespace },
      selector: Pods.select(this, 'Pods', { labels: { ...p.pods } }),
      ingress: { default: NetworkPolicyTrafficDefault.DENY },
    });
    policy.addIngressRule(Namespaces.select(this, 'Monitoring', { names: [p.monitoringNamespace] }), [NetworkPolicyPort.tcp(p.port)]);
  }
}
