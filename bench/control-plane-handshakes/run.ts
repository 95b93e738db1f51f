/**
 * bench/control-plane-handshakes: what a harness cluster's processes cost to start, to sit idle, and per client
 * connection, in CPU-seconds of each process (`/proc/<pid>/stat`, user + system):
 *
 *   start     launch to ready (etcd, kube-apiserver, kube-controller-manager: startControlPlanes)
 *   idle      BENCH_IDLE_S (default 30), reported per minute
 *   new       BENCH_N (default 400) GET /version, each on a new TLS connection (full handshake, no session reuse)
 *   kept      BENCH_N GET /version on one kept connection
 *
 * The difference of `new` and `kept` per request is the API server's CPU for one TLS handshake: the cost a client
 * that makes a new connection per request puts on it. BENCH_RUNS (default 3) repeats the whole; each cell is the
 * median. BENCH_VARIANTS (comma-separated, default `harness`) runs the same for flags or environment on top of the
 * harness's own (control-plane.ts `tuning`), to see what a start or an idle minute costs with them.
 * Writes bench/results/control-plane-handshakes.json.
 */
import https from 'node:https';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { type ClusterInfo, startControlPlanes, type Tuning } from '../../harness/cluster/control-plane';
import { ensureKubeBinary } from '../../harness/tools/kube';
import { sleep } from '../../lib/abort';
import { cpuSeconds, memMiB, percentile } from '../measure';

const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 30);
const N = Number(process.env.BENCH_N ?? 400);
const RUNS = Number(process.env.BENCH_RUNS ?? 3);
const ROLES = ['etcd', 'kube-apiserver', 'kube-controller-manager'] as const;
type Role = (typeof ROLES)[number];

/** Flags and environment tried on top of the harness's own. */
const VARIANTS: Record<string, Tuning> = {
  harness: {},
  'apiserver-gogc-400': { 'kube-apiserver': { env: { GOGC: '400' } } },
  // Go collects only when the heap nears the limit: a short-lived API server never does.
  'apiserver-memlimit-600': { 'kube-apiserver': { env: { GOGC: 'off', GOMEMLIMIT: '600MiB' } } },
  'watch-cache-off': { 'kube-apiserver': { args: ['--watch-cache=false'] } },
};
const chosen = (process.env.BENCH_VARIANTS ?? 'harness').split(',').map((v) => v.trim());
for (const v of chosen)
  if (!VARIANTS[v]) throw new Error(`BENCH_VARIANTS: no variant "${v}"; choose from ${Object.keys(VARIANTS).join(', ')}`);

/** The role of each of a run's processes, from its command line (the multi-call binary's first argument). */
function roles(pids: readonly number[]): Map<Role, number> {
  const m = new Map<Role, number>();
  for (const pid of pids) {
    const role = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] as Role;
    if (ROLES.includes(role)) m.set(role, pid);
  }
  return m;
}

function get(c: ClusterInfo, agent: https.Agent | false): Promise<void> {
  return new Promise((resolve, reject) => {
    const req = https.get(`${c.server}/version`, { ca: c.ca, agent, headers: { Authorization: `Bearer ${c.tokens.admin}` } }, (res) => {
      res.resume();
      res.on('end', () => (res.statusCode === 200 ? resolve() : reject(new Error(`GET /version: ${res.statusCode}`))));
    });
    req.on('error', reject);
  });
}

type Row = Record<string, Record<Role, number>>;
const binary = await ensureKubeBinary();
const results: Record<string, { rows: Row[]; median: Row }> = {};
for (const variant of chosen) {
  const rows: Row[] = [];
  for (let run = 0; run < RUNS; run++) {
    const row: Row = {};
    const t0 = Date.now();
    const cp = await startControlPlanes({ clusters: ['hs'], binary, tuning: VARIANTS[variant], log: () => undefined });
    try {
      const pids = roles(cp.pids);
      const cpu = () => Object.fromEntries(ROLES.map((r) => [r, cpuSeconds(pids.get(r)!)])) as Record<Role, number>;
      const phase = async (name: string, f: () => Promise<void>, scale = 1) => {
        const before = cpu();
        await f();
        const after = cpu();
        row[name] = Object.fromEntries(ROLES.map((r) => [r, (after[r] - before[r]) * scale])) as Record<Role, number>;
      };
      row.start = cpu();
      row['start s'] = { etcd: 0, 'kube-apiserver': (Date.now() - t0) / 1000, 'kube-controller-manager': 0 };
      await phase('idle /min', () => sleep(IDLE_S * 1000), 60 / IDLE_S);
      const c = cp.clusters.hs!;
      // agent:false: a socket of its own per request, and no session to resume: every request a full handshake.
      await phase('new x N', async () => {
        for (let i = 0; i < N; i++) await get(c, false);
      });
      const kept = new https.Agent({ keepAlive: true, maxSockets: 1 });
      await phase('kept x N', async () => {
        for (let i = 0; i < N; i++) await get(c, kept);
      });
      kept.destroy();
      row['handshake ms'] = Object.fromEntries(
        ROLES.map((r) => [r, N ? ((row['new x N']![r] - row['kept x N']![r]) / N) * 1000 : 0]),
      ) as Record<Role, number>;
      row['RSS MiB'] = Object.fromEntries(ROLES.map((r) => [r, memMiB(pids.get(r)!)])) as Record<Role, number>;
    } finally {
      await cp.stop();
    }
    rows.push(row);
    console.log(`${variant} run ${run + 1}/${RUNS}: ${JSON.stringify(row)}`);
  }
  const median: Row = {};
  for (const name of Object.keys(rows[0]!))
    median[name] = Object.fromEntries(
      ROLES.map((r) => [
        r,
        percentile(
          rows.map((x) => x[name]![r]),
          50,
        ),
      ]),
    ) as Record<Role, number>;
  results[variant] = { rows, median };
}
console.log(`\nmedian of ${RUNS} (N=${N}, idle ${IDLE_S}s), CPU-s per process (handshake: ms of CPU per new connection)`);
console.log(`| variant | phase | ${ROLES.join(' | ')} |\n|---|---|---|---|---|`);
for (const [variant, { median }] of Object.entries(results))
  for (const [name, v] of Object.entries(median))
    console.log(`| ${variant} | ${name} | ${ROLES.map((r) => v[r].toFixed(3)).join(' | ')} |`);
mkdirSync(join('bench', 'results'), { recursive: true });
writeFileSync(join('bench', 'results', 'control-plane-handshakes.json'), JSON.stringify({ N, IDLE_S, RUNS, results }, null, 2));
