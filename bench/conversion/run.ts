/**
 * bench/conversion (issue 36): what an API version in the path costs. Prints a table and writes
 * bench/results/conversion.json.
 *
 * - Conversions per second: ConversionReviews of one object each (what the API server sends for one read or write of
 *   a claim in a version not stored), BENCH_CONCURRENCY at once, straight to the conversion server process
 *   (conversion/main.ts, its bundle, over TLS); p50/p99 per review.
 * - The konnector's sync between two real control planes (`p` provider, `c` app cluster), one konnector process,
 *   without and with a conversion, in the same run:
 *   - without (the baseline): the versioned Backup served in v2 alone (its storage version), the app cluster bound to v2;
 *   - konnector: the same API served in v1 and v2 (storage v2, Webhook conversion to the server), the app cluster
 *     bound to v1 by an export that names the storage version and the conversions, as the backend derives it: the
 *     konnector reads and writes v2 upstream and converts itself;
 *   - webhook: the same, its export without the conversion (what Klutch's konnector, which ignores it, does): every
 *     read, watch event and write of the konnector upstream is converted by the control plane's webhook.
 *   Each round: BENCH_CLAIMS claims created at once in the app cluster (claims/s until every copy is upstream,
 *   create→upstream p50/p99), then status written on every copy upstream in v2, as Crossplane writes it
 *   (status→downstream p50/p99). After a warm-up round of each, the rounds run A B C C B A and each arm's figures are
 *   its two rounds together.
 * Goal (issue 36): the konnector's throughput and p99s with a conversion within 10 % of without.
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import type { KubernetesObject } from '@kubernetes/client-node';
import { watchInformer } from '../../controller';
import { CONVERSION_TABLE_FILE, PACKAGE_DIR, render } from '../../synth/synth';
import { parseYaml } from '../../harness/crossplane/catalog';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { bindApp, installKonnectorAccess, startKonnector } from '../../harness/parts/konnector';
import { startConversionProcess } from '../../harness/parts/conversion-server';
import { providerSide } from '../../harness/parts/provider-side';
import { eventually, kubeFor, requireOk } from '../../harness/cluster/kube';
import { claimCrd, type Crd, type XrdObject } from '../../lib/xcrd';
import { versionedBackup } from '../../test/support/versioned-api';
import { EXPORT_CONVERSION_ANNOTATION } from '../../exports/bind-api';
import { cpuSeconds, percentile as pct } from '../measure';

const root = process.cwd();
if (!existsSync(join(root, 'conversion', 'main.ts')))
  throw new Error(`run from the repository root (npm run bench conversion), not ${root}`);
const N = Number(process.env.BENCH_CLAIMS ?? 500);
const REVIEWS = Number(process.env.BENCH_REVIEWS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const NAMESPACES = Array.from({ length: 5 }, (_, i) => `bench-${i}`);
const NS = 'klutch-bind';
const log = (s: string) => process.stderr.write(`[bench/conversion] ${s}\n`);

/** The API without a second version, and with one converted by each side: three groups, so one konnector serves all. */
const plain = { group: 'plain.bench.klutch-kit.test', app: 'v2' } as const;
const versioned = { group: 'versioned.bench.klutch-kit.test', app: 'v1' } as const;
const webhooked = { group: 'webhook.bench.klutch-kit.test', app: 'v1' } as const;
type Arm = 'without' | 'konnector' | 'webhook';
const crdOf = (files: Map<string, string>): Crd =>
  claimCrd(parseYaml(files.get(`${PACKAGE_DIR}/apis/vbackup/definition.yaml`)!)[0] as unknown as XrdObject);

/** Runs `f(i)` for i in [0, n) with `CONCURRENCY` at once. */
async function pool(n: number, f: (i: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = next++; i < n; i = next++) await f(i);
    }),
  );
}

