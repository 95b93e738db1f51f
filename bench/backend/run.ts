/**
 * bench/backend: complete bind flows (a new identity each: /authorize → OpenID provider login → /callback →
 * /resources → /bind → BindingResponse at the loopback callback, with the consumer's namespace, RBAC, ClusterBinding
 * and TokenRequest kubeconfig made on the way) on control planes of its own, with the real OpenID provider and the
 * bundled backend in its process.
 *
 * Rows: baselines measured in the same run — `GET /export` (the backend's floor) and a login at the provider alone
 * (openid-client's code flow, no backend: the part of every bind the backend does not control) — then flows one at a
 * time (BENCH_FLOWS, default 20) and 50 at once, with flows/s, p50 and p99, and the backend's resident memory after
 * each. Goals: p99 ≤ 1 s at 50 concurrent consumers, and ≤ 35 ms of CPU per flow across the backend, the OpenID
 * provider and the API server (with etcd and the controller-manager).
 *
 * At 50 at once it also counts the API requests a flow makes: kube-apiserver's own `apiserver_request_total`, read
 * before the flows and again once the controllers' reactions have settled (the background rate of five idle seconds
 * subtracted), so everything the flows cause is counted — the backend's requests, its controllers' and the
 * controller-manager's — and printed per flow beside the CPU, with the kinds of request behind it. The CPU window
 * ends at the same point, and the idle CPU rate measured just before (with this bench's own reads of /metrics, a
 * profiled 6 % of the API server's busy time in the window) is subtracted as the requests' is.
 *
 * `BENCH_BASELINE=<git revision>` also runs that revision's backend (its bundle built from `git archive`) on the same
 * control plane, alternating with this tree's for `BENCH_ROUNDS` rounds (default 2) of 50 at once, each backend
 * alone while it is measured: a before/after on a machine whose load changes under the run. `BENCH_BASELINE_KEEP`
 * (comma-separated paths) takes those files from this tree into the baseline, to compare one change with another held
 * equal (e.g. `controller/clients.ts`, the keep-alive fix without which the baseline's binds fail at 50 at once).
 * `BENCH_PROFILE=<dir>` has the main rows' backend write a V8 CPU profile into `<dir>` (open it in Chrome's DevTools).
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { deployable } from '../../synth/deployables';
import { startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { bindFlow, browserFor } from '../../harness/parts/bind-flow';
import { parseYaml } from '../../harness/crossplane/catalog';
import { startControlPlanes, type ClusterInfo } from '../../harness/cluster/control-plane';
import { ensureKubeBinary } from '../../harness/tools/kube';
import { cpuSeconds, memMiB as rssMiB, percentile as pct } from '../measure';
import { bundleAtRevision } from '../revision';
import { sleep } from '../../lib/abort';
const cpuMs = (pid: number) => cpuSeconds(pid) * 1000;

const root = process.cwd();
const sequential = Number(process.env.BENCH_FLOWS ?? 20);
const CONCURRENT = 50;
const GOAL_P99_MS = 1000;
const GOAL_CPU_MS = 35;
const baselineRev = process.env.BENCH_BASELINE;
const rounds = Number(process.env.BENCH_ROUNDS ?? 2);
const baselineKeep = (process.env.BENCH_BASELINE_KEEP ?? '').split(',').filter(Boolean);
/** `BENCH_PROFILE=<dir>`: the backend of the main rows writes a V8 CPU profile there when it stops. */
const profileDir = process.env.BENCH_PROFILE;

const timed = async (f: () => Promise<unknown>) => {
  const t = performance.now();
  await f();
  return performance.now() - t;
};

interface Row {
  readonly what: string;
  readonly n: number;
  readonly perSecond: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly rssMiB?: number;
  /** CPU used per flow by the backend, the OpenID provider, and the API server with etcd: independent of other load. */
  readonly cpuMsPerFlow?: CpuPerFlow;
  /** API requests per flow, as kube-apiserver counted them. */
  readonly requestsPerFlow?: number;
  /** The idle CPU rate subtracted from the window, in ms per second. */
  readonly idleCpuMsPerS?: CpuPerFlow;
}

/** CPU milliseconds of the backend, the OpenID provider, and the control plane (API server, etcd, controller-manager). */
interface CpuPerFlow {
  readonly backend: number;
  readonly provider: number;
  readonly apiServer: number;
}

