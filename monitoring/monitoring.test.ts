import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { stringify } from 'yaml';
import { describe, expect, inject, it } from 'vitest';
import { PodMonitor, PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { loadCatalog } from '../harness/catalog';
import { render } from '../synth/synth';
import { parse } from 'yaml';
import { checkRules, testRules } from '../harness/tools/promtool';
import { ALERTS, KlutchAlerts } from './alerts';
import type { Dashboard } from '@grafana/schema';
import { dashboard, PANELS } from './dashboard';
import { metricFamilies } from './promql';

const dir = mkdtempSync(join(tmpdir(), 'klutch-monitoring-'));
const OUR_FAMILIES = /^(klutch_|controller_runtime_|workqueue_|leader_election_)/;
/** Prometheus' own series of each target: whether its last scrape worked. */
const PROMETHEUS_FAMILIES = ['up'];
const exprs = [
  ...ALERTS.rules.map((r) => ({ where: `alert ${r.alert}`, expr: r.expr })),
  ...PANELS.flatMap((p) => p.targets.map((t) => ({ where: `panel "${p.title}"`, expr: t.expr }))),
];

/**
 * `promtool test rules` of the shipped alerts: one test case (`input_series`, `alert_rule_test`) evaluated by
 * Prometheus' rule engine every minute; the output names what fired instead of what was expected.
 */
function testAlerts(name: string, test: { input_series: unknown[]; alert_rule_test: unknown[] }): { status: number; output: string } {
  const alerts = join(dir, `${name}-alerts.yaml`);
  writeFileSync(alerts, stringify({ groups: [ALERTS] }));
  const tests = join(dir, `${name}-test.yaml`);
  writeFileSync(tests, stringify({ rule_files: [alerts], evaluation_interval: '1m', tests: [{ interval: '1m', ...test }] }));
  return testRules(inject('promtool'), tests);
}

describe('metricFamilies', () => {
  it.each([
    { expr: 'sum(rate(a_total{x="1"}[5m])) / b{}', want: ['a_total', 'b'] },
    { expr: 'histogram_quantile(0.9, sum by (le) (rate(c_seconds_bucket{}[5m])))', want: ['c_seconds'] },
    { expr: 'sum by (le) (d_count{}) + d_sum{}', want: ['d'] },
    { expr: 'vector(1)', want: [] },
  ])('$expr', ({ expr, want }) => expect(metricFamilies(expr)).toEqual(want));
});

describe('alerts and dashboard', () => {
  it.each(exprs)('$where reads metric families of ours, written with braces', ({ expr }) => {
    const families = metricFamilies(expr);
    expect(families.length, 'every selector is written name{...}, so the families can be read').toBeGreaterThan(0);
    for (const f of families.filter((x) => !PROMETHEUS_FAMILIES.includes(x))) expect(f).toMatch(OUR_FAMILIES);
  });

  it('loads in promtool as Prometheus would load it: the PrometheusRule groups, and every dashboard query', () => {
    const promtool = inject('promtool');
    const chart = new Chart(new App(), 'alerts');
    new KlutchAlerts(chart, 'alerts', { namespace: 'monitoring' });
    const [rule] = chart.toJson() as { kind: string; spec: { groups: unknown[] } }[];
    expect(rule?.kind).toBe('PrometheusRule');
    const alerts = join(dir, 'alerts.yaml');
    writeFileSync(alerts, stringify({ groups: rule!.spec.groups }));
    const a = checkRules(promtool, alerts);
    expect(a.status, a.output).toBe(0);
    expect(a.output).toContain(`SUCCESS: ${ALERTS.rules.length} rules found`);

    // A dashboard query is parsed the same way as a recording rule's expression.
    const queries = (dashboard().panels as { targets: { expr: string }[] }[]).flatMap((p) => p.targets.map((t) => t.expr));
    const panels = join(dir, 'panels.yaml');
    writeFileSync(
      panels,
      stringify({ groups: [{ name: 'dashboard', rules: queries.map((expr, i) => ({ record: `klutch:panel_${i}`, expr })) }] }),
    );
    const p = checkRules(promtool, panels);
    expect(p.status, p.output).toBe(0);
  });

  it("fires KlutchBindingNotReady for the binding's namespace, not the konnector Pod's, as Prometheus stores the scrape", () => {
    // What a scrape of the konnector Pod stores: Prometheus's target labels (namespace, pod, job) beside the metric's
    // own; with the old `namespace` label the target's would have overwritten it (exported_namespace).
    const target = 'job="konnector",namespace="klutch-bind",pod="konnector-7d9f8-abcde"';
    const r = testAlerts('binding-not-ready', {
      input_series: [
        {
          series: `klutch_konnector_binding_ready{${target},binding_namespace="team-a",binding="postgresqlinstances.anynines.com"}`,
          values: '0x30',
        },
        {
          series: `klutch_konnector_binding_ready{${target},binding_namespace="team-b",binding="postgresqlinstances.anynines.com"}`,
          values: '1x30',
        },
        // Not Ready for ten minutes, then Ready: never for the alert's 15 minutes.
        {
          series: `klutch_konnector_binding_ready{${target},binding_namespace="team-c",binding="servicebindings.anynines.com"}`,
          values: '0x10 1x20',
        },
      ],
      alert_rule_test: [
        { eval_time: '14m', alertname: 'KlutchBindingNotReady', exp_alerts: [] },
        {
          eval_time: '20m',
          alertname: 'KlutchBindingNotReady',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', binding_namespace: 'team-a', binding: 'postgresqlinstances.anynines.com' },
              exp_annotations: {
                summary: 'APIServiceBinding team-a/postgresqlinstances.anynines.com is not Ready',
                description:
                  'The konnector reports the binding not Ready for 15 minutes: its claims do not sync. `kubectl get apiservicebinding -n team-a postgresqlinstances.anynines.com -o yaml` names the failing condition.',
              },
            },
          ],
        },
      ],
    });
    expect(r.status, r.output).toBe(0);
  });

  it('fires KlutchBindBackendDown once no backend replica is scraped up for 5 minutes, and not while one is', () => {
    const up = (pod: string) => `up{job="klutch-bind-backend",namespace="klutch-bind-backend",pod="${pod}"}`;
    const r = testAlerts('backend-down', {
      // Two replicas; one goes at minute 5 (the other still up), the other at minute 10.
      input_series: [
        { series: up('a'), values: '1x5 0x25' },
        { series: up('b'), values: '1x10 0x20' },
      ],
      alert_rule_test: [
        { eval_time: '9m', alertname: 'KlutchBindBackendDown', exp_alerts: [] },
        { eval_time: '14m', alertname: 'KlutchBindBackendDown', exp_alerts: [] },
        {
          eval_time: '17m',
          alertname: 'KlutchBindBackendDown',
          exp_alerts: [
            {
              exp_labels: { severity: 'critical' },
              exp_annotations: {
                summary: 'No bind backend replica has been scraped up for 5 minutes',
                description: ALERTS.rules.find((r) => r.alert === 'KlutchBindBackendDown')!.annotations.description,
              },
            },
          ],
        },
      ],
    });
    expect(r.status, r.output).toBe(0);
  });

  it('refuses a broken expression (promtool is really checking)', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, stringify({ groups: [{ name: 'bad', rules: [{ alert: 'Bad', expr: 'sum by (x (klutch_x{})' }] }] }));
    expect(checkRules(inject('promtool'), bad).status).not.toBe(0);
  });

  it("writes PrometheusRule, ServiceMonitor and PodMonitors the Prometheus Operator's schemas accept", async () => {
    const files = render({ apis: await loadCatalog(), outdir: 'unused' });
    const models = { PrometheusRule, ServiceMonitor, PodMonitor } as const;
    const objects = [...files]
      .filter(([path]) => path.endsWith('.yaml') && path.includes('/monitoring/'))
      .map(([path, yaml]) => ({ path, obj: parse(yaml) as { apiVersion: string; kind: keyof typeof models } }))
      .filter(({ obj }) => obj.apiVersion === 'monitoring.coreos.com/v1');
    expect(objects.map(({ obj }) => obj.kind).sort()).toEqual(['PodMonitor', 'PodMonitor', 'PrometheusRule', 'ServiceMonitor']);
    for (const { path, obj } of objects) expect(() => new models[obj.kind](obj as never).validate(), path).not.toThrow();
    // The models really check: a port number where the schema wants a port name is refused.
    expect(() =>
      new PodMonitor({ metadata: { name: 'x' }, spec: { selector: {}, podMetricsEndpoints: [{ port: 8080 as never }] } }).validate(),
    ).toThrow(/port must be string/);
  });

  it("is held to Grafana's dashboard schema by tsc: what Grafana would not accept does not compile", () => {
    // Each line below is one Grafana's schema refuses; were the schema types not checking, @ts-expect-error itself
    // would fail the strict typecheck of npm test (test/repo/checks.test.ts).
    const refused: Dashboard[] = [
      // @ts-expect-error a variable's current option needs text and value (VariableOption)
      { templating: { list: [{ name: 'datasource', type: 'datasource', current: {} }] } },
      // @ts-expect-error a panel's position needs its height and width (GridPos)
      { panels: [{ type: 'timeseries', gridPos: { x: 0, y: 0 } }] },
      // @ts-expect-error no such dashboard field
      { title: 'x', refreshInterval: '30s' },
    ];
    expect(refused).toHaveLength(3);
    // What synth writes has what Grafana's timeseries panel requires of its options.
    for (const p of dashboard().panels) {
      expect(p.options.legend).toMatchObject({ showLegend: true, calcs: [] });
      expect(p.options.tooltip).toMatchObject({ mode: 'multi', sort: 'none' });
    }
  });

  it('lays the panels out two to a row, each on the datasource variable', () => {
    const d = dashboard() as { panels: { gridPos: { x: number; y: number }; datasource: { uid: string } }[] };
    expect(d.panels).toHaveLength(PANELS.length);
    expect(new Set(d.panels.map((p) => `${p.gridPos.x},${p.gridPos.y}`)).size).toBe(PANELS.length);
    for (const p of d.panels) expect(p.datasource.uid).toBe('${datasource}');
  });
});