const work = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-conversion-'));
// One table of both versioned groups (one API name per render, so two renders).
const tables = [versioned.group, webhooked.group].map(
  (group) =>
    JSON.parse(
      render({ apis: [versionedBackup({ group })], outdir: 'unused', conversion: { url: 'https://x', caBundle: 'x' } }).get(
        CONVERSION_TABLE_FILE,
      )!,
    ) as { apis: unknown[] },
);
const table = JSON.stringify({ ...tables[0], apis: tables.flatMap((t) => t.apis) });
const server = await startConversionProcess({ table, dir: join(work, 'conversion') });
const cp = await startControlPlanes({ clusters: ['p', 'c'], log: () => undefined });
const results: Record<string, unknown> = { date: new Date().toISOString(), claims: N, reviews: REVIEWS, concurrency: CONCURRENCY };
try {
  // 1. Conversions per second, straight to the server.
  const dispatcher = new Agent({ connect: { ca: server.ca }, connections: CONCURRENCY });
  const path = `/convert/xbackups.${versioned.group}`;
  const review = (i: number) =>
    JSON.stringify({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'ConversionReview',
      request: {
        uid: `r-${i}`,
        desiredAPIVersion: `${versioned.group}/v2`,
        objects: [
          {
            apiVersion: `${versioned.group}/v1`,
            kind: 'Backup',
            metadata: { name: `b-${i}`, namespace: 'default' },
            spec: { instance: `pg-${i}`, serviceInstanceType: 'postgresql', note: 'a note v2 does not have' },
          },
        ],
      },
    });
  const lat: number[] = [];
  const t0 = performance.now();
  const cpu0 = cpuSeconds(server.proc.pid);
  await pool(REVIEWS, async (i) => {
    const s = performance.now();
    const r = await request(`${server.url}${path}`, {
      method: 'POST',
      body: review(i),
      headers: { 'content-type': 'application/json' },
      dispatcher,
    });
    const body = (await r.body.json()) as { response?: { result?: { status?: string } } };
    if (body.response?.result?.status !== 'Success') throw new Error(`review ${i}: ${JSON.stringify(body)}`);
    lat.push(performance.now() - s);
  });
  const seconds = (performance.now() - t0) / 1000;
  results.reviews = {
    perSecond: REVIEWS / seconds,
    p50Ms: pct(lat, 50),
    p99Ms: pct(lat, 99),
    serverCpuMsPerReview: ((cpuSeconds(server.proc.pid) - cpu0) * 1000) / REVIEWS,
  };
  await dispatcher.close();
  log(`${REVIEWS} reviews in ${seconds.toFixed(1)} s`);

  // 2. The konnector without and with a conversion in the path.
  const kp = kubeFor(cp.clusters.p!);
  const kc = kubeFor(cp.clusters.c!);
  const plainCrd = crdOf(render({ apis: [versionedBackup({ group: plain.group, served: 'v2' })], outdir: 'unused' }));
  const versionedCrd = (group: string) =>
    crdOf(render({ apis: [versionedBackup({ group })], outdir: 'unused', conversion: { url: server.url, caBundle: server.ca } }));
  const provider = await providerSide({ provider: cp.clusters.p!, crd: plainCrd });
  const api = versionedBackup({ group: versioned.group });
  const versionedExport = await provider.exportApi(versionedCrd(versioned.group), [], versioned.app, {
    [EXPORT_CONVERSION_ANNOTATION]: JSON.stringify({ storageVersion: api.version, conversions: api.conversions }),
  });
  const webhookExport = await provider.exportApi(versionedCrd(webhooked.group), [], webhooked.app);
  const kubeconfig = await installKonnectorAccess(
    cp.clusters.c!,
    NS,
    [plain.group, versioned.group, webhooked.group].map((group) => ({ group, resource: 'backups' })),
  );
  const logDir = join(cp.runDir, 'konnector');
  mkdirSync(logDir, { recursive: true });
  const konnector = await startKonnector({ kubeconfig, namespace: NS, logDir });
  for (const ns of NAMESPACES) await requireOk(kc, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });

  const apis = [
    { ...plain, exportName: provider.exportName },
    { ...versioned, exportName: versionedExport },
    { ...webhooked, exportName: webhookExport },
  ];
  for (const a of apis) {
    await bindApp(cp.clusters.c!, NS, provider, a.exportName);
    await eventually(`the CRD of ${a.group} in the app cluster`, async () =>
      (await kc.request('GET', `/apis/${a.group}/${a.app}/backups`)).code === 200 ? true : undefined,
    );
  }
  /** One round of one arm: `n` claims named `<round>-<i>` created at once, then status on each copy upstream. */
  const round = async (a: { group: string; app: 'v1' | 'v2' }, name: string, n: number) => {
    const upSeen = new Map<string, number>();
    const downSeen = new Map<string, number>();
    const mine = (o: KubernetesObject) => o.metadata!.name!.startsWith(`${name}-`);
    const up = watchInformer<KubernetesObject>({ kc: kp.config, path: `/apis/${a.group}/v2/backups` });
    up.on('add', (o) => mine(o) && !upSeen.has(o.metadata!.name!) && upSeen.set(o.metadata!.name!, performance.now()));
    const down = watchInformer<KubernetesObject>({ kc: kc.config, path: `/apis/${a.group}/${a.app}/backups` });
    down.on('update', (o) => {
      const ready = (o as { status?: { conditions?: { type: string; status: string }[] } }).status?.conditions?.some(
        (c) => c.type === 'Ready' && c.status === 'True',
      );
      if (mine(o) && ready && !downSeen.has(o.metadata!.name!)) downSeen.set(o.metadata!.name!, performance.now());
    });
    await Promise.all([up.start(), down.start()]);
    const spec = (i: number) =>
      a.app === 'v1'
        ? { instance: `pg-${i}`, serviceInstanceType: 'postgresql', note: 'kept upstream in an annotation' }
        : { instanceRef: `pg-${i}`, serviceInstanceType: 'postgresql' };
    // Upward: every claim created at once.
    const created = new Map<string, number>();
    const k0 = cpuSeconds(konnector.proc.pid);
    const s0 = cpuSeconds(server.proc.pid);
    const start = performance.now();
    await pool(n, async (i) => {
      const ns = NAMESPACES[i % NAMESPACES.length]!;
      await requireOk(kc, 'POST', `/apis/${a.group}/${a.app}/namespaces/${ns}/backups`, {
        apiVersion: `${a.group}/${a.app}`,
        kind: 'Backup',
        metadata: { name: `${name}-${i}` },
        spec: spec(i),
      });
      created.set(`${name}-${i}`, performance.now());
    });
    await eventually(
      `${n} claims of ${a.group} upstream`,
      async () => (created.size === n && [...created.keys()].every((c) => upSeen.has(c)) ? true : undefined),
      900_000,
    );
    const seconds = (Math.max(...upSeen.values()) - start) / 1000;
    const up99 = [...created].map(([c, at]) => upSeen.get(c)! - at);
    // Downward: status on every copy upstream, in the storage version, as Crossplane writes it.
    const copies = (((await requireOk(kp, 'GET', `/apis/${a.group}/v2/backups`)).items ?? []) as KubernetesObject[]).filter(mine);
    const patched = new Map<string, number>();
    const ready = { type: 'Ready', status: 'True', reason: 'Available', message: '', lastTransitionTime: new Date().toISOString() };
    await pool(copies.length, async (i) => {
      const m = copies[i]!.metadata!;
      await requireOk(
        kp,
        'PATCH',
        `/apis/${a.group}/v2/namespaces/${m.namespace}/backups/${m.name}/status`,
        { status: { conditions: [ready] } },
        'application/merge-patch+json',
      );
      patched.set(m.name!, performance.now());
    });
    await eventually(
      `status of ${a.group} down`,
      async () => ([...patched.keys()].every((c) => downSeen.has(c)) ? true : undefined),
      900_000,
    );
    await Promise.all([up.stop(), down.stop()]);
    return {
      seconds,
      up: up99,
      down: [...patched].map(([c, at]) => downSeen.get(c)! - at),
      konnectorCpuS: cpuSeconds(konnector.proc.pid) - k0,
      serverCpuS: cpuSeconds(server.proc.pid) - s0,
    };
  };
  type Round = Awaited<ReturnType<typeof round>>;
  // A warm-up of each (the first claims of a namespace wait for its provider namespace; the konnector's first sync of
  // an API starts its informers), then A B C C B A, so no arm has the machine's better part of the run.
  const arms: Record<Arm, { group: string; app: 'v1' | 'v2' }> = { without: plain, konnector: versioned, webhook: webhooked };
  for (const k of Object.keys(arms) as Arm[]) await round(arms[k], 'warm', Math.ceil(N / 10));
  const measured: Record<Arm, Round[]> = { without: [], konnector: [], webhook: [] };
  for (const [k, r] of [
    ['without', 'r1'],
    ['konnector', 'r1'],
    ['webhook', 'r1'],
    ['webhook', 'r2'],
    ['konnector', 'r2'],
    ['without', 'r2'],
  ] as const) {
    const x = await round(arms[k], r, N);
    measured[k].push(x);
    log(`${k}, round ${r}: ${(N / x.seconds).toFixed(0)} claims/s`);
  }
  const summary = (k: Arm) => {
    const rs = measured[k];
    const up = rs.flatMap((x) => x.up);
    const down = rs.flatMap((x) => x.down);
    return {
      appVersion: arms[k].app,
      claimsPerSecond: (N * rs.length) / rs.reduce((t, x) => t + x.seconds, 0),
      upP50Ms: pct(up, 50),
      upP99Ms: pct(up, 99),
      downP50Ms: pct(down, 50),
      downP99Ms: pct(down, 99),
      konnectorCpuMsPerClaim: (rs.reduce((t, x) => t + x.konnectorCpuS, 0) * 1000) / (N * rs.length),
      conversionServerCpuS: rs.reduce((t, x) => t + x.serverCpuS, 0),
    };
  };
  const without = summary('without');
  const byArm = { without, konnector: summary('konnector'), webhook: summary('webhook') };
  const ratios = (k: 'konnector' | 'webhook') => {
    const ratio = (m: keyof typeof without) => (byArm[k][m] as number) / (without[m] as number);
    const x = { throughput: ratio('claimsPerSecond'), upP99: ratio('upP99Ms'), downP99: ratio('downP99Ms') };
    return { ...x, met: x.throughput >= 0.9 && x.upP99 <= 1.1 && x.downP99 <= 1.1 };
  };
  results.konnector = byArm;
  // The goal is the konnector's own path; the webhook's is what Klutch's konnector gets, for comparison.
  results.goal = { text: 'with a conversion within 10 % of without: throughput ≥ 0.9x, p99s ≤ 1.1x', ...ratios('konnector') };
  results.webhook = ratios('webhook');
  await konnector.proc.stop();
  await provider.stop();
} finally {
  await cp.stop();
  await server.stop();
  rmSync(work, { recursive: true, force: true });
}