/** kube-apiserver's `apiserver_request_total` by `<verb> <resource>[/<subresource>]` (resource requests only). */
async function apiRequests(cluster: ClusterInfo, dispatcher: Agent): Promise<Map<string, number>> {
  const r = await undiciFetch(`${cluster.server}/metrics`, { headers: { authorization: `Bearer ${cluster.tokens.admin}` }, dispatcher });
  if (r.status !== 200) throw new Error(`GET ${cluster.server}/metrics: ${r.status}`);
  const out = new Map<string, number>();
  for (const line of (await r.text()).split('\n')) {
    if (!line.startsWith('apiserver_request_total{')) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!labels.resource) continue; // /metrics, /healthz, ... (our own scrapes among them)
    const kind = `${labels.verb} ${labels.resource}${labels.subresource ? `/${labels.subresource}` : ''}`;
    out.set(kind, (out.get(kind) ?? 0) + Number(line.slice(line.lastIndexOf(' ') + 1)));
  }
  return out;
}
const total = (m: Map<string, number>) => [...m.values()].reduce((a, b) => a + b, 0);
const minus = (a: Map<string, number>, b: Map<string, number>) =>
  new Map([...a].map(([k, v]) => [k, v - (b.get(k) ?? 0)] as const).filter(([, v]) => v > 0));

// The claim APIs from `npm run synth` (the catalog is loaded by synth's own entry, not by this bundle).
const out = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-backend-'));
const synth = spawnSync(process.execPath, [join(root, 'scripts', 'synth.mjs'), '--out', out, '--quiet'], { cwd: root, encoding: 'utf8' });
if (synth.status !== 0) {
  rmSync(out, { recursive: true, force: true });
  throw new Error(`npm run synth failed: ${synth.stderr}`);
}
const synthOutput = new Map<string, Record<string, unknown>[]>();
for (const f of readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml'))) {
  synthOutput.set(f, parseYaml(readFileSync(join(out, f), 'utf8')));
}

const cp = await startControlPlanes({ clusters: ['bench'], binary: await ensureKubeBinary(), log: () => undefined });
const s = await startBackendSuite(cp.clusters.bench!, {
  users: 2 * sequential + CONCURRENT + 5,
  synthOutput,
  ...(profileDir ? { backend: { nodeArgs: ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] } } : {}),
});
const rows: Row[] = [];
const comparison: Row[] = [];
let lastKinds = new Map<string, number>();
const metricsAgent = new Agent({ connect: { ca: cp.clusters.bench!.ca } });
const flowOf = (suite: BackendSuite) => (user: string) =>
  bindFlow({
    backend: suite.backend,
    idp: suite.idp,
    callback: suite.callback,
    user,
    resource: 'postgresqlinstances',
    group: 'anynines.com',
  });

/** A figure for each of the three, computed alike. */
const eachCpu = (f: (k: keyof CpuPerFlow) => number): CpuPerFlow => ({
  backend: f('backend'),
  provider: f('provider'),
  apiServer: f('apiServer'),
});

/** CPU milliseconds used so far. */
const cpuOf = (suite: BackendSuite): CpuPerFlow => ({
  backend: cpuMs(suite.backend.proc.pid),
  provider: cpuMs(suite.idp.proc.pid),
  apiServer: cp.pids.reduce((sum, p) => sum + cpuMs(p), 0),
});

/**
 * What the processes do with no flows running (leases, the controller-manager, the backend's renewals, and this
 * bench's own reads of /metrics, one a second as `settle` makes them): requests and CPU milliseconds per second.
 */
async function background(suite: BackendSuite): Promise<{ requests: number; cpu: CpuPerFlow }> {
  const a = total(await apiRequests(cp.clusters.bench!, metricsAgent));
  const c = cpuOf(suite);
  const t = performance.now();
  for (let i = 0; i < 5; i++) {
    await sleep(1000);
    await apiRequests(cp.clusters.bench!, metricsAgent);
  }
  const s = (performance.now() - t) / 1000;
  const c2 = cpuOf(suite);
  return {
    requests: (total(await apiRequests(cp.clusters.bench!, metricsAgent)) - a) / s,
    cpu: eachCpu((k) => (c2[k] - c[k]) / s),
  };
}

/** Waits until the flows' consequences have settled: no more than the background in a second (at most 20 s). */
async function settle(rate: number): Promise<void> {
  let last = total(await apiRequests(cp.clusters.bench!, metricsAgent));
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    await sleep(1000);
    const now = total(await apiRequests(cp.clusters.bench!, metricsAgent));
    if (now - last <= rate + 2) return;
    last = now;
  }
}

