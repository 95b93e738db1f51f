/**
 * bench/function: RunFunction for an a9s-postgresql composite with 20 parameters — in process, and over real gRPC
 * on loopback against the bundled function at concurrency 1 and 16. Prints a table and writes
 * bench/results/function.json. Goal: p99 over gRPC at concurrency 1 ≤ 5 ms.
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Severity, type RunFunctionRequest } from '@crossplane-org/function-sdk-typescript';
import type { Api } from '../../apis/api';
import { bundleDeployable, deployable } from '../../synth/deployables';
import { functionClient, startFunctionProcess } from '../../test/support/function-process';
import { allParameters, compositeOf, inputOf, requestOf } from '../../test/support/function';
import { runFunction } from '../../functions/dataservices/fn';
import postgresql from '../../apis/catalog/postgresql';
import { percentile as pct } from '../measure';

// Benches run bundled from node_modules/.cache, so the repository is found from the working directory (npm sets it).
const root = process.cwd();
if (!existsSync(join(root, 'functions', 'dataservices')))
  throw new Error(`run from the repository root (npm run bench function), not ${root}`);
const N = Number(process.env.BENCH_CALLS ?? 4000);
const WARMUP = 500;

// Imported statically: the bench runs as one bundle with plain node, which cannot import the catalog's .ts files.
const pg: Api = 'api' in postgresql ? (postgresql as { api: Api }).api : (postgresql as unknown as Api);
const a9sParams = new Set((pg.backends.a9s?.parameters ?? []).map((p) => p.from));
const params = Object.fromEntries(
  Object.entries(allParameters(pg))
    .filter(([k]) => a9sParams.has(k))
    .slice(0, 20),
);
if (Object.keys(params).length !== 20) throw new Error(`a9s postgresql offers ${Object.keys(params).length} parameters, want 20`);
const request = (): RunFunctionRequest =>
  requestOf(
    inputOf(pg, 'a9s'),
    compositeOf(pg, 'a9s', { service: 'a9s-postgresql17', plan: 'postgresql-single-small', parameters: params }),
  );
{
  const check = runFunction(request());
  const fatal = check.results.find((r) => r.severity === Severity.SEVERITY_FATAL);
  if (fatal) throw new Error(`the bench request fails: ${fatal.message}`);
  const set = Object.keys((check.desired?.resources['a9s-postgresql']?.resource as any)?.spec?.forProvider?.parameters ?? {}).length;
  if (set !== 20) throw new Error(`the composed resource has ${set} parameters, want 20`);
}

interface Row {
  what: string;
  concurrency: number;
  calls: number;
  perSecond: number;
  p50: number;
  p99: number;
}
function row(what: string, concurrency: number, lat: number[], wallMs: number): Row {
  const s = [...lat].sort((a, b) => a - b);
  return { what, concurrency, calls: lat.length, perSecond: (lat.length / wallMs) * 1000, p50: pct(s, 50), p99: pct(s, 99) };
}

const rows: Row[] = [];
{
  const reqs = Array.from({ length: N + WARMUP }, request);
  for (let i = 0; i < WARMUP; i++) runFunction(reqs[i] as RunFunctionRequest);
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = WARMUP; i < N + WARMUP; i++) {
    const t = performance.now();
    runFunction(reqs[i] as RunFunctionRequest);
    lat.push(performance.now() - t);
  }
  rows.push(row('in process (runFunction)', 1, lat, performance.now() - t0));
}

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-fn-'));
const bundle = join(tmp, 'function.mjs');
copyFileSync(await bundleDeployable(root, deployable('function')), bundle);
const fp = await startFunctionProcess(bundle, ['--metrics-address', '']);
try {
  for (const concurrency of [1, 16]) {
    const clients = Array.from({ length: concurrency }, () => functionClient(`127.0.0.1:${fp.port}`));
    const warm = Array.from({ length: WARMUP }, request);
    await Promise.all(
      clients.map(async (c, k) => {
        for (let i = k; i < warm.length; i += concurrency) await c.run(warm[i] as RunFunctionRequest);
      }),
    );
    const reqs = Array.from({ length: N }, request);
    const lat: number[] = [];
    const t0 = performance.now();
    await Promise.all(
      clients.map(async (c, k) => {
        for (let i = k; i < N; i += concurrency) {
          const t = performance.now();
          await c.run(reqs[i] as RunFunctionRequest);
          lat.push(performance.now() - t);
        }
      }),
    );
    rows.push(row('gRPC loopback, bundled function', concurrency, lat, performance.now() - t0));
    for (const c of clients) c.close();
  }
} finally {
  await fp.stop();
  rmSync(tmp, { recursive: true, force: true });
}

const goal = rows.find((r) => r.what.startsWith('gRPC') && r.concurrency === 1) as Row;
console.log(`RunFunction, a9s-postgresql composite with 20 parameters, ${N} calls each (after ${WARMUP} warm-up)\n`);
console.log(`${'what'.padEnd(34)}${'conc.'.padStart(6)}${'calls/s'.padStart(10)}${'p50 ms'.padStart(9)}${'p99 ms'.padStart(9)}`);
for (const r of rows) {
  console.log(
    `${r.what.padEnd(34)}${String(r.concurrency).padStart(6)}${r.perSecond.toFixed(0).padStart(10)}${r.p50.toFixed(3).padStart(9)}${r.p99.toFixed(3).padStart(9)}`,
  );
}
console.log(`\ngoal: gRPC p99 at concurrency 1 ≤ 5 ms — ${goal.p99 <= 5 ? 'met' : 'NOT met'} (${goal.p99.toFixed(3)} ms)`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'function.json'),
  `${JSON.stringify({ date: new Date().toISOString(), calls: N, warmup: WARMUP, parameters: 20, rows, goal: { what: 'gRPC p99 at concurrency 1 ≤ 5 ms', met: goal.p99 <= 5 } }, null, 2)}\n`,
);
