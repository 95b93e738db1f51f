/**
 * The alerts every klutch-kit installation wants, as a Prometheus Operator `PrometheusRule`: a binding that is not
 * Ready, a konnector whose heartbeat stopped, sync errors, failing token rotation, Fatal results of the composition
 * function, and a Lease nobody leads. Each alert reads metrics our processes export (monitoring.test.ts proves it) and
 * names what to look at.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { releaseDoc } from '../lib/version';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string; readonly runbook_url?: string };
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

/** What the konnector reports in its app cluster. */
const KONNECTOR_RULES: readonly AlertRule[] = [
  {
    alert: 'KlutchBindingNotReady',
    expr: 'max by (binding_namespace, binding) (klutch_konnector_binding_ready{}) == 0',
    for: '15m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'APIServiceBinding {{ $labels.binding_namespace }}/{{ $labels.binding }} is not Ready',
      description:
        'The konnector reports the binding not Ready for 15 minutes: its claims do not sync. `kubectl get apiservicebinding -n {{ $labels.binding_namespace }} {{ $labels.binding }} -o yaml` names the failing condition.',
    },
  },
  {
    alert: 'KlutchKonnectorHeartbeatStale',
    expr:
      '(sum by (namespace, pod) (increase(klutch_konnector_heartbeats_total{result="ok"}[15m])) == 0)' +
      ' and on (namespace, pod) (max by (namespace, pod) (leader_election_master_status{}) == 1)',
    for: '5m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'The leading konnector {{ $labels.namespace }}/{{ $labels.pod }} wrote no heartbeat for 15 minutes',
      description:
        'The provider sees the consumer as gone once heartbeats stop. Check the konnector log and its kubeconfig Secret (the token may have expired or been revoked).',
    },
  },
  {
    alert: 'KlutchKonnectorSyncErrors',
    expr: 'sum by (namespace, pod, direction) (rate(klutch_konnector_sync_errors_total{}[5m])) > 0',
    for: '15m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'Konnector {{ $labels.namespace }}/{{ $labels.pod }} keeps failing to sync ({{ $labels.direction }})',
      description: 'Sync attempts have failed for 15 minutes and are retried with backoff; the konnector log says which object and why.',
    },
  },
];

/** What the bind backend and the composition function report on the control plane. */
const CONTROL_PLANE_RULES: readonly AlertRule[] = [
  {
    alert: 'KlutchTokenRotationFailing',
    expr: 'sum by (namespace, pod) (increase(controller_runtime_reconcile_errors_total{controller="kubeconfigs"}[15m])) > 0',
    for: '15m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'The bind backend {{ $labels.namespace }}/{{ $labels.pod }} cannot rotate consumer tokens',
      description:
        'Consumer kubeconfigs carry short-lived tokens: when rotation fails, konnectors lose access once their tokens expire. The backend log (controller "kubeconfigs") says which consumer and why.',
    },
  },
  {
    alert: 'KlutchFunctionFatalResults',
    expr: 'sum by (namespace, pod) (increase(klutch_function_run_function_total{result="fatal"}[10m])) > 0',
    for: '10m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'The composition function {{ $labels.namespace }}/{{ $labels.pod }} returns Fatal results',
      description:
        'A Fatal result stops the composite from being composed. `kubectl describe` the composite (or claim) to read the message: it names the field and the fix.',
    },
  },
  {
    // Every other alert reads what a running replica exports: with every replica gone (or none scraped) they all go
    // quiet. Prometheus' own `up` of the ServiceMonitor's job (the Service's name) says so.
    alert: 'KlutchBindBackendDown',
    expr: 'absent(up{job="klutch-bind-backend"} == 1)',
    for: '5m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'No bind backend replica has been scraped up for 5 minutes',
      description:
        'Binds, token rotations and the control-plane konnectors stop without the backend. `kubectl get pods -l app.kubernetes.io/name=klutch-bind-backend -A` shows whether its Pods run; if they do, the ServiceMonitor klutch-bind-backend or the NetworkPolicy scrape-klutch-bind-backend keeps Prometheus from them.',
    },
  },
  {
    // The control plane's own view of each consumer (backend/controllers/cluster-binding.metrics.ts): konnector
    // metrics live in the app clusters, which the control plane's Prometheus may not scrape.
    alert: 'KlutchClusterBindingUnhealthy',
    expr: 'max by (cluster_namespace, reason) (klutch_cluster_binding_healthy{reason!="CredentialsRevoked"}) == 0',
    for: '5m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'The konnector of cluster namespace {{ $labels.cluster_namespace }} does not heartbeat in time ({{ $labels.reason }})',
      description:
        "The app cluster bound through {{ $labels.cluster_namespace }} sent no heartbeat within twice its interval (or one dated in the future): its claims no longer sync and their status does not reach it. `kubectl get clusterbinding -n {{ $labels.cluster_namespace }} cluster -o yaml` shows the last heartbeat; in the app cluster, the konnector's Pods and log say why (KlutchKonnectorHeartbeatStale there). After --abandoned-consumer-after without one, its credentials are revoked and the alert stops.",
    },
  },
];

