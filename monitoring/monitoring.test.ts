import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Chart } from 'cdk8s';
import { stringify } from 'yaml';
import { afterAll, describe, expect, inject, it } from 'vitest';
import { PodMonitor, PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { loadCatalog, objectFiles, ROOT } from '../harness/crossplane/catalog';
import { releaseDoc } from '../lib/version';
import { render } from '../synth/synth';
import { parse } from 'yaml';
import { checkRules, testRules } from '../harness/tools/promtool';
import { APP_CLUSTER_ALERTS, CONTROL_PLANE_ALERTS, KlutchAlerts, runbookUrl, type RuleGroup } from './alerts';
import type { Dashboard } from '@grafana/schema';
import { dashboard, PANELS } from './dashboard';
import { metricFamilies } from './promql';

const dir = mkdtempSync(join(tmpdir(), 'klutch-monitoring-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const OUR_FAMILIES = /^(klutch_|controller_runtime_|workqueue_|leader_election_)/;
/** Prometheus' own series of each target: whether its last scrape worked. */
const PROMETHEUS_FAMILIES = ['up'];
const GROUPS = [CONTROL_PLANE_ALERTS, APP_CLUSTER_ALERTS];
const exprs = [
  ...GROUPS.flatMap((g) => g.rules.map((r) => ({ where: `alert ${r.alert} (${g.name})`, expr: r.expr }))),
  ...PANELS.flatMap((p) => p.targets.map((t) => ({ where: `panel "${p.title}"`, expr: t.expr }))),
];

/**
 * `promtool test rules` of the shipped alerts: one test case (`input_series`, `alert_rule_test`) evaluated by
 * Prometheus' rule engine every minute; the output names what fired instead of what was expected.
 */
function testAlerts(
  group: RuleGroup,
  name: string,
  test: { input_series: unknown[]; alert_rule_test: unknown[] },
): { status: number; output: string } {
  const alerts = join(dir, `${name}-alerts.yaml`);
  writeFileSync(alerts, stringify({ groups: [group] }));
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

  it.each(GROUPS)('loads the $name PrometheusRule in promtool as Prometheus would load it', (group) => {
    const chart = new Chart(new App(), 'alerts');
    new KlutchAlerts(chart, 'alerts', { namespace: 'monitoring', group });
    const [rule] = chart.toJson() as { kind: string; metadata: { name: string }; spec: { groups: unknown[] } }[];
    expect(rule?.kind).toBe('PrometheusRule');
    expect(rule?.metadata.name).toBe(group.name);
    const alerts = join(dir, `${group.name}.yaml`);
    writeFileSync(alerts, stringify({ groups: rule!.spec.groups }));
    const a = checkRules(inject('promtool'), alerts);
    expect(a.status, a.output).toBe(0);
    expect(a.output).toContain(`SUCCESS: ${group.rules.length} rules found`);
  });

  it('loads every dashboard query in promtool', () => {
    const promtool = inject('promtool');
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

  it('selects in every query the clusters and namespaces picked in its variables, as Prometheus evaluates it', () => {
    const d = dashboard();
    expect(d.templating?.list?.map((v) => `${v.name} ${v.type}`)).toEqual(['datasource datasource', 'cluster query', 'namespace query']);
    const queries = (d.panels as { targets: { expr: string }[] }[]).flatMap((p) => p.targets.map((t) => t.expr));
    for (const q of queries) {
      // Every selector of the query carries both matchers: a panel that left one out would mix namespaces.
      expect(q.match(/\{/g)?.length, q).toBe(q.match(/\{cluster=~"\$cluster", namespace=~"\$namespace"\}/g)?.length);
    }
    // Grafana's substitution of two namespaces picked (a regex alternation) and All clusters, evaluated by promtool.
    const picked = queries
      .find((q) => q.startsWith('sum by (pod, name) (workqueue_depth'))!
      .replaceAll('$cluster', '.*')
      .replaceAll('$namespace', '(klutch-bind-backend|team-a)');
    const tests = join(dir, 'dashboard-scope-test.yaml');
    writeFileSync(
      tests,
      stringify({
        rule_files: [],
        evaluation_interval: '1m',
        tests: [
          {
            interval: '1m',
            input_series: [
              { series: 'workqueue_depth{namespace="klutch-bind-backend",pod="b-1",name="export"}', values: '3x5' },
              { series: 'workqueue_depth{namespace="team-a",pod="k-1",name="bindings"}', values: '1x5' },
              { series: 'workqueue_depth{namespace="team-b",pod="k-2",name="bindings"}', values: '7x5' },
            ],
            promql_expr_test: [
              {
                expr: picked,
                eval_time: '2m',
                exp_samples: [
                  { labels: '{pod="b-1",name="export"}', value: 3 },
                  { labels: '{pod="k-1",name="bindings"}', value: 1 },
                ],
              },
            ],
          },
        ],
      }),
    );
    const r = testRules(inject('promtool'), tests);
    expect(r.status, r.output).toBe(0);
  });

  it("fires KlutchBindingNotReady for the binding's namespace, not the konnector Pod's, as Prometheus stores the scrape", () => {
    // What a scrape of the konnector Pod stores: Prometheus's target labels (namespace, pod, job) beside the metric's
    // own; with the old `namespace` label the target's would have overwritten it (exported_namespace).
    const target = 'job="konnector",namespace="klutch-bind",pod="konnector-7d9f8-abcde"';
    const r = testAlerts(APP_CLUSTER_ALERTS, 'binding-not-ready', {
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
                runbook_url: runbookUrl('KlutchBindingNotReady'),
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
    const r = testAlerts(CONTROL_PLANE_ALERTS, 'backend-down', {
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
                runbook_url: runbookUrl('KlutchBindBackendDown'),
                summary: 'No bind backend replica has been scraped up for 5 minutes',
                description: CONTROL_PLANE_ALERTS.rules.find((r) => r.alert === 'KlutchBindBackendDown')!.annotations.description,
              },
            },
          ],
        },
      ],
    });
    expect(r.status, r.output).toBe(0);
  });

  it('fires KlutchClusterBindingUnhealthy on the control plane for a consumer whose konnector went quiet, from the leading replica only', () => {
    const healthy = (pod: string, ns: string, reason: string) =>
      `klutch_cluster_binding_healthy{job="klutch-bind-backend",namespace="klutch-bind-backend",pod="${pod}",cluster_namespace="${ns}",reason="${reason}"}`;
    const r = testAlerts(CONTROL_PLANE_ALERTS, 'cluster-binding', {
      input_series: [
        // team-a heartbeats until minute 10, then its verdict is HeartbeatTimeout (leader: pod a).
        { series: healthy('a', 'klutch-bind-a', ''), values: '1x10 _x20' },
        { series: healthy('a', 'klutch-bind-a', 'HeartbeatTimeout'), values: '_x10 0x20' },
        // team-b stays healthy; the lead moves from a to b at minute 15 (a drops its series).
        { series: healthy('a', 'klutch-bind-b', ''), values: '1x15 _x15' },
        { series: healthy('b', 'klutch-bind-b', ''), values: '_x15 1x15' },
        // team-c was abandoned: its credentials are revoked, which is no news.
        { series: healthy('a', 'klutch-bind-c', 'CredentialsRevoked'), values: '0x30' },
      ],
      alert_rule_test: [
        { eval_time: '13m', alertname: 'KlutchClusterBindingUnhealthy', exp_alerts: [] },
        {
          eval_time: '20m',
          alertname: 'KlutchClusterBindingUnhealthy',
          exp_alerts: [
            {
              exp_labels: { severity: 'warning', cluster_namespace: 'klutch-bind-a', reason: 'HeartbeatTimeout' },
              exp_annotations: {
                runbook_url: runbookUrl('KlutchClusterBindingUnhealthy'),
                summary: 'The konnector of cluster namespace klutch-bind-a does not heartbeat in time (HeartbeatTimeout)',
                description: CONTROL_PLANE_ALERTS.rules
                  .find((r) => r.alert === 'KlutchClusterBindingUnhealthy')!
                  .annotations.description.replaceAll('{{ $labels.cluster_namespace }}', 'klutch-bind-a'),
              },
            },
          ],
        },
      ],
    });
    expect(r.status, r.output).toBe(0);
  });

  it('ships the konnector alerts to the app clusters, where the konnector is scraped, and none of them to the control plane', () => {
    const konnector = (g: RuleGroup) => g.rules.filter((r) => metricFamilies(r.expr).some((f) => f.startsWith('klutch_konnector_')));
    expect(konnector(APP_CLUSTER_ALERTS).map((r) => r.alert)).toEqual([
      'KlutchBindingNotReady',
      'KlutchKonnectorHeartbeatStale',
      'KlutchKonnectorSyncErrors',
    ]);
    expect(konnector(CONTROL_PLANE_ALERTS)).toEqual([]);
  });

  it("links every alert to its runbook, a section of this release's docs/runbooks.md, and that page has no other", () => {
    const headings = [...readFileSync(join(ROOT, 'docs', 'runbooks.md'), 'utf8').matchAll(/^## (\S+)$/gm)].map((m) => m[1]!);
    const alerts = [...new Set(GROUPS.flatMap((g) => g.rules.map((r) => r.alert)))];
    expect(headings.sort()).toEqual([...alerts].sort());
    for (const g of GROUPS)
      for (const r of g.rules) {
        expect(r.annotations.runbook_url, r.alert).toBe(`${releaseDoc('docs/runbooks.md')}#${r.alert.toLowerCase()}`);
        expect(r.annotations.runbook_url).toMatch(
          /^https:\/\/github\.com\/klutch-kit\/klutch-kit\/blob\/v\d+\.\d+\.\d+\/docs\/runbooks\.md#klutch/,
        );
      }
  });

  it('refuses a broken expression (promtool is really checking)', () => {
    const bad = join(dir, 'bad.yaml');
    writeFileSync(bad, stringify({ groups: [{ name: 'bad', rules: [{ alert: 'Bad', expr: 'sum by (x (klutch_x{})' }] }] }));
    expect(checkRules(inject('promtool'), bad).status).not.toBe(0);
  });

  it("writes PrometheusRule, ServiceMonitor and PodMonitors the Prometheus Operator's schemas accept", async () => {
    const files = render({ apis: await loadCatalog(), outdir: 'unused' });
    const models = { PrometheusRule, ServiceMonitor, PodMonitor } as const;
    const objects = [...objectFiles(files)]
      .filter(([path]) => path.includes('/monitoring/'))
      .map(([path, yaml]) => ({ path, obj: parse(yaml) as { apiVersion: string; kind: keyof typeof models } }))
      .filter(({ obj }) => obj.apiVersion === 'monitoring.coreos.com/v1');
    expect(objects.map(({ obj }) => obj.kind).sort()).toEqual([
      'PodMonitor',
      'PodMonitor',
      'PodMonitor',
      'PrometheusRule',
      'PrometheusRule',
      'ServiceMonitor',
    ]);
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
