/**
 * bench/readiness: how soon provider-kubernetes brings a wrapped object's readiness to its Object, and what each way
 * of getting it there costs at BENCH_OBJECTS (default 1,000) Objects — issue 24's readiness lag. The rest of the way
 * to the app cluster (Crossplane's composite, the claim, the konnector) is event-driven; this is the link that polls.
 *
 * Per mode, on a fresh test cluster with provider-kubernetes v1.3.1 alone: BENCH_OBJECTS namespaced Objects
 * (`kubernetes.m.crossplane.io`), each wrapping an a8s Postgresql with the readiness our a8s recipe sets
 * (`clusterStatus == 'Running'`). Once the provider has created every Postgresql, the a8s operator stand-in marks all
 * but BENCH_SAMPLES of them Running; with those Ready, the CPU the provider and the API server (with etcd) use over
 * BENCH_WINDOW seconds of steady state; then it marks the BENCH_SAMPLES others Running at once, and the time from
 * each status write to its Object's Ready=True is a sample (a platform of N claims, a few turning Ready).
 *
 * Modes: `poll` (--poll=1m, what the suites ran until now), `short-poll` (--poll=10s), `watch` (--enable-watches,
 * Objects with `spec.watch: true`, --poll=1m). Writes bench/results/readiness.json. Goal: p99 ≤ 2 s.
 */
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Watch } from '@kubernetes/client-node';
import { A8S_POSTGRESQL, A8S_POSTGRESQL_READY, KUBERNETES_PROVIDER_CONFIG } from '../../backends';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { configureProviderKubernetes, crossplanePki, startProviderKubernetes } from '../../harness/crossplane/crossplane';
import { apply, getIfExists } from '../../harness/cluster/kube';
import type { Track } from '../../harness/cluster/control-plane';
import { kubeFor, type Kube } from '../../harness/cluster/kube';
import type { Proc } from '../../harness/cluster/processes';
import { A8sOperatorsStandIn } from '../../harness/stand-ins/a8s-operators';
import { ensureProviderKubernetes, providerKubernetesSource } from '../../harness/tools/provider-kubernetes';
import { cpuSeconds, memMiB, percentile } from '../measure';
import { sleep } from '../../lib/abort';

type Obj = Record<string, any>;

const root = process.cwd();
if (!existsSync(join(root, 'bench', 'readiness'))) throw new Error(`run from the repository root (npm run bench readiness), not ${root}`);
const N = Number(process.env.BENCH_OBJECTS ?? 1000);
const SAMPLES = Math.min(N, Number(process.env.BENCH_SAMPLES ?? 50));
const WINDOW_S = Number(process.env.BENCH_WINDOW ?? 60);
const GOAL_P99_MS = 2_000;
const NS = 'bench';

interface Mode {
  readonly name: string;
  readonly args: readonly string[];
  readonly poll: string;
  readonly watch: boolean;
  /** The legacy cluster-scoped Object (`kubernetes.crossplane.io/v1alpha2`, the default package's) instead. */
  readonly legacy?: boolean;
}
const ALL: readonly Mode[] = [
  { name: 'poll', poll: '1m', args: [], watch: false },
  { name: 'short-poll', poll: '10s', args: [], watch: false },
  { name: 'watch', poll: '1m', args: ['--enable-watches'], watch: true },
  { name: 'watch-legacy', poll: '1m', args: ['--enable-watches'], watch: true, legacy: true },
];
/** BENCH_MODES picks and orders them (`watch,poll`). */
const modes = process.env.BENCH_MODES
  ? process.env.BENCH_MODES.split(',').map((n) => {
      const m = ALL.find((x) => x.name === n);
      if (!m) throw new Error(`bench: no mode ${n}; choose from ${ALL.map((x) => x.name).join(', ')}`);
      return m;
    })
  : ALL;

/** Where a mode's Objects live. */
const objects = (m: Mode) =>
  m.legacy ? '/apis/kubernetes.crossplane.io/v1alpha2/objects' : `/apis/kubernetes.m.crossplane.io/v1alpha1/namespaces/${NS}/objects`;

const objectOf = (i: number, m: Mode): Obj => ({
  apiVersion: m.legacy ? 'kubernetes.crossplane.io/v1alpha2' : 'kubernetes.m.crossplane.io/v1alpha1',
  kind: 'Object',
  metadata: m.legacy ? { name: `pg-${i}` } : { name: `pg-${i}`, namespace: NS },
  spec: {
    providerConfigRef: m.legacy
      ? { name: KUBERNETES_PROVIDER_CONFIG }
      : { kind: 'ClusterProviderConfig', name: KUBERNETES_PROVIDER_CONFIG },
    readiness: A8S_POSTGRESQL_READY,
    ...(m.watch ? { watch: true } : {}),
    forProvider: {
      manifest: {
        ...A8S_POSTGRESQL,
        metadata: { name: `pg-${i}`, namespace: NS },
        spec: { version: 14, replicas: 1, volumeSize: '1Gi' },
      },
    },
  },
});

