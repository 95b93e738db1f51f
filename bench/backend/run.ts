/**
 * bench/backend: complete bind flows (a new identity each: /authorize → OpenID provider login → /callback →
 * /resources → /bind → BindingResponse at the loopback callback, with the consumer's namespace, RBAC, ClusterBinding
 * and TokenRequest kubeconfig made on the way) on control planes of its own, with the real OpenID provider and the
 * bundled backend in its process.
 *
 * Rows: baselines measured in the same run — `GET /export` (the backend's floor) and a login at the provider alone
 * (openid-client's code flow, no backend: the part of every bind the backend does not control) — then flows one at a
 * time (BENCH_FLOWS, default 20) and 50 at once, with flows/s, p50 and p99, and the backend's resident memory after
 * each. Goal: p99 ≤ 1 s at 50 concurrent consumers.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as oidc from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { startBackendSuite } from '../../test/support/backend-suite';
import { bindFlow, browserFor } from '../../test/support/bind-flow';
import { parseYaml } from '../../test/support/catalog';
import { startControlPlanes } from '../../test/support/control-plane';
import { ensureKubeBinary } from '../../test/tools/kube';
import { cpuSeconds, memMiB as rssMiB, percentile as pct } from '../measure';
const cpuMs = (pid: number) => cpuSeconds(pid) * 1000;

const root = process.cwd();
const sequential = Number(process.env.BENCH_FLOWS ?? 20);
const CONCURRENT = 50;
const GOAL_P99_MS = 1000;

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
  readonly cpuMsPerFlow?: { readonly backend: number; readonly provider: number; readonly apiServer: number };
}

// The claim APIs from `npm run synth` (the catalog is loaded by synth's own entry, not by this bundle).
const out = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-backend-'));
const synth = spawnSync(process.execPath, [join(root, 'scripts', 'synth.mjs'), '--out', out, '--quiet'], { cwd: root, encoding: 'utf8' });
if (synth.status !== 0) throw new Error(`npm run synth failed: ${synth.stderr}`);
const synthOutput = new Map<string, Record<string, unknown>[]>();
for (const f of readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml'))) {
  synthOutput.set(f, parseYaml(readFileSync(join(out, f), 'utf8')));
}

const cp = await startControlPlanes({ clusters: ['bench'], binary: await ensureKubeBinary(), log: () => undefined });
const s = await startBackendSuite(cp.clusters.bench!, { users: 2 * sequential + CONCURRENT + 5, synthOutput });
const rows: Row[] = [];
const row = (what: string, samples: number[], wallMs: number, rss?: number): Row => ({
  what,
  n: samples.length,
  perSecond: (samples.length / wallMs) * 1000,
  p50Ms: pct(samples, 50),
  p99Ms: pct(samples, 99),
  ...(rss !== undefined ? { rssMiB: rss } : {}),
});
try {
  const flow = (user: string) =>
    bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user, resource: 'postgresqlinstances', group: 'anynines.com' });
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
  const users = Array.from({ length: CONCURRENT }, () => s.user());
  const cpu = () => ({
    backend: cpuMs(s.backend.proc.pid),
    provider: cpuMs(s.idp.proc.pid),
    apiServer: cp.pids.reduce((sum, p) => sum + cpuMs(p), 0),
  });
  const before = cpu();
  t = performance.now();
  const conc = await Promise.all(users.map((u) => timed(() => flow(u))));
  const after = cpu();
  const per = (k: keyof typeof before) => Math.round((after[k] - before[k]) / CONCURRENT);
  rows.push({
    ...row(`bind flows, ${CONCURRENT} at once`, conc, performance.now() - t, rssMiB(s.backend.proc.pid)),
    cpuMsPerFlow: { backend: per('backend'), provider: per('provider'), apiServer: per('apiServer') },
  });
} finally {
  await s.stop();
  await cp.stop();
  rmSync(out, { recursive: true, force: true });
}

const last = rows.at(-1)!;
const met = last.p99Ms <= GOAL_P99_MS;
console.log(
  `\n${'what'.padEnd(40)} ${'n'.padStart(4)} ${'per s'.padStart(7)} ${'p50 ms'.padStart(8)} ${'p99 ms'.padStart(8)} ${'RSS MiB'.padStart(8)}`,
);
for (const r of rows) {
  console.log(
    `${r.what.padEnd(40)} ${String(r.n).padStart(4)} ${r.perSecond.toFixed(1).padStart(7)} ${r.p50Ms.toFixed(0).padStart(8)} ${r.p99Ms.toFixed(0).padStart(8)} ${(r.rssMiB?.toFixed(0) ?? '').padStart(8)}`,
  );
}
const c = last.cpuMsPerFlow!;
console.log(
  `CPU per flow at ${CONCURRENT} at once: backend ${c.backend} ms, OpenID provider ${c.provider} ms, API server + etcd + controllers ${c.apiServer} ms`,
);
console.log(`goal: p99 ≤ ${GOAL_P99_MS} ms at ${CONCURRENT} concurrent consumers: ${met ? 'met' : 'MISSED'} (${last.p99Ms.toFixed(0)} ms)`);
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'backend.json'),
  `${JSON.stringify({ date: new Date().toISOString(), rows, goal: { p99MsAt50: GOAL_P99_MS, met } }, null, 2)}\n`,
);
console.log('wrote bench/results/backend.json');
