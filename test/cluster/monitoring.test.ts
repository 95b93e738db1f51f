/**
 * Every metric family the shipped alerts (monitoring/alerts.ts) and dashboard (monitoring/dashboard.ts) read is
 * exported by a running process of ours: the bundled bind backend, konnector and composition function, each started
 * as it runs in production and scraped on its /metrics. A renamed metric, or an alert about one nobody exports, fails
 * here instead of staying silent in an operator's Prometheus.
 */
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { APP_CLUSTER_ALERTS, CONTROL_PLANE_ALERTS, type RuleGroup } from '../../monitoring/alerts';
import { PANELS } from '../../monitoring/dashboard';
import { metricFamilies } from '../../monitoring/promql';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { ROOT } from '../../harness/crossplane/catalog';
import { cluster, controlPlanes } from '../support/cluster';
import { startFunctionProcess, type FunctionProcess } from '../../harness/parts/function-process';
import { installKonnectorAccess, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { eventually, kubeFor } from '../../harness/cluster/kube';
import { probe } from '../../harness/cluster/processes';

const ns = `mon-${Math.random().toString(36).slice(2, 8)}`;
let backend: BackendSuite | undefined;
let konnector: KonnectorProcess | undefined;
let fn: FunctionProcess | undefined;

beforeAll(async () => {
  const [a, b] = await Promise.all([cluster('a'), cluster('b')]);
  const logDir = join((await controlPlanes()).runDir, 'monitoring', ns);
  [backend, konnector, fn] = await Promise.all([
    startBackendSuite(a, { users: 1 }),
    installKonnectorAccess(b, ns, []).then((kubeconfig) => startKonnector({ kubeconfig, namespace: ns, logDir, identity: 'r1' })),
    bundleDeployable(ROOT, deployable('function')).then((bundle) => startFunctionProcess(bundle)),
  ]);
}, 120_000);

afterAll(async () => {
  await Promise.all([backend?.stop(), konnector?.proc.stop(), fn?.stop()]);
  await kubeFor(await cluster('b')).request('DELETE', `/api/v1/namespaces/${ns}`);
});

/** The families a Prometheus exposition declares (`# TYPE <family> <type>`). */
const families = (exposition: string) => new Set([...exposition.matchAll(/^# TYPE (\S+) \S+$/gm)].map((m) => m[1] as string));

/** What Prometheus records of each target itself (`up`), which no process of ours exports. */
const PROMETHEUS_FAMILIES = new Set(['up']);
const familiesOf = (exprs: readonly string[]) => [...new Set(exprs.flatMap(metricFamilies))].filter((f) => !PROMETHEUS_FAMILIES.has(f));
const rules = (g: RuleGroup) => g.rules.map((r) => r.expr);
const used = familiesOf([
  ...rules(CONTROL_PLANE_ALERTS),
  ...rules(APP_CLUSTER_ALERTS),
  ...PANELS.flatMap((p) => p.targets.map((t) => t.expr)),
]);
const SHARED = ['controller_runtime_reconcile_total', 'workqueue_depth', 'leader_election_master_status'];

async function scrape(): Promise<(readonly [string, Set<string>])[]> {
  return Promise.all(
    [
      ['backend', `${backend!.backend.probeUrl}/metrics`],
      ['konnector', `${konnector!.url}/metrics`],
      ['function', `http://127.0.0.1:${fn!.metricsPort}/metrics`],
    ].map(async ([who, url]) => {
      const r = await probe(url!);
      expect(r.code, `${who} ${url}`).toBe(200);
      return [who!, families(r.body)] as const;
    }),
  );
}

it('exports every metric family the alerts and the dashboard read, from the backend, the konnector or the function', async () => {
  expect(used.length).toBeGreaterThan(0);
  // The controllers (and their metrics) start once a replica leads: wait for that, then judge.
  await eventually(
    'the backend and konnector leading',
    async () => {
      const s = await scrape();
      return s.filter(([w]) => w !== 'function').every(([, have]) => SHARED.every((f) => have.has(f))) ? true : undefined;
    },
    30_000,
  ).catch(() => undefined);
  const scraped = await scrape();
  const missing = used.filter((f) => !scraped.some(([, have]) => have.has(f)));
  expect(missing, `read by an alert or panel but exported by none of ${scraped.map(([w]) => w).join(', ')}`).toEqual([]);
  // The backend and konnector share the controller machinery, under controller-runtime's names.
  for (const [who, have] of scraped.filter(([w]) => w !== 'function')) for (const f of SHARED) expect(have, `${who}: ${f}`).toContain(f);
  // Each PrometheusRule reads only what is scraped where it is installed: the control plane's from the backend and
  // the function, the app clusters' from the konnector.
  const from = (who: readonly string[]) => scraped.filter(([w]) => who.includes(w)).map(([, have]) => have);
  for (const [group, who] of [
    [CONTROL_PLANE_ALERTS, ['backend', 'function']],
    [APP_CLUSTER_ALERTS, ['konnector']],
  ] as const) {
    const there = from(who);
    const elsewhere = familiesOf(rules(group)).filter((f) => !there.some((have) => have.has(f)));
    expect(elsewhere, `PrometheusRule ${group.name} reads families ${who.join(' and ')} do not export`).toEqual([]);
  }
});