/** CONCURRENT flows at once on `suite`: latency, CPU and API requests per flow (until the controllers settled). */
async function atOnce(suite: BackendSuite, what: string): Promise<{ row: Row; kinds: Map<string, number> }> {
  const users = Array.from({ length: CONCURRENT }, () => suite.user());
  // What the suite's start and warm-up caused settles first, or it would count as background.
  await settle(2);
  const idle = await background(suite);
  const rate = idle.requests;
  const before = cpuOf(suite);
  const requestsBefore = await apiRequests(cp.clusters.bench!, metricsAgent);
  const t = performance.now();
  const samples = await Promise.all(users.map((u) => timed(() => flowOf(suite)(u))));
  const wallMs = performance.now() - t;
  await settle(rate);
  const windowMs = performance.now() - t;
  const after = cpuOf(suite);
  const kinds = minus(await apiRequests(cp.clusters.bench!, metricsAgent), requestsBefore);
  // The idle rate is subtracted as the requests' is: what is left is what the flows caused.
  const per = (k: keyof CpuPerFlow) => Math.round((after[k] - before[k] - (idle.cpu[k] * windowMs) / 1000) / CONCURRENT);
  const requests = (total(kinds) - (rate * windowMs) / 1000) / CONCURRENT;
  return {
    row: {
      ...row(what, samples, wallMs, rssMiB(suite.backend.proc.pid)),
      cpuMsPerFlow: eachCpu(per),
      requestsPerFlow: Math.round(requests * 10) / 10,
      idleCpuMsPerS: eachCpu((k) => Math.round(idle.cpu[k])),
    },
    kinds,
  };
}

/** The OpenID provider, callback server and backend of a suite end; its namespaces stay until the cluster goes. */
async function stopProcesses(suite: BackendSuite): Promise<void> {
  await suite.backend.stop();
  await suite.idp.stop();
  await suite.callback.close().catch(() => undefined);
}

const row = (what: string, samples: number[], wallMs: number, rss?: number): Row => ({
  what,
  n: samples.length,
  perSecond: (samples.length / wallMs) * 1000,
  p50Ms: pct(samples, 50),
  p99Ms: pct(samples, 99),
  ...(rss !== undefined ? { rssMiB: rss } : {}),
});
try {
  const flow = flowOf(s);
  await flow(s.user()); // warm-up: first connections, caches

  // Baselines.
  const exportSamples: number[] = [];
  let t = performance.now();
  for (let i = 0; i < 200; i++) exportSamples.push(await timed(() => fetch(`${s.backend.url}/export`).then((r) => r.text())));
  rows.push(row('baseline: GET /export', exportSamples, performance.now() - t));
  const dispatcher = new Agent({ connect: { ca: s.idp.ca } });
  const customFetch = (url: string, init: RequestInit) =>
    undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
  const config = await oidc.discovery(new URL(s.idp.issuer), 'klutch-bind', 'klutch-bind-test-secret', undefined, {
    [oidc.customFetch]: customFetch,
  });
  config[oidc.customFetch] = customFetch;
  const loginSamples: number[] = [];
  t = performance.now();
  for (let i = 0; i < sequential; i++) {
    loginSamples.push(
      await timed(async () => {
        const verifier = oidc.randomPKCECodeVerifier();
        const url = oidc.buildAuthorizationUrl(config, {
          redirect_uri: `${s.backend.url}/callback`,
          scope: 'openid profile email',
          code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
          code_challenge_method: 'S256',
        });
        const b = await browserFor(s.idp, s.user());
        const page = await b.get(url.href, { stopAt: (u) => u.pathname === '/callback' });
        await oidc.authorizationCodeGrant(config, new URL(page.url), { pkceCodeVerifier: verifier, idTokenExpected: true });
      }),
    );
  }
  rows.push(row('baseline: login at the provider alone', loginSamples, performance.now() - t));

  // One at a time, then fifty at once; each flow its own identity (a first bind: everything is made).
  const seq: number[] = [];
  t = performance.now();
  for (let i = 0; i < sequential; i++) {
    const user = s.user();
    seq.push(await timed(() => flow(user)));
  }
  rows.push(row('bind flows, 1 at a time', seq, performance.now() - t, rssMiB(s.backend.proc.pid)));
  const main = await atOnce(s, 'bind flows, 50 at once');
  rows.push(main.row);
  lastKinds = main.kinds;
  await stopProcesses(s);

  // Before/after: the baseline revision's backend and this tree's, alternating, each alone on the control plane.
  if (baselineRev) {
    const before = await bundleAtRevision({ root, rev: baselineRev, deployable: deployable('backend'), keep: baselineKeep, outDir: out });
    for (let i = 1; i <= rounds; i++) {
      for (const v of [
        { label: `before (${baselineRev}${baselineKeep.length ? ` + ${baselineKeep.join(', ')}` : ''})`, bundle: before },
        { label: 'this tree', bundle: undefined },
      ]) {
        const vs = await startBackendSuite(cp.clusters.bench!, {
          users: CONCURRENT + 1,
          synthOutput,
          ...(v.bundle ? { backend: { bundle: v.bundle } } : {}),
        });
        try {
          await flowOf(vs)(vs.user());
          comparison.push({ ...(await atOnce(vs, `${v.label}, round ${i}`)).row });
        } finally {
          await stopProcesses(vs);
        }
      }
    }
  }
} finally {
  // The cluster goes as a whole: deleting the consumers' namespaces first would only load it for nothing.
  await stopProcesses(s);
  await cp.stop();
  rmSync(out, { recursive: true, force: true });
}

