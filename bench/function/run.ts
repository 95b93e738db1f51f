/**
 * bench/function: RunFunction for an a9s-postgresql composite with 20 parameters, in process and over real gRPC on
 * loopback, at 1 and 16 calls in flight. The bundled function runs on the images' Node 24 with the image's runtime
 * flags (FUNCTION_RUNTIME, functions/dataservices/deploy/deployable.ts), pinned to one core; the load comes from one Go gRPC client
 * (bench/function/loadgen, the request encoded once) on the other. Every server in the same run:
 *
 * - floor: the same server answering every call with an empty response (what gRPC, the codec and the process cost);
 * - ours: the bundled function with the image's flags, and with Node's defaults (what the flags buy);
 * - baseline (BENCH_BASELINE=<git ref>, e.g. the commit before a change): the function of that commit, bundled as that
 *   commit bundled it, with the image's flags of this tree (so the row differs from ours by the code alone);
 * - candidates (BENCH_TRY='<flags>;<flags>'): ours with the image's flags plus each set (Node/V8 flags, and `NAME=value`
 *   words as environment variables), runtime settings measured in the same run before they ship.
 *
 * Per row: calls/s, p50/p99, the server's CPU per call (and the calls/s one core gives at that cost: the fair figure
 * on a shared machine), its peak RSS, and the machine's load average when the row ended. Goals (issue 24): at 16 in flight ≥ 5× the Go anchor's calls/s and peak RSS
 * ≤ 85 MiB, p99 no worse than the baseline's. The anchor, function-patch-and-transform v0.10.8 on Klutch's
 * a9s-postgresql Composition, cannot be built here (the Go module proxy refuses the module), so its figure is the one
 * issue 24 measured on this kind of machine: 663 calls/s at 16 in flight, 42 MiB.
 * Prints a table and writes bench/results/function.json.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RunFunctionRequest, Severity } from '@crossplane-org/function-sdk-typescript';
import type { Api } from '../../apis/api';
import { bundle } from '../../scripts/bundle.mjs';
import { bundleDeployable, deployable, FUNCTION_RUNTIME, replacements } from '../../synth/deployables';
import { startFunctionProcess, type FunctionProcess } from '../../harness/parts/function-process';
import { allParameters, compositeOf, inputOf, requestOf } from '../../harness/crossplane/function-requests';
import { ensureNodeRuntime } from '../../harness/tools/node-runtime';
import { runFunction } from '../../functions/dataservices/fn';
import postgresql from '../../apis/catalog/postgresql';
import { cpuSeconds, memMiB, percentile as pct } from '../measure';
import { bundleAtRevision } from '../revision';
import { ensureLoadgen, runLoad } from './loadgen';

// Benches run bundled from node_modules/.cache, so the repository is found from the working directory (npm sets it).
const root = process.cwd();
if (!existsSync(join(root, 'functions', 'dataservices')))
  throw new Error(`run from the repository root (npm run bench function), not ${root}`);
const N = Number(process.env.BENCH_CALLS ?? 20_000);
const WARMUP = 2_000;
const BASELINE = process.env.BENCH_BASELINE;
const TRY = (process.env.BENCH_TRY ?? '').split(';').filter((t) => t.trim());
/** Issue 24's figures for function-patch-and-transform v0.10.8 on Klutch's a9s-postgresql Composition. */
const ANCHOR = { what: 'function-patch-and-transform v0.10.8 (Go)', perSecond16: 663, rssMiB: 42 };
const GOAL = { timesAnchor: 5, rssMiB: 85 };
const log = (s: string) => process.stderr.write(`[bench/function] ${s}\n`);

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
  /** The server's CPU time per call (µs), warm-up included; undefined in process. */
  cpuMicros?: number;
  /** Peak RSS of the server process so far (MiB). */
  peakRssMiB?: number;
  /** The 1-minute load average when the row ended (other engineers' work shares the machine). */
  load?: number;
}

const rows: Row[] = [];
let NODE_VERSION = '24';
{
  const reqs = Array.from({ length: 5_000 + 500 }, request);
  for (let i = 0; i < 500; i++) runFunction(reqs[i] as RunFunctionRequest);
  const lat: number[] = [];
  const t0 = performance.now();
  for (let i = 500; i < reqs.length; i++) {
    const t = performance.now();
    runFunction(reqs[i] as RunFunctionRequest);
    lat.push(performance.now() - t);
  }
  const s = lat.sort((a, b) => a - b);
  rows.push({
    what: 'in process (runFunction)',
    concurrency: 1,
    calls: s.length,
    perSecond: (s.length / (performance.now() - t0)) * 1000,
    p50: pct(s, 50),
    p99: pct(s, 99),
  });
}

