/**
 * bench/konnector: the konnector between two real control planes (`p` provider, `c` app cluster), as its bundled
 * process with the synthesized RBAC. Prints a table and writes bench/results/konnector.json.
 *
 * - baseline (same run): the same 1,000 creates sent straight to the provider's API server — what the API servers
 *   can take without a konnector;
 * - 1,000 claims created at once (client concurrency BENCH_CONCURRENCY, default 8): claims synced per second,
 *   create→upstream p50/p99 (from the create call's return to the copy's watch event on the provider);
 * - status on all 1,000 copies: status→downstream p50/p99;
 * - CPU seconds of the konnector, the API servers + etcd, and the bench client during the 1,000 claims (the share
 *   says who limits throughput);
 * - 5,000 bound claims (5,000 objects in each cluster): the konnector's RSS (and peak);
 * - chaos at full scale: 1,000 updates and 500 deletes while the konnector is killed three times and each API server
 *   is restarted; time until every invariant of harness/parts/konnector-chaos.ts holds.
 * BENCH_QPS=5 runs the konnector with `--kube-api-qps=5`, Klutch's client-go limit, for a like-for-like comparison.
 * The konnector runs on the images' Node 24 (BENCH_NODE=<path> picks another node) with the Deployment's NODE_OPTIONS,
 * bundled once at the start (restarts run the same program while the shared tree changes); BENCH_KONNECTOR=<git
 * revision> runs that revision's konnector instead (a before/after is two runs). BENCH_HEAP_SNAPSHOT=<dir> has the
 * konnector write a V8 heap snapshot there at 5,000 objects, after the memory figures are read. BENCH_NODE_OPTIONS adds
 * Node/V8 flags to the Deployment's NODE_OPTIONS (runtime settings tried before they ship).
 * Goals: p99 create→upstream ≤ 250 ms at 1,000 claims; peak RSS ≤ 130 MiB through the 1,000-claim phases and
 * ≤ 150 MiB at 5,000 objects (issue 24).
 */
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { KubernetesObject } from '@kubernetes/client-node';
import { watchInformer } from '../../controller';
import postgresql from '../../apis/catalog/postgresql';
import type { Api } from '../../apis/api';
import { render } from '../../synth/synth';
import { parseYaml } from '../../harness/crossplane/catalog';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { bindApp, installKonnectorAccess, startKonnector, type KonnectorProcess } from '../../harness/parts/konnector';
import { chaosInvariants, chaosWorkload, type ChaosReport, type ChaosWorld } from '../../harness/parts/konnector-chaos';
import { eventually, kubeFor } from '../../harness/cluster/kube';
import { providerSide } from '../../harness/parts/provider-side';
import { claimCrd, type XrdObject } from '../../lib/xcrd';
import { KONNECTOR_NODE_OPTIONS, KONNECTOR_RUNTIME_ENV } from '../../konnector/deploy/konnector';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { ensureNodeRuntime } from '../../harness/tools/node-runtime';
import { cpuSeconds, memMiB, percentile as pct } from '../measure';
import { bundleAtRevision } from '../revision';
import { sleep } from '../../lib/abort';

const root = process.cwd();
if (!existsSync(join(root, 'konnector', 'main.ts'))) throw new Error(`run from the repository root (npm run bench konnector), not ${root}`);
const N = Number(process.env.BENCH_CLAIMS ?? 1000);
const TOTAL = Number(process.env.BENCH_OBJECTS ?? 5000);
const CONCURRENCY = Number(process.env.BENCH_CONCURRENCY ?? 8);
const RATE = Number(process.env.BENCH_RATE ?? 20);
const WORKERS = Number(process.env.BENCH_WORKERS ?? 16);
/** The konnector's --kube-api-qps: 0, none; 5 holds it to Klutch's client-go limit for a like-for-like comparison. */
const QPS = Number(process.env.BENCH_QPS ?? 0);
const NAMESPACES = Array.from({ length: 10 }, (_, i) => `bench-${i}`);
const NS = 'klutch-bind';
const LEASE = ['--lease-duration=4s', '--renew-deadline=3s', '--retry-period=1s'];
const REVISION = process.env.BENCH_KONNECTOR;
const HEAP_DIR = process.env.BENCH_HEAP_SNAPSHOT ? resolve(process.env.BENCH_HEAP_SNAPSHOT) : undefined;