const last = rows.at(-1)!;
const cpuSum = (c: CpuPerFlow) => c.backend + c.provider + c.apiServer;
const met = last.p99Ms <= GOAL_P99_MS;
const cpuMet = cpuSum(last.cpuMsPerFlow!) <= GOAL_CPU_MS;
const table = (list: readonly Row[]) => {
  console.log(
    `\n${'what'.padEnd(56)} ${'n'.padStart(4)} ${'per s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'RSS MiB'.padStart(8)} ${'CPU ms/flow: backend+OIDC+API=sum'.padStart(34)} ${'API req/flow'.padStart(12)}`,
  );
  for (const r of list) {
    const c = r.cpuMsPerFlow;
    console.log(
      `${r.what.padEnd(56)} ${String(r.n).padStart(4)} ${r.perSecond.toFixed(1).padStart(7)} ${r.p50Ms.toFixed(0).padStart(8)} ${r.p99Ms.toFixed(0).padStart(8)} ${(r.rssMiB?.toFixed(0) ?? '').padStart(8)} ${(c ? `${c.backend}+${c.provider}+${c.apiServer}=${cpuSum(c)}` : '').padStart(34)} ${(r.requestsPerFlow?.toFixed(1) ?? '').padStart(12)}`,
    );
  }
};
table(rows);
const idleRates = last.idleCpuMsPerS!;
console.log(
  `(CPU per flow: the window's CPU less the idle rate measured just before — backend ${idleRates.backend}, OIDC ${idleRates.provider}, API server ${idleRates.apiServer} ms/s, the last with this bench's reads of /metrics)`,
);
console.log(`\nAPI requests per flow at ${CONCURRENT} at once, by kind (kube-apiserver's count, background included):`);
for (const [k, v] of [...lastKinds].sort((a, b) => b[1] - a[1])) {
  if (v / CONCURRENT >= 0.1) console.log(`  ${(v / CONCURRENT).toFixed(1).padStart(5)}  ${k}`);
}
if (comparison.length) {
  console.log(`\nbefore/after, alternating rounds of ${CONCURRENT} at once on the same control plane:`);
  table(comparison);
  // Medians: one round disturbed by the machine's other work should not move the ratio.
  const median = (label: string, f: (r: Row) => number) => pct(comparison.filter((r) => r.what.startsWith(label)).map(f), 50);
  const ratio = (f: (r: Row) => number) => median('this tree', f) / median('before', f);
  console.log(
    `after/before (medians of the rounds): CPU per flow ${ratio((r) => cpuSum(r.cpuMsPerFlow!)).toFixed(2)} (backend ${ratio((r) => r.cpuMsPerFlow!.backend).toFixed(2)}, OIDC ${ratio((r) => r.cpuMsPerFlow!.provider).toFixed(2)}, API server ${ratio((r) => r.cpuMsPerFlow!.apiServer).toFixed(2)}), API requests per flow ${ratio((r) => r.requestsPerFlow!).toFixed(2)}, p99 ${ratio((r) => r.p99Ms).toFixed(2)}`,
  );
}
console.log(`goal: p99 ≤ ${GOAL_P99_MS} ms at ${CONCURRENT} concurrent consumers: ${met ? 'met' : 'MISSED'} (${last.p99Ms.toFixed(0)} ms)`);
console.log(`goal: CPU ≤ ${GOAL_CPU_MS} ms per flow in all: ${cpuMet ? 'met' : 'MISSED'} (${cpuSum(last.cpuMsPerFlow!)} ms)`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'backend.json'),
  `${JSON.stringify(
    {
      date: new Date().toISOString(),
      rows,
      requestsPerFlowByKind: Object.fromEntries([...lastKinds].map(([k, v]) => [k, v / CONCURRENT])),
      ...(comparison.length ? { baseline: baselineRev, baselineKeep, comparison } : {}),
      goal: { p99MsAt50: GOAL_P99_MS, met, cpuMsPerFlow: GOAL_CPU_MS, cpuMet },
    },
    null,
    2,
  )}\n`,
);
console.log('wrote bench/results/backend.json');