const tmp = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-fn-'));
const servers: FunctionProcess[] = [];
try {
  const requestFile = join(tmp, 'request.bin');
  writeFileSync(requestFile, RunFunctionRequest.encode(request()).finish());
  const loadgen = await ensureLoadgen();
  const node = ensureNodeRuntime(log).node;
  NODE_VERSION = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
  const twoCores = spawnSync('taskset', ['-c', '0,1', 'true']).status === 0;
  const floorBundle = (
    await bundle({
      name: 'bench-function-floor',
      entry: join(root, 'bench', 'function', 'floor.ts'),
      selfContained: true,
      replace: replacements(root, deployable('function')),
    })
  ).file;
  const ours = await bundleDeployable(root, deployable('function'));
  const variants: { what: string; bundle: string; runtime: { nodeOptions?: readonly string[]; env?: Readonly<Record<string, string>> } }[] =
    [
      { what: 'floor (empty response), image flags', bundle: floorBundle, runtime: FUNCTION_RUNTIME },
      { what: 'ours, image flags', bundle: ours, runtime: FUNCTION_RUNTIME },
      { what: "ours, Node's defaults", bundle: ours, runtime: {} },
    ];
  for (const t of TRY) {
    const words = t.split(/\s+/).filter(Boolean);
    const env = Object.fromEntries(words.filter((w) => /^[A-Z_]+=/.test(w)).map((w) => w.split(/=(.*)/s).slice(0, 2)));
    const flags = words.filter((w) => !/^[A-Z_]+=/.test(w));
    variants.push({
      what: `ours, image flags + ${words.join(' ')}`,
      bundle: ours,
      runtime: { nodeOptions: [...FUNCTION_RUNTIME.nodeOptions, ...flags], env: { ...FUNCTION_RUNTIME.env, ...env } },
    });
  }
  if (BASELINE) variants.push({ what: `baseline ${BASELINE}, image flags`, bundle: await bundleAt(BASELINE), runtime: FUNCTION_RUNTIME });

  for (const v of variants) {
    log(`${v.what} ...`);
    const fp = await startFunctionProcess(v.bundle, ['--metrics-address', ''], {
      node,
      nodeOptions: v.runtime.nodeOptions,
      cpus: twoCores ? '0' : undefined,
      env: { ...process.env, ...(v.runtime.env ?? {}) },
    });
    servers.push(fp);
    const pid = fp.child.pid as number;
    for (const concurrency of [1, 16]) {
      const cpu0 = cpuSeconds(pid);
      const r = await runLoad(loadgen, {
        address: `127.0.0.1:${fp.port}`,
        requestFile,
        concurrency,
        calls: N,
        warmup: WARMUP,
        cpus: twoCores ? '1' : undefined,
      });
      rows.push({
        what: v.what,
        concurrency,
        calls: r.calls,
        perSecond: (r.calls / r.wallMs) * 1000,
        p50: r.p50Ms,
        p99: r.p99Ms,
        cpuMicros: ((cpuSeconds(pid) - cpu0) / (N + WARMUP)) * 1e6,
        peakRssMiB: memMiB(pid, 'VmHWM'),
        load: Number(readFileSync('/proc/loadavg', 'utf8').split(' ')[0]),
      });
    }
    await fp.stop();
  }
} finally {
  await Promise.all(servers.map((s) => s.stop()));
  rmSync(tmp, { recursive: true, force: true });
}

/** The function of a git ref (node_modules linked from here). */
function bundleAt(ref: string): Promise<string> {
  return bundleAtRevision({ root, rev: ref, deployable: deployable('function'), outDir: tmp });
}

const at16 = (what: string) => rows.find((r) => r.what === what && r.concurrency === 16);
const ours16 = at16('ours, image flags') as Row;
const floor16 = at16('floor (empty response), image flags') as Row;
const baseWhat = `baseline ${BASELINE}, image flags`;
const base16 = BASELINE ? at16(baseWhat) : undefined;
const ours1 = rows.find((r) => r.what === 'ours, image flags' && r.concurrency === 1) as Row;
const base1 = BASELINE ? rows.find((r) => r.what === baseWhat && r.concurrency === 1) : undefined;
const perCore = (r: Row) => (r.cpuMicros ? 1e6 / r.cpuMicros : NaN);