const pg: Api = 'api' in postgresql ? (postgresql as { api: Api }).api : (postgresql as unknown as Api);
const files = render({ apis: [pg], outdir: 'unused' });
const crd = claimCrd(parseYaml(files.get('packages/dataservices/apis/postgresql/definition.yaml')!)[0] as unknown as XrdObject);

const log = (s: string) => process.stderr.write(`[bench/konnector] ${s}\n`);

// The program under test, fixed for the whole run (the kills of the chaos phase restart the same one).
const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-konnector-'));
const node = process.env.BENCH_NODE ?? ensureNodeRuntime(log).node;
const nodeVersion = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
const konnectorBundle = REVISION
  ? await bundleAtRevision({ root, rev: REVISION, deployable: deployable('konnector'), outDir: tmp })
  : join(tmp, 'konnector.mjs');
if (!REVISION) copyFileSync(await bundleDeployable(root, deployable('konnector')), konnectorBundle);
const nodeOptions = [
  KONNECTOR_NODE_OPTIONS,
  ...(process.env.BENCH_NODE_OPTIONS ? [process.env.BENCH_NODE_OPTIONS] : []),
  ...(HEAP_DIR ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${HEAP_DIR}`] : []),
].join(' ');
if (HEAP_DIR) mkdirSync(HEAP_DIR, { recursive: true });
log(
  `konnector: ${REVISION ? `revision ${REVISION}` : 'the working tree'} on node ${nodeVersion} (${node}), NODE_OPTIONS=${nodeOptions}, MALLOC_ARENA_MAX=${KONNECTOR_RUNTIME_ENV.MALLOC_ARENA_MAX}`,
);

const cp = await startControlPlanes({ clusters: ['p', 'c'], log: () => undefined });
const results: Record<string, unknown> = {
  date: new Date().toISOString(),
  konnector: REVISION ?? 'working tree',
  node: nodeVersion,
  nodeOptions: [KONNECTOR_NODE_OPTIONS, process.env.BENCH_NODE_OPTIONS ?? ''].join(' ').trim(),
  mallocArenaMax: KONNECTOR_RUNTIME_ENV.MALLOC_ARENA_MAX,
  claims: N,
  objects: TOTAL,
  concurrency: CONCURRENCY,
  workers: WORKERS,
  kubeApiQps: QPS,
};
let konnector: KonnectorProcess | undefined;
try {
  const kp = kubeFor(cp.clusters.p!);
  const kc = kubeFor(cp.clusters.c!);
  const provider = await providerSide({ provider: cp.clusters.p!, crd });
  const world: ChaosWorld = { consumer: kc, provider: kp, clusterNamespace: provider.clusterNamespace, namespaces: NAMESPACES };

  // Baseline: the API server alone, the same creates with the same client.
  const base = chaosWorkload({ ...world, consumer: kp, namespaces: ['baseline'] }, { concurrency: CONCURRENCY });
  await base.createNamespaces();
  const b0 = performance.now();
  await base.create(0, N);
  const baselineS = (performance.now() - b0) / 1000;
  results.baseline = { createsPerSecond: N / baselineS, seconds: baselineS };
  log(`baseline: ${N} creates on the API server alone in ${baselineS.toFixed(1)} s`);
  await kp.request('DELETE', '/api/v1/namespaces/baseline');
  await eventually(
    'baseline namespace gone',
    async () => ((await kp.request('GET', '/api/v1/namespaces/baseline')).code === 404 ? true : undefined),
    300_000,
  );

  const kubeconfig = await installKonnectorAccess(cp.clusters.c!, NS, [{ group: 'anynines.com', resource: 'postgresqlinstances' }]);
  const logDir = join(cp.runDir, 'konnector');
  mkdirSync(logDir, { recursive: true });
  const start = async () =>
    (konnector = await startKonnector({
      kubeconfig,
      namespace: NS,
      logDir,
      bundle: konnectorBundle,
      node,
      nodeOptions,
      args: [...LEASE, `--workers=${WORKERS}`, ...(QPS ? [`--kube-api-qps=${QPS}`] : [])],
    }));
  await start();
  await bindApp(cp.clusters.c!, NS, provider, provider.exportName);
  await eventually('binding Ready', async () => {
    const b = (await kc.request('GET', `/apis/klutch.anynines.com/v1alpha1/namespaces/${NS}/apiservicebindings/${provider.exportName}`))
      .body as {
      status?: { conditions?: { type: string; status: string }[] };
    };
    return b.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  });

  // Watches that time arrivals on each side.
  const upSeen = new Map<string, number>();
  const downSeen = new Map<string, number>();
  const up = watchInformer<KubernetesObject>({
    kc: kp.config,
    path: '/apis/anynines.com/v1/postgresqlinstances',
  });
  up.on('add', (o) => upSeen.has(o.metadata!.name!) || upSeen.set(o.metadata!.name!, performance.now()));
  const down = watchInformer<KubernetesObject>({
    kc: kc.config,
    path: '/apis/anynines.com/v1/postgresqlinstances',
  });
  const onDown = (o: KubernetesObject) => {
    if ((o as { status?: { managed?: { state?: string } } }).status?.managed?.state === 'bench' && !downSeen.has(o.metadata!.name!))
      downSeen.set(o.metadata!.name!, performance.now());
  };
  down.on('update', onDown);
  await Promise.all([up.start(), down.start()]);

  const w = chaosWorkload(world, { concurrency: CONCURRENCY });
  await w.createNamespaces();
  const kpid = () => konnector!.proc.pid;
  const apiPids = cp.pids;
  const cpuNow = () => ({ k: cpuSeconds(kpid()), api: apiPids.reduce((s, p) => s + cpuSeconds(p), 0), bench: process.cpuUsage() });
  /** Creates claims from..to-1 and waits for each copy upstream; latencies, wall time and CPU by process group. */
  const phase = async (from: number, to: number, perSecond?: number) => {
    const created = new Map<string, number>();
    const c0 = cpuNow();
    const start = performance.now();
    await w.create(from, to, (i, at) => created.set(`c-${i}`, at), perSecond);
    await eventually(
      `${to - from} claims upstream`,
      async () => ([...created.keys()].every((n) => upSeen.has(n)) ? true : undefined),
      900_000,
    );
    const wall = (Math.max(...[...created.keys()].map((n) => upSeen.get(n)!)) - start) / 1000;
    const c1 = cpuNow();
    const lat = [...created].map(([n, at]) => upSeen.get(n)! - at);
    const cpu = {
      konnector: c1.k - c0.k,
      apiServersAndEtcd: c1.api - c0.api,
      benchClient: (process.cpuUsage(c0.bench).user + process.cpuUsage(c0.bench).system) / 1e6,
    };
    const total = cpu.konnector + cpu.apiServersAndEtcd + cpu.benchClient;
    return {
      claimsPerSecond: (to - from) / wall,
      seconds: wall,
      p50Ms: pct(lat, 50),
      p99Ms: pct(lat, 99),
      maxMs: Math.max(...lat),
      cpu: { ...cpu, konnectorShare: cpu.konnector / total, konnectorMsPerClaim: (cpu.konnector * 1000) / (to - from) },
    };
  };
  // The first claim of a namespace waits for the backend to assign a provider namespace: measured on its own.
  const W = NAMESPACES.length;
  results.firstInNamespace = await phase(0, W);
  results.paced = { perSecond: RATE, ...(await phase(W, W + N, RATE)) };
  log(`${N} claims at ${RATE}/s done`);
  results.burst = await phase(W + N, W + 2 * N);
  log(`${N} claims at once done`);

  // Status on every copy.
  const sent = new Map<string, number>();
  const mapped = new Map<string, string>();
  for (const n of NAMESPACES) {
    const sn = (
      await kp.request('GET', `/apis/klutch.anynines.com/v1alpha1/namespaces/${provider.clusterNamespace}/apiservicenamespaces/${n}`)
    ).body as {
      status?: { namespace?: string };
    };
    mapped.set(n, sn.status!.namespace!);
  }
  const ids = Array.from({ length: N }, (_, i) => i);
  let t0 = performance.now();
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      for (let i = ids.shift(); i !== undefined; i = ids.shift()) {
        const pns = mapped.get(NAMESPACES[i % NAMESPACES.length]!)!;
        await kp.request(
          'PATCH',
          `/apis/anynines.com/v1/namespaces/${pns}/postgresqlinstances/c-${i}/status`,
          { status: { managed: { state: 'bench' } } },
          'application/merge-patch+json',
        );
        sent.set(`c-${i}`, performance.now());
      }
    }),
  );
  await eventually(`${N} statuses down`, async () => (downSeen.size >= N ? true : undefined), 600_000);
  const downLat = [...sent].map(([n, at]) => downSeen.get(n)! - at);
  results.statusToDownstream = {
    perSecond: N / ((Math.max(...downSeen.values()) - t0) / 1000),
    p50Ms: pct(downLat, 50),
    p99Ms: pct(downLat, 99),
  };
  log('statuses down');
  // Peak so far: the paced and burst phases and the statuses of their claims (2,000 and the first of each namespace).
  results.memoryAtClaims = { claims: W + 2 * N, peakMiB: memMiB(kpid(), 'VmHWM') };
  log(`peak RSS after the ${N}-claim phases: ${memMiB(kpid(), 'VmHWM').toFixed(1)} MiB`);

  // 5,000 bound claims: memory.
  await w.create(W + 2 * N, TOTAL);
  await eventually(`${TOTAL} claims upstream`, async () => (upSeen.size >= TOTAL ? true : undefined), 900_000);
  await sleep(5000);
  results.memory = { objects: TOTAL, rssMiB: memMiB(kpid(), 'VmRSS'), peakMiB: memMiB(kpid(), 'VmHWM') };
  log(`${TOTAL} claims bound: RSS ${memMiB(kpid(), 'VmRSS').toFixed(1)} MiB, peak ${memMiB(kpid(), 'VmHWM').toFixed(1)} MiB`);
  if (HEAP_DIR) {
    const before = new Set(readdirSync(HEAP_DIR));
    process.kill(kpid(), 'SIGUSR2');
    const file = await eventually(
      'heap snapshot written',
      async () => readdirSync(HEAP_DIR).find((f) => !before.has(f) && f.endsWith('.heapsnapshot')),
      120_000,
    );
    // Written once its size stops changing.
    let size = -1;
    for (let now = 0; now !== size || size === 0; await sleep(2000)) {
      size = now;
      now = statSync(join(HEAP_DIR, file as string)).size;
    }
    log(`heap snapshot: ${join(HEAP_DIR, file as string)}`);
  }
  await Promise.all([up.stop(), down.stop()]);

  // Chaos at full scale.
  const killAndStart = async () => {
    await konnector!.proc.kill();
    await start();
  };
  t0 = performance.now();
  await Promise.all([w.update(0, N, 500), killAndStart().then(() => cp.restartApiServer('p'))]);
  await Promise.all([w.remove(N, N + N / 2), killAndStart().then(() => cp.restartApiServer('c', { crash: true }))]);
  await killAndStart();
  const report = (await eventually(
    'convergence after chaos',
    async () => (await chaosInvariants(world)) as ChaosReport | undefined,
    900_000,
  ).catch(async (e: Error) => {
    throw new Error(`${e.message}: ${JSON.stringify(await chaosInvariants(world, true))}`);
  })) as ChaosReport;
  results.chaos = {
    kills: 3,
    apiServerRestarts: 2,
    updates: N,
    deletes: N / 2,
    convergedSeconds: (performance.now() - t0) / 1000,
    claims: report.claims,
    upstream: report.upstream,
  };
  log('chaos converged');
} finally {
  await konnector?.proc.stop();
  await cp.stop();
  rmSync(tmp, { recursive: true, force: true });
}

const r = results as Record<string, any>;
const goals = { p99CreateToUpstreamMs: 250, rssMiB: 150, peakAtClaimsMiB: 130 };
const met = {
  p99: r.paced.p99Ms <= goals.p99CreateToUpstreamMs,
  rss: r.memory.peakMiB <= goals.rssMiB,
  peakAtClaims: r.memoryAtClaims.peakMiB <= goals.peakAtClaimsMiB,
};
results.goals = { ...goals, met };
const row = (what: string, value: string, goal = '') => console.log(`${what.padEnd(50)} ${value.padStart(22)}  ${goal}`);
const cpuRow = (what: string, c: any) =>
  row(
    `${what}: CPU s konnector / API+etcd / client`,
    `${c.konnector.toFixed(1)} / ${c.apiServersAndEtcd.toFixed(1)} / ${c.benchClient.toFixed(1)}`,
    `konnector ${(c.konnectorShare * 100).toFixed(0)} %, ${c.konnectorMsPerClaim.toFixed(1)} ms/claim`,
  );
console.log(`\nkonnector: ${r.konnector} on node ${r.node}, NODE_OPTIONS=${r.nodeOptions}, MALLOC_ARENA_MAX=${r.mallocArenaMax}`);
console.log(`${'what'.padEnd(50)} ${'value'.padStart(22)}  goal`);
row('baseline: creates/s on the API server alone', r.baseline.createsPerSecond.toFixed(0));
row(
  `${N} claims at ${RATE}/s: create→upstream p50 / p99`,
  `${r.paced.p50Ms.toFixed(0)} / ${r.paced.p99Ms.toFixed(0)} ms`,
  `p99 ≤ 250 ms ${met.p99 ? 'ok' : 'MISSED'}`,
);
cpuRow('  paced', r.paced.cpu);
row(
  `${N} claims at once: claims synced/s`,
  r.burst.claimsPerSecond.toFixed(0),
  `vs ${r.baseline.createsPerSecond.toFixed(0)} creates/s baseline`,
);
row(`${N} claims at once: create→upstream p50 / p99`, `${r.burst.p50Ms.toFixed(0)} / ${r.burst.p99Ms.toFixed(0)} ms`);
cpuRow('  burst', r.burst.cpu);
row('status→downstream p50 / p99', `${r.statusToDownstream.p50Ms.toFixed(0)} / ${r.statusToDownstream.p99Ms.toFixed(0)} ms`);
row(
  `konnector peak RSS after the ${N}-claim phases (${r.memoryAtClaims.claims} claims)`,
  `${r.memoryAtClaims.peakMiB.toFixed(0)} MiB`,
  `peak ≤ 130 MiB ${met.peakAtClaims ? 'ok' : 'MISSED'}`,
);
row(
  `konnector RSS / peak at ${TOTAL} objects per cluster`,
  `${r.memory.rssMiB.toFixed(0)} / ${r.memory.peakMiB.toFixed(0)} MiB`,
  `peak ≤ 150 MiB ${met.rss ? 'ok' : 'MISSED'}`,
);
row(
  'chaos (3 kills, 2 API server restarts): converged',
  `${r.chaos.convergedSeconds.toFixed(1)} s`,
  `${r.chaos.claims} claims, ${r.chaos.upstream} twins`,
);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(join(root, 'bench', 'results', 'konnector.json'), `${JSON.stringify(results, null, 2)}\n`);
console.log('wrote bench/results/konnector.json');
// The run is over: a handle still open (seen: the run did not end after writing its results) must not keep it
// waiting forever; say which, then end.
const open = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap');
if (open.length) log(`ending with handles still open: ${[...new Set(open)].join(', ')}`);
process.exit(0);
