/**
 * Scrape targets for the Prometheus Operator: a ServiceMonitor for the bind backend (its Service's `metrics` port), a
 * PodMonitor for the konnector (its `probes` port, in the app cluster), one for the konnectors the backend runs on the
 * control plane for AppClusterBindings, and one for the composition function (the Pods Crossplane runs for the
 * Function, port `metrics`). Field names as in monitoring.coreos.com/v1.
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

/** What a monitor selects beyond its Pods' (or Service's) labels, in its own namespace by default. */
interface MonitorScope {
  readonly matchExpressions?: readonly { key: string; operator: 'Exists' }[];
  /** `any: true`: Pods of every namespace. */
  readonly namespaceSelector?: { readonly any: true };
  readonly relabelings?: readonly { sourceLabels: string[]; targetLabel: string }[];
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
    s: MonitorScope = {},
  ) {
    super(scope, id);
    const endpoint = {
      port,
      path: '/metrics',
      interval: p.interval ?? '30s',
      ...(s.relabelings ? { relabelings: s.relabelings.map((r) => ({ ...r })) } : {}),
    };
    new ApiObject(this, kind, {
      apiVersion: 'monitoring.coreos.com/v1',
      kind,
      metadata: { name, namespace: p.namespace, ...(p.labels ? { labels: { ...p.labels } } : {}) },
      spec: {
        selector: {
          matchLabels: { ...matchLabels },
          ...(s.matchExpressions ? { matchExpressions: s.matchExpressions.map((e) => ({ ...e })) } : {}),
        },
        ...(s.namespaceSelector ? { namespaceSelector: { ...s.namespaceSelector } } : {}),
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

/** Prometheus' name of a Pod label in relabelings (`a.b/c-d` → `__meta_kubernetes_pod_label_a_b_c_d`). */
export const podLabelMeta = (label: string): string => `__meta_kubernetes_pod_label_${label.replace(/[^a-zA-Z0-9_]/g, '_')}`;

export interface BindingKonnectorsProps extends ScrapeProps {
  /** The labels every konnector Pod the backend runs for an AppClusterBinding carries, with their values. */
  readonly podLabels: Readonly<Record<string, string>>;
  /** The Pod labels naming the AppClusterBinding (its name, its namespace) and the one only those Pods carry (its uid). */
  readonly bindingName: string;
  readonly bindingNamespace: string;
  readonly bindingUid: string;
}

/**
 * PodMonitor `klutch-bind-konnectors`: the konnectors the backend runs on the control plane for AppClusterBindings,
 * in binding root namespaces it makes as bindings come (so every namespace, narrowed by the backend's labels), on
 * their `probes` port; each series says which AppClusterBinding it is of (labels `appclusterbinding`,
 * `appclusterbinding_namespace`), since its `namespace` is the root namespace's.
 */
export class BindingKonnectorsPodMonitor extends Monitor {
  constructor(scope: Construct, id: string, p: BindingKonnectorsProps) {
    super(scope, id, 'PodMonitor', 'klutch-bind-konnectors', p.podLabels, 'probes', p, {
      matchExpressions: [{ key: p.bindingUid, operator: 'Exists' }],
      namespaceSelector: { any: true },
      relabelings: [
        { sourceLabels: [podLabelMeta(p.bindingName)], targetLabel: 'appclusterbinding' },
        { sourceLabels: [podLabelMeta(p.bindingNamespace)], targetLabel: 'appclusterbinding_namespace' },
      ],
    });
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
