/**
 * A Grafana dashboard for a klutch-kit installation: controllers (reconciles, errors, queue depth, latency), the
 * konnector (bindings Ready, sync latency and errors, heartbeats), the bind backend (binds, refusals), the composition
 * function (runs by result, latency) and who leads. Written by synth as JSON (import it) and as a ConfigMap labelled
 * for Grafana's dashboard sidecar. Every panel's query reads metrics our processes export (monitoring.test.ts).
 *
 * The model is typed by Grafana's own schema (@grafana/schema, the TypeScript Grafana generates from its dashboard and
 * panel CUE schemas): the dashboard, each timeseries panel's options and field config, the variable. tsc (strict, in
 * `npm test`) is the schema validator, so a field Grafana does not know or a required one left out fails the build.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import {
  LegendDisplayMode,
  SortOrder,
  TooltipDisplayMode,
  VariableHide,
  VariableRefresh,
  type Dashboard,
  type DataQuery,
  type DataSourceRef,
  type Panel as GrafanaPanel,
  type VariableModel,
} from '@grafana/schema';
import type { Options as TimeSeriesOptions } from '@grafana/schema/dist/esm/raw/composable/timeseries/panelcfg/x/TimeSeriesPanelCfg_types.gen';

export interface Panel {
  readonly title: string;
  readonly unit: string;
  /** One query per series: PromQL and its legend. */
  readonly targets: readonly { readonly expr: string; readonly legend: string }[];
}

export const PANELS: readonly Panel[] = [
  {
    title: 'Reconciles by controller and result',
    unit: 'ops',
    targets: [
      { expr: 'sum by (controller, result) (rate(controller_runtime_reconcile_total{}[5m]))', legend: '{{controller}} {{result}}' },
    ],
  },
  {
    title: 'Reconcile time p99 by controller',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.99, sum by (controller, le) (rate(controller_runtime_reconcile_time_seconds_bucket{}[5m])))',
        legend: '{{controller}}',
      },
    ],
  },
  {
    title: 'Work queue depth',
    unit: 'short',
    targets: [{ expr: 'sum by (pod, name) (workqueue_depth{})', legend: '{{pod}} {{name}}' }],
  },
  {
    title: 'Bindings Ready',
    unit: 'short',
    targets: [
      { expr: 'sum(klutch_konnector_binding_ready{})', legend: 'Ready' },
      { expr: 'count(klutch_konnector_binding_ready{} == 0)', legend: 'not Ready' },
    ],
  },
  {
    title: 'Sync latency p99 by direction',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.99, sum by (direction, le) (rate(klutch_konnector_sync_duration_seconds_bucket{}[5m])))',
        legend: '{{direction}}',
      },
    ],
  },
  {
    title: 'Sync errors by direction',
    unit: 'ops',
    targets: [{ expr: 'sum by (direction) (rate(klutch_konnector_sync_errors_total{}[5m]))', legend: '{{direction}}' }],
  },
  {
    title: 'Heartbeats by result',
    unit: 'ops',
    targets: [{ expr: 'sum by (result) (rate(klutch_konnector_heartbeats_total{}[15m]))', legend: '{{result}}' }],
  },
  {
    title: 'Binds and refusals',
    unit: 'ops',
    targets: [
      { expr: 'sum by (result) (rate(klutch_backend_binds_total{}[5m]))', legend: 'binds {{result}}' },
      { expr: 'sum by (api, reason) (rate(klutch_backend_bind_refusals_total{}[5m]))', legend: 'refused {{api}}: {{reason}}' },
    ],
  },
  {
    title: 'Composition function runs by result',
    unit: 'ops',
    targets: [{ expr: 'sum by (result) (rate(klutch_function_run_function_total{}[5m]))', legend: '{{result}}' }],
  },
  {
    title: 'Composition function p99',
    unit: 's',
    targets: [
      {
        expr: 'histogram_quantile(0.99, sum by (le) (rate(klutch_function_run_function_duration_seconds_bucket{}[5m])))',
        legend: 'p99',
      },
    ],
  },
  {
    title: 'Leader by Lease',
    unit: 'short',
    targets: [{ expr: 'max by (namespace, name, pod) (leader_election_master_status{})', legend: '{{namespace}}/{{name}} {{pod}}' }],
  },
];

