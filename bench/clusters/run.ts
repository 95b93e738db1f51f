/**
 * bench/clusters: how long the test control planes take to come up, and how much memory they hold.
 *
 * Rows: start-to-ready (etcd, API servers on /readyz, controllers running) for one and for two clusters, median of
 * BENCH_RUNS starts (default 3), with the resident memory of all their processes once ready. The cold build of the
 * binary is measured only with BENCH_COLD=1 (fresh Go build and module caches in a temporary folder, as on a new
 * machine: module downloads included), or when the binary is not built yet. Goal: two clusters ready in under 10 s when warm.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { ensureKubeBinary, kubeBinaryPath } from '../../harness/tools/kube';
import { memMiB as rssMiB } from '../measure';

const root = process.cwd();
if (!existsSync(join(root, 'harness', 'tools', 'kube', 'go.mod')))
  throw new Error(`run from the repository root (npm run bench clusters), not ${root}`);
const runs = Number(process.env.BENCH_RUNS ?? 3);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;

let coldBuildS: number | undefined;
if (process.env.BENCH_COLD === '1' || !existsSync(kubeBinaryPath())) {
  const cache = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-cold-'));
  const saved = { GOCACHE: process.env.GOCACHE, GOMODCACHE: process.env.GOMODCACHE, KLUTCH_KIT_CACHE: process.env.KLUTCH_KIT_CACHE };
  if (process.env.BENCH_COLD === '1') {
    process.env.GOCACHE = join(cache, 'go-build');
    process.env.GOMODCACHE = join(cache, 'go-mod');
    process.env.KLUTCH_KIT_CACHE = join(cache, 'klutch-kit');
  }
  const t = performance.now();
  await ensureKubeBinary();
  coldBuildS = (performance.now() - t) / 1000;
  // The module cache is read-only by design; go itself knows how to remove it.
  if (process.env.BENCH_COLD === '1') spawnSync('go', ['clean', '-modcache'], { stdio: 'ignore', env: process.env });
  for (const [k, v] of Object.entries(saved)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
  rmSync(cache, { recursive: true, force: true });
}
const binary = await ensureKubeBinary();

interface Row {
  readonly clusters: number;
  readonly readyMs: number;
  readonly samplesMs: number[];
  readonly rssMiB: number;
  readonly processes: number;
}
const rows: Row[] = [];
for (const n of [1, 2]) {
  const samples: number[] = [];
  const rss: number[] = [];
  let processes = 0;
  for (let i = 0; i < runs; i++) {
    const t = performance.now();
    const cp = await startControlPlanes({ clusters: Array.from({ length: n }, (_, k) => `c${k}`), binary, log: () => undefined });
    samples.push(performance.now() - t);
    rss.push(cp.pids.reduce((sum, pid) => sum + rssMiB(pid), 0));
    processes = cp.pids.length;
    await cp.stop();
  }
  rows.push({ clusters: n, readyMs: median(samples), samplesMs: samples.map((s) => Math.round(s)), rssMiB: median(rss), processes });
}

const goalMs = 10_000;
const two = rows.find((r) => r.clusters === 2)!;
console.log(`\n${'what'.padEnd(34)} ${'median'.padStart(9)} ${'RSS MiB'.padStart(8)}  goal`);
if (coldBuildS !== undefined)
  console.log(`${'cold build of the binary'.padEnd(34)} ${`${coldBuildS.toFixed(0)} s`.padStart(9)} ${''.padStart(8)}`);
for (const r of rows) {
  const goal = r.clusters === 2 ? `< ${goalMs / 1000} s ${r.readyMs < goalMs ? 'ok' : 'MISSED'}` : '';
  console.log(
    `${`${r.clusters} cluster(s) ready (${r.processes} processes)`.padEnd(34)} ${`${(r.readyMs / 1000).toFixed(2)} s`.padStart(9)} ${r.rssMiB.toFixed(0).padStart(8)}  ${goal}`,
  );
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'clusters.json'),
  `${JSON.stringify({ date: new Date().toISOString(), runs, binary, coldBuildS, rows, goal: { twoClustersReadyMs: goalMs, met: two.readyMs < goalMs } }, null, 2)}\n`,
);
console.log('wrote bench/results/clusters.json');