console.log(`RunFunction, a9s-postgresql composite with 20 parameters, ${N} calls per row after ${WARMUP} warm-up`);
console.log(`server: bundled function on Node ${NODE_VERSION} pinned to core 0; client: one Go gRPC connection pinned to core 1\n`);
const W = 44;
console.log(
  `${'what'.padEnd(W)}${'conc.'.padStart(6)}${'calls/s'.padStart(9)}${'p50 ms'.padStart(8)}${'p99 ms'.padStart(8)}${'CPU µs/call'.padStart(12)}${'calls/s/core'.padStart(13)}${'peak RSS MiB'.padStart(13)}${'load'.padStart(6)}`,
);
for (const r of rows)
  console.log(
    `${r.what.padEnd(W)}${String(r.concurrency).padStart(6)}${r.perSecond.toFixed(0).padStart(9)}${r.p50.toFixed(3).padStart(8)}${r.p99.toFixed(3).padStart(8)}${(r.cpuMicros?.toFixed(0) ?? '').padStart(12)}${(r.cpuMicros ? perCore(r).toFixed(0) : '').padStart(13)}${(r.peakRssMiB?.toFixed(1) ?? '').padStart(13)}${(r.load?.toFixed(1) ?? '').padStart(6)}`,
  );
console.log(
  `${`${ANCHOR.what}, issue 24`.padEnd(W)}${'16'.padStart(6)}${String(ANCHOR.perSecond16).padStart(9)}${''.padStart(41)}${String(ANCHOR.rssMiB).padStart(13)}`,
);

const wantPerSecond = GOAL.timesAnchor * ANCHOR.perSecond16;
const goals = [
  {
    goal: `calls/s at 16 in flight ≥ ${GOAL.timesAnchor}× the anchor (${wantPerSecond}/s on one core)`,
    value: `${ours16.perSecond.toFixed(0)}/s measured, ${perCore(ours16).toFixed(0)}/s per core of CPU (${(perCore(ours16) / ANCHOR.perSecond16).toFixed(1)}× the anchor)`,
    met: Math.max(ours16.perSecond, perCore(ours16)) >= wantPerSecond,
  },
  {
    goal: `peak RSS at 16 in flight ≤ ${GOAL.rssMiB} MiB`,
    value: `${ours16.peakRssMiB?.toFixed(1)} MiB (${((ours16.peakRssMiB ?? 0) / ANCHOR.rssMiB).toFixed(2)}× the anchor)`,
    met: (ours16.peakRssMiB ?? Infinity) <= GOAL.rssMiB,
  },
  ...(base16 && base1
    ? [
        {
          goal: 'p99 at 1 and 16 in flight no worse than the baseline',
          value: `${ours1.p99.toFixed(2)} / ${ours16.p99.toFixed(2)} ms vs ${base1.p99.toFixed(2)} / ${base16.p99.toFixed(2)} ms; CPU per call ${(ours16.cpuMicros! / base16.cpuMicros!).toFixed(2)}× the baseline's, peak RSS ${((ours16.peakRssMiB ?? 0) - (base16.peakRssMiB ?? 0)).toFixed(1)} MiB beside it`,
          met: ours1.p99 <= base1.p99 && ours16.p99 <= base16.p99,
        },
      ]
    : []),
];
console.log(
  `\nours / floor at 16 in flight: ${(ours16.perSecond / floor16.perSecond).toFixed(2)} of the floor's calls/s, ${(ours16.cpuMicros! - floor16.cpuMicros!).toFixed(0)} µs of CPU per call above it`,
);
for (const g of goals) console.log(`goal: ${g.goal} — ${g.met ? 'met' : 'NOT met'} (${g.value})`);
// Issue 24's third goal has nothing to compare with unless a baseline ran: said, not silently left out.
if (!base16)
  console.log('goal: p99 at 1 and 16 in flight no worse than before — not judged (set BENCH_BASELINE=<git ref> to run the before)');
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'function.json'),
  `${JSON.stringify({ date: new Date().toISOString(), calls: N, warmup: WARMUP, parameters: 20, baseline: BASELINE ?? null, runtime: FUNCTION_RUNTIME, anchor: ANCHOR, rows, goals }, null, 2)}\n`,
);