/**
 * When each Object was first seen Ready, by name. A watch that ends (a loaded API server closes them) is started
 * again; its fresh list may report an Object Ready later than it turned so, never earlier.
 */
function watchReady(kube: Kube, m: Mode, at: Map<string, number>): { stop(): void } {
  let stopped = false;
  let current: AbortController | undefined;
  const start = async (): Promise<void> => {
    current = await new Watch(kube.config).watch(
      objects(m),
      {},
      (_phase, o: Obj) => {
        const ready = (o.status?.conditions as Obj[] | undefined)?.some((c) => c.type === 'Ready' && c.status === 'True');
        if (ready && !at.has(o.metadata.name)) at.set(o.metadata.name, performance.now());
      },
      () => {
        if (!stopped) setTimeout(() => void start().catch(() => setTimeout(() => void start(), 1_000)), 200);
      },
    );
  };
  void start();
  return {
    stop: () => {
      stopped = true;
      current?.abort();
    },
  };
}

async function until(ok: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!(await ok())) {
    if (performance.now() > deadline) throw new Error(`bench: timed out after ${timeoutMs / 1000}s waiting for ${what}`);
    await sleep(250);
  }
}

/** As `until`, but a timeout is a result (said, and measured as missing samples), not a failure. */
async function upTo(ok: () => boolean | Promise<boolean>, what: string, timeoutMs: number): Promise<boolean> {
  return until(ok, what, timeoutMs).then(
    () => true,
    (e: Error) => (console.log(`  ${e.message}`), false),
  );
}

/** Runs `f` on every item, `n` at a time. */
async function pool<T>(items: readonly T[], n: number, f: (t: T) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (next < items.length) await f(items[next++]!);
    }),
  );
}

