/**
 * The alerts every klutch-kit installation wants, as a Prometheus Operator `PrometheusRule`: a binding that is not
 * Ready, a konnector whose heartbeat stopped, sync errors, failing token rotation, Fatal results of the composition
 * function, and a Lease nobody leads. Each alert reads metrics our processes export (monitoring.test.ts proves it) and
 * names what to look at.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';

export interface AlertRule {
  readonly alert: string;
  readonly expr: string;
  readonly for: string;
  readonly labels: { readonly severity: 'warning' | 'critical' };
  readonly annotations: { readonly summary: string; readonly description: string };
}

export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly AlertRule[];
}

export const ALERTS: RuleGroup = {
  name: 'klutch-kit',
  rules: [
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
  ],
};

export interface PrometheusRuleProps {
  readonly namespace: string;
  /** Labels the Prometheus Operator's `ruleSelector` matches. @default none */
  readonly labels?: Readonly<Record<string, string>>;
}

/** `PrometheusRule klutch-kit` (monitoring.coreos.com/v1) holding `ALERTS`. */
export class KlutchAlerts extends Construct {
  constructor(scope: Construct, id: string, props: PrometheusRuleProps) {
    super(scope, id);
    new ApiObject(this, 'Rule', {
      apiVersion: 'monitoring.coreos.com/v1',
      kind: 'PrometheusRule',
      metadata: { name: 'klutch-kit', namespace: props.namespace, ...(props.labels ? { labels: { ...props.labels } } : {}) },
      spec: { groups: [ALERTS] },
    });
  }
}