/** A Prometheus query of a panel (Grafana's prometheus data source: `expr` and its legend). */
interface PrometheusQuery extends DataQuery {
  readonly expr: string;
  readonly legendFormat: string;
}

/** A timeseries panel: Grafana's panel, with the timeseries plugin's options and Prometheus queries. */
type TimeSeriesPanel = GrafanaPanel<TimeSeriesOptions> & { options: TimeSeriesOptions; targets: PrometheusQuery[] };

/**
 * What every query selects (PANELS write `{}` where it goes): the series of the clusters and namespaces picked. A
 * Prometheus of one cluster has no `cluster` label, which `=~".*"` (All) still matches.
 */
const SCOPE = '{cluster=~"$cluster", namespace=~"$namespace"}';

/** A variable of a label's values, several or All (`.*`) at once, refreshed with the time range. */
function labelVariable(name: string, label: string, query: string, datasource: DataSourceRef): VariableModel {
  return {
    name,
    label,
    type: 'query',
    datasource,
    query,
    refresh: VariableRefresh.onTimeRangeChanged,
    includeAll: true,
    allValue: '.*',
    multi: true,
    current: { text: 'All', value: '$__all' },
    hide: VariableHide.dontHide,
  };
}

/**
 * The dashboard JSON model (schemaVersion 39), panels two to a row, on a `datasource` variable of type prometheus and
 * `cluster` and `namespace` variables every query selects by.
 */
export function dashboard(): Dashboard & { panels: TimeSeriesPanel[] } {
  const ds: DataSourceRef = { type: 'prometheus', uid: '${datasource}' };
  return {
    uid: 'klutch-kit',
    title: 'klutch-kit',
    tags: ['klutch-kit', 'crossplane', 'kube-bind'],
    schemaVersion: 39,
    editable: true,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: {
      list: [
        { name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', hide: VariableHide.dontHide },
        labelVariable('cluster', 'Cluster', 'label_values(up, cluster)', ds),
        labelVariable('namespace', 'Namespace', 'label_values(up{cluster=~"$cluster"}, namespace)', ds),
      ],
    },
    panels: PANELS.map((p, i): TimeSeriesPanel => ({
      id: i + 1,
      type: 'timeseries',
      title: p.title,
      datasource: ds,
      gridPos: { h: 8, w: 12, x: (i % 2) * 12, y: Math.floor(i / 2) * 8 },
      fieldConfig: { defaults: { unit: p.unit }, overrides: [] },
      options: {
        legend: { showLegend: true, displayMode: LegendDisplayMode.List, placement: 'bottom', calcs: [] },
        tooltip: { mode: TooltipDisplayMode.Multi, sort: SortOrder.None },
      },
      targets: p.targets.map((t, j) => ({
        refId: String.fromCharCode(65 + j),
        datasource: ds,
        expr: t.expr.replaceAll('{}', SCOPE),
        legendFormat: t.legend,
      })),
    })),
  };
}

export interface DashboardConfigMapProps {
  readonly namespace: string;
}

/** ConfigMap `klutch-kit-dashboard`, labelled `grafana_dashboard: "1"` for the Grafana sidecar (kube-prometheus-stack). */
export class KlutchDashboard extends Construct {
  constructor(scope: Construct, id: string, props: DashboardConfigMapProps) {
    super(scope, id);
    new ApiObject(this, 'ConfigMap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'klutch-kit-dashboard', namespace: props.namespace, labels: { grafana_dashboard: '1' } },
      data: { 'klutch-kit.json': `${JSON.stringify(dashboard(), null, 2)}\n` },
    });
  }
}