type Ratios = { throughput: number; upP99: number; downP99: number; met: boolean };
const r = results as {
  reviews: { perSecond: number; p50Ms: number; p99Ms: number; serverCpuMsPerReview: number };
  konnector: Record<Arm, Record<string, number | string>>;
  goal: Ratios;
  webhook: Ratios;
};
const f = (x: number | string, d = 1) => (typeof x === 'number' ? x.toFixed(d) : x);
const label: Record<Arm, string> = {
  without: 'without a conversion (baseline)',
  konnector: 'converted by the konnector',
  webhook: "converted by the control plane's webhook",
};
const said = (x: Ratios) =>
  `throughput ${f(x.throughput, 2)}x, create→upstream p99 ${f(x.upP99, 2)}x, status→downstream p99 ${f(x.downP99, 2)}x`;
console.log(`
| conversion server | reviews/s | p50 ms | p99 ms | CPU ms/review |
|---|---|---|---|---|
| one object per review, ${CONCURRENCY} at once | ${f(r.reviews.perSecond, 0)} | ${f(r.reviews.p50Ms, 2)} | ${f(r.reviews.p99Ms, 2)} | ${f(r.reviews.serverCpuMsPerReview, 3)} |

| konnector, ${N} claims x 2 rounds (A B C C B A) | app version | claims/s | create→upstream p50 / p99 ms | status→downstream p50 / p99 ms | konnector CPU ms/claim | conversion server CPU s |
|---|---|---|---|---|---|---|
${(Object.keys(label) as Arm[])
  .map((k) => {
    const x = r.konnector[k]!;
    return `| ${label[k]} | ${x.appVersion} | ${f(x.claimsPerSecond!, 0)} | ${f(x.upP50Ms!, 0)} / ${f(x.upP99Ms!, 0)} | ${f(x.downP50Ms!, 0)} / ${f(x.downP99Ms!, 0)} | ${f(x.konnectorCpuMsPerClaim!, 2)} | ${f(x.conversionServerCpuS!, 2)} |`;
  })
  .join('\n')}

Goal (within 10 %), converted by the konnector: ${said(r.goal)}: ${r.goal.met ? 'met' : 'not met'}.
Converted by the webhook (Klutch's konnector's path), for comparison: ${said(r.webhook)}.`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'conversion.json'), `${JSON.stringify(results, null, 2)}\n`);