/** Leader election, which the backend and the konnector share (controller/leader.ts). */
const LEASE_RULES: readonly AlertRule[] = [
  {
    // Every replica says nobody has renewed the Lease for longer than its duration (15 s): nothing leads, so no
    // controller runs. Its companion below says why, from the replicas' failed Lease requests.
    alert: 'KlutchNoLeader',
    // (KlutchBindBackendDown, below, covers the case where no replica is left to say so.)
    expr: 'min by (namespace, name) (klutch_leader_election_leaderless_seconds{}) > 15',
    for: '1m',
    labels: { severity: 'critical' },
    annotations: {
      summary: 'No replica has led Lease {{ $labels.name }} (replicas in {{ $labels.namespace }}) for over its lease duration',
      description:
        'Every replica stands by: no controller runs. The replicas log why at warn ("cannot create Lease ..."), with the fix; KlutchLeaseRequestsFailing names the HTTP status.',
    },
  },
  {
    alert: 'KlutchLeaseRequestsFailing',
    expr: 'sum by (namespace, name, code) (increase(klutch_leader_election_errors_total{}[5m])) > 0',
    for: '2m',
    labels: { severity: 'warning' },
    annotations: {
      summary: 'Lease {{ $labels.name }} requests fail with {{ $labels.code }} (replicas in {{ $labels.namespace }})',
      description:
        '404: the Lease namespace does not exist; 403: the replicas may not write Leases there; unreachable: no API server answers. The replicas log the Lease, the namespace and the fix at warn.',
    },
  },
];

/** The alert's section of docs/runbooks.md as this release has it (GitHub's anchor of a heading: lower case). */
export const runbookUrl = (alert: string): string => releaseDoc('docs/runbooks.md', alert.toLowerCase());

/** The rules with `runbook_url`, the annotation Alertmanager's templates and kube-prometheus link from. */
const withRunbooks = (rules: readonly AlertRule[]): AlertRule[] =>
  rules.map((r) => ({ ...r, annotations: { ...r.annotations, runbook_url: runbookUrl(r.alert) } }));

/** The control plane's `PrometheusRule klutch-kit`. */
export const CONTROL_PLANE_ALERTS: RuleGroup = { name: 'klutch-kit', rules: withRunbooks([...CONTROL_PLANE_RULES, ...LEASE_RULES]) };
/** The app clusters' `PrometheusRule klutch-konnector`, beside the konnector's PodMonitor. */
export const APP_CLUSTER_ALERTS: RuleGroup = { name: 'klutch-konnector', rules: withRunbooks([...KONNECTOR_RULES, ...LEASE_RULES]) };

export interface PrometheusRuleProps {
  readonly namespace: string;
  /** Its alerts (`CONTROL_PLANE_ALERTS`, `APP_CLUSTER_ALERTS`); the rule is named after the group. */
  readonly group: RuleGroup;
  /** Labels the Prometheus Operator's `ruleSelector` matches. @default none */
  readonly labels?: Readonly<Record<string, string>>;
}

/** `PrometheusRule <group name>` (monitoring.coreos.com/v1) holding one group of alerts. */
export class KlutchAlerts extends Construct {
  constructor(scope: Construct, id: string, props: PrometheusRuleProps) {
    super(scope, id);
    new ApiObject(this, 'Rule', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: props.group.name, namespace: props.namespace, ...(props.labels ? { labels: { ...props.labels } } : {}) },
      spec: { groups: [props.group] },
    });
  }
}