async function run(mode: Mode) {
  const cp = await startControlPlanes({ clusters: [`readiness-${mode.name}`] });
  const cluster = cp.clusters[`readiness-${mode.name}`]!;
  const kube = kubeFor(cluster);
  const procs: Proc[] = [];
  const track: Track = (p) => procs.push(p);
  try {
    const dir = join(cp.runDir, 'provider');
    mkdirSync(dir, { recursive: true });
    const pki = await crossplanePki(join(dir, 'pki'));
    await apply(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: 'crossplane-system' } });
    const operators = new A8sOperatorsStandIn(kube);
    await operators.installCrds();
    const bin = await ensureProviderKubernetes();
    console.log(`  starting provider-kubernetes ${[`--poll=${mode.poll}`, ...mode.args].join(' ')}`);
    const provider = await startProviderKubernetes(
      bin,
      providerKubernetesSource(),
      kube,
      cluster,
      dir,
      pki,
      { poll: mode.poll, args: mode.args },
      track,
    );
    await configureProviderKubernetes(kube, cluster);
    await apply(kube, { apiVersion: 'v1', kind: 'Namespace', metadata: { name: NS } });
    const readyAt = new Map<string, number>();
    const watch = watchReady(kube, mode, readyAt);

    const t0 = performance.now();
    await pool(
      Array.from({ length: N }, (_, i) => i),
      8,
      async (i) => {
        const r = await kube.request('POST', objects(mode), objectOf(i, mode));
        if (r.code !== 201) throw new Error(`bench: cannot create Object pg-${i}: ${r.code} ${JSON.stringify(r.body.message)}`);
      },
    );
    const pgs = `/apis/postgresql.anynines.com/v1beta3/namespaces/${NS}/postgresqls`;
    // A new kind's watch cache answers 429 for a moment: counted as none yet.
    const count = async () => ((await getIfExists(kube, pgs).catch(() => undefined))?.items?.length ?? 0) as number;
    await until(async () => (await count()) === N, `${N} Postgresqls created by provider-kubernetes`, 900_000);
    const createdS = (performance.now() - t0) / 1000;
    console.log(`  ${N} Objects and their Postgresqls in ${createdS.toFixed(1)} s`);

    // First every other Object Ready (the steady state of a platform with N claims), then what keeping them observed
    // costs, then the samples: marked Running at once, each timed from its own status write.
    const rest = Array.from({ length: N - SAMPLES }, (_, i) => `pg-${i + SAMPLES}`);
    const restStart = performance.now();
    await pool(rest, 8, (name) => operators.postgresqlRunning(NS, name));
    await upTo(() => rest.every((n) => readyAt.has(n)), `${rest.length} Objects Ready`, 600_000);
    const allReadyS = (performance.now() - restStart) / 1000;
    const readyCount = readyAt.size;
    console.log(`  ${readyCount} Objects Ready ${allReadyS.toFixed(1)} s after their status was written`);

    // Steady state: the Objects Ready, nothing changes; what does keeping them observed cost?
    const [etcd, apiserver] = cp.pids;
    const cpu = () => ({ provider: cpuSeconds(provider.proc.pid), api: cpuSeconds(apiserver!) + cpuSeconds(etcd!) });
    const before = cpu();
    await sleep(WINDOW_S * 1000);
    const after = cpu();

    const written = new Map<string, number>();
    await pool(
      Array.from({ length: SAMPLES }, (_, i) => `pg-${i}`),
      8,
      async (name) => {
        await operators.postgresqlRunning(NS, name);
        written.set(name, performance.now());
      },
    );
    const LAG_LIMIT_MS = 300_000;
    await upTo(() => [...written.keys()].every((n) => readyAt.has(n)), `${SAMPLES} sampled Objects Ready`, LAG_LIMIT_MS);
    // A sample not Ready by then counts as the limit (the percentiles are then lower bounds, and said so).
    const lags = [...written].map(([n, t]) => (readyAt.has(n) ? readyAt.get(n)! - t : LAG_LIMIT_MS));
    const missing = [...written.keys()].filter((n) => !readyAt.has(n)).length;
    console.log(`  ${SAMPLES} samples Ready: p99 ${percentile(lags, 99).toFixed(0)} ms`);
    watch.stop();
    return {
      mode: mode.name,
      args: [`--poll=${mode.poll}`, ...mode.args],
      objects: N,
      createdS,
      lag: { n: lags.length, notReadyInTime: missing, p50Ms: percentile(lags, 50), p99Ms: percentile(lags, 99), maxMs: Math.max(...lags) },
      allReadyS,
      readyCount,
      steadyCpuPerMinute: {
        providerS: ((after.provider - before.provider) * 60) / WINDOW_S,
        apiServerAndEtcdS: ((after.api - before.api) * 60) / WINDOW_S,
      },
      providerPeakMiB: memMiB(provider.proc.pid, 'VmHWM'),
    };
  } finally {
    for (const p of procs) await p.stop();
    await cp.stop();
  }
}

const results: Awaited<ReturnType<typeof run>>[] = [];
const save = () => {
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'readiness.json'),
    `${JSON.stringify({ date: new Date().toISOString(), objects: N, samples: SAMPLES, windowS: WINDOW_S, goalP99Ms: GOAL_P99_MS, results }, null, 2)}\n`,
  );
};
for (const m of modes) {
  console.log(`mode ${m.name}: ${N} Objects ...`);
  results.push(await run(m));
  save(); // each mode's result kept as it comes: a 1,000-Object run takes minutes per mode
}
console.log(
  `\n${'mode'.padEnd(11)} ${'args'.padEnd(28)} ${'Running→Ready p50'.padStart(17)} ${'p99'.padStart(8)} ${'max'.padStart(8)} ${'CPU s/min provider'.padStart(19)} ${'API+etcd'.padStart(9)} ${'peak MiB'.padStart(9)}`,
);
for (const r of results) {
  console.log(
    `${r.mode.padEnd(11)} ${r.args.join(' ').padEnd(28)} ${`${r.lag.p50Ms.toFixed(0)} ms`.padStart(17)} ${`${r.lag.p99Ms.toFixed(0)} ms`.padStart(8)} ${`${r.lag.maxMs.toFixed(0)} ms`.padStart(8)} ${r.steadyCpuPerMinute.providerS.toFixed(2).padStart(19)} ${r.steadyCpuPerMinute.apiServerAndEtcdS.toFixed(2).padStart(9)} ${r.providerPeakMiB.toFixed(0).padStart(9)}`,
  );
}
for (const r of results)
  console.log(
    `goal (${r.mode}): a8s object Running → Object Ready p99 ≤ ${GOAL_P99_MS / 1000} s: ${r.lag.p99Ms <= GOAL_P99_MS ? 'met' : 'MISSED'}` +
      (r.lag.notReadyInTime
        ? ` (${r.lag.notReadyInTime} of ${r.lag.n} samples not Ready within 300 s; ${r.readyCount} of ${r.objects} Ready in the end)`
        : ''),
  );
console.log('wrote bench/results/readiness.json');
