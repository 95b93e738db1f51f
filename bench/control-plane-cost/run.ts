/**
 * bench/control-plane-cost: what one harness cluster (etcd, kube-apiserver, kube-controller-manager, as
 * harness/cluster/control-plane.ts starts it) costs in CPU-seconds, per process, in fixed phases:
 *
 *   start      from launch to ready
 *   idle       BENCH_IDLE_S (default 60) with nothing installed
 *   install 1  the CRDs of the claim suite (every synthesized XRD and Klutch's, as Crossplane makes them:
 *              test/cluster/claims.test.ts) applied until Established, then BENCH_SETTLE_S (default 20): the
 *              API server's OpenAPI and discovery work after a CRD change goes on after Established
 *   idle+CRDs  BENCH_IDLE_S with them installed (what a slot cluster that ran the claim or backend suites costs)
 *   delete 1   every CRD deleted until gone, then BENCH_SETTLE_S
 *   install 2, delete 2  the same again
 *
 * Each variant is the harness's flags plus the variant's (control-plane.ts `tuning`); BENCH_VARIANTS picks them
 * (comma-separated names, default all), BENCH_RUNS repeats each (default 1; the median of each cell is printed).
 * CPU from /proc/<pid>/stat (user + system). Writes bench/results/control-plane-cost.json.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseYaml, runSynth } from '../../harness/crossplane/catalog';
import { startControlPlanes, type Tuning } from '../../harness/cluster/control-plane';
import { kubeFor, type Kube } from '../../harness/cluster/kube';
import { crdsForXrd, isEstablished, type Crd, type XrdObject } from '../../lib/xcrd';
import { klutchXrds } from '../../test/parity/klutch';
import { ensureKubeBinary } from '../../harness/tools/kube';
import { sleep } from '../../lib/abort';
import { cpuSeconds, memMiB } from '../measure';

const root = process.cwd();
const IDLE_S = Number(process.env.BENCH_IDLE_S ?? 60);
const SETTLE_S = Number(process.env.BENCH_SETTLE_S ?? 20);
const RUNS = Number(process.env.BENCH_RUNS ?? 1);

/** Flags tried on top of the harness's own. */
const VARIANTS: Record<string, Tuning> = {
  harness: {},
  'apiserver-identity-off': { 'kube-apiserver': { args: ['--feature-gates=APIServerIdentity=false'] } },
  'cache-inconsistency-off': { 'kube-apiserver': { args: ['--feature-gates=DetectCacheInconsistency=false'] } },
  'watch-cache-off': { 'kube-apiserver': { args: ['--watch-cache=false'] } },
  // The harness's API servers run with GOGC=200 (control-plane.ts); this is what they cost without it.
  'apiserver-gogc-100': { 'kube-apiserver': { env: { GOGC: '100' } } },
  'gogc-400': {
    etcd: { env: { GOGC: '400' } },
    'kube-apiserver': { env: { GOGC: '400' } },
    'kube-controller-manager': { env: { GOGC: '400' } },
  },
};
const chosen = (process.env.BENCH_VARIANTS ?? Object.keys(VARIANTS).join(',')).split(',').map((v) => v.trim());
for (const v of chosen)
  if (!VARIANTS[v]) throw new Error(`BENCH_VARIANTS: no variant "${v}"; choose from ${Object.keys(VARIANTS).join(', ')}`);
const extra = process.env.BENCH_EXTRA_APISERVER_ARGS;
if (extra) VARIANTS.extra = { 'kube-apiserver': { args: extra.split(' ').filter(Boolean) } };
if (extra && !chosen.includes('extra')) chosen.push('extra');

// The claim suite's CRDs: ours and Klutch's (under a group of their own), composite and claim of each.
const dist = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-cp-'));
const synth = runSynth(['--quiet', '--out', dist]);
if (synth.status !== 0) throw new Error(`npm run synth failed:\n${synth.stderr}`);
const apisDir = join(dist, 'packages', 'dataservices', 'apis');
const xrds: XrdObject[] = readdirSync(apisDir).map(
  (a) => parseYaml(readFileSync(join(apisDir, a, 'definition.yaml'), 'utf8'))[0] as unknown as XrdObject,
);
rmSync(dist, { recursive: true, force: true });
for (const { xrd } of klutchXrds().values()) {
  const copy = structuredClone(xrd);
  copy.spec.group = 'klutch-v1-5-0.parity.test';
  copy.metadata.name = `${copy.spec.names.plural}.${copy.spec.group}`;
  xrds.push(copy);
}
const crds: Crd[] = xrds.flatMap((x) => crdsForXrd(x));
const CRDS = '/apis/apiextensions.k8s.io/v1/customresourcedefinitions';

/** Waits `s` seconds (the phases are in seconds). */
const wait = (s: number) => sleep(s * 1000);
async function until(what: string, done: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + 120_000;
  while (!(await done())) {
    if (Date.now() > deadline) throw new Error(`${what}: not within 120 s`);
    await wait(0.1);
  }
}
async function install(kube: Kube): Promise<void> {
  for (const crd of crds) {
    const r = await kube.request('POST', CRDS, crd);
    if (r.code >= 300) throw new Error(`CRD ${crd.metadata.name}: ${r.code} ${JSON.stringify(r.body.message)}`);
  }
  for (const crd of crds)
    await until(`CRD ${crd.metadata.name} Established`, async () =>
      isEstablished((await kube.request('GET', `${CRDS}/${crd.metadata.name}`)).body.status as never),
    );
  // Served, as a suite would use them; a CRD whose instances' storage still initialises cannot be deleted at once
  // (its finalizer backs off on "storage is (re)initializing").
  for (const crd of crds) {
    const path = `/apis/${crd.spec.group}/${crd.spec.versions[0]!.name}/${crd.spec.names.plural}`;
    await until(`${path} served`, async () => (await kube.request('GET', path)).code === 200);
  }
}
async function remove(kube: Kube): Promise<void> {
  for (const crd of crds) {
    const r = await kube.request('DELETE', `${CRDS}/${crd.metadata.name}`);
    if (r.code >= 300) throw new Error(`CRD ${crd.metadata.name}: delete: ${r.code} ${JSON.stringify(r.body.message)}`);
  }
  for (const crd of crds) {
    let last: unknown;
    await until(`CRD ${crd.metadata.name} gone (${JSON.stringify(last)})`, async () => {
      const r = await kube.request('GET', `${CRDS}/${crd.metadata.name}`);
      last = r.body.status;
      return r.code === 404;
    }).catch((e: Error) => {
      throw new Error(`${e.message}: ${JSON.stringify(last)}`);
    });
  }
}

type Role = 'etcd' | 'kube-apiserver' | 'kube-controller-manager';
const ROLES: Role[] = ['kube-apiserver', 'etcd', 'kube-controller-manager'];
type Cpu = Record<Role, number>;
interface Phase {
  readonly phase: string;
  readonly wallS: number;
  readonly cpu: Cpu;
}

async function once(tuning: Tuning): Promise<{ phases: Phase[]; rssMiB: Cpu }> {
  const t0 = performance.now();
  const cp = await startControlPlanes({ clusters: ['x'], binary: await ensureKubeBinary(), tuning, log: () => undefined });
  try {
    const roleOf = (pid: number) => readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0')[1] as Role;
    const pids = Object.fromEntries(cp.pids.map((p) => [roleOf(p), p])) as Record<Role, number>;
    const read = (): Cpu => Object.fromEntries(ROLES.map((r) => [r, cpuSeconds(pids[r])])) as Cpu;
    const phases: Phase[] = [];
    let last = read();
    let at = performance.now();
    phases.push({ phase: 'start', wallS: (at - t0) / 1000, cpu: last });
    const phase = async (name: string, f: () => Promise<void>) => {
      await f();
      const now = read();
      const t = performance.now();
      phases.push({ phase: name, wallS: (t - at) / 1000, cpu: Object.fromEntries(ROLES.map((r) => [r, now[r] - last[r]])) as Cpu });
      last = now;
      at = t;
    };
    const kube = kubeFor(cp.clusters.x!);
    await phase('idle', () => wait(IDLE_S));
    await phase('install 1', () => install(kube).then(() => wait(SETTLE_S)));
    await phase('idle+CRDs', () => wait(IDLE_S));
    await phase('delete 1', () => remove(kube).then(() => wait(SETTLE_S)));
    await phase('install 2', () => install(kube).then(() => wait(SETTLE_S)));
    await phase('delete 2', () => remove(kube).then(() => wait(SETTLE_S)));
    const rssMiB = Object.fromEntries(ROLES.map((r) => [r, memMiB(pids[r])])) as Cpu;
    return { phases, rssMiB };
  } finally {
    await cp.stop();
  }
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ');
const results: Record<string, { runs: { phases: Phase[]; rssMiB: Cpu; load: string }[] }> = {};
console.log(`${crds.length} CRDs; idle ${IDLE_S} s, settle ${SETTLE_S} s, ${RUNS} run(s) per variant`);
for (let i = 0; i < RUNS; i++) {
  // Variants interleaved, so a change of the machine's load touches each alike.
  for (const v of chosen) {
    const r = await once(VARIANTS[v]!);
    (results[v] ??= { runs: [] }).runs.push({ ...r, load: loadavg() });
    console.log(
      `${v} run ${i + 1}: ${r.phases.map((p) => `${p.phase} ${ROLES.reduce((s, k) => s + p.cpu[k], 0).toFixed(1)}`).join(', ')} (load ${loadavg()})`,
    );
  }
}

console.log(`\nCPU-seconds (median of ${RUNS}): apiserver / etcd / controller-manager`);
const names = results[chosen[0]!]!.runs[0]!.phases.map((p) => p.phase);
console.log(`${'variant'.padEnd(26)} ${names.map((n) => n.padStart(17)).join('')} ${'total'.padStart(8)} ${'RSS MiB'.padStart(8)}`);
for (const v of chosen) {
  const runs = results[v]!.runs;
  const cell = (i: number, r: Role) => median(runs.map((x) => x.phases[i]!.cpu[r]));
  const cells = names.map((_, i) =>
    ROLES.map((r) => cell(i, r).toFixed(1))
      .join('/')
      .padStart(17),
  );
  const total = median(runs.map((x) => x.phases.reduce((s, p) => s + ROLES.reduce((t, r) => t + p.cpu[r], 0), 0)));
  const rss = median(runs.map((x) => ROLES.reduce((s, r) => s + x.rssMiB[r], 0)));
  console.log(`${v.padEnd(26)} ${cells.join('')} ${total.toFixed(1).padStart(8)} ${rss.toFixed(0).padStart(8)}`);
}
mkdirSync(join(root, 'bench', 'results'), { recursive: true });
writeFileSync(
  join(root, 'bench', 'results', 'control-plane-cost.json'),
  `${JSON.stringify({ date: new Date().toISOString(), crds: crds.length, idleS: IDLE_S, settleS: SETTLE_S, variants: Object.fromEntries(chosen.map((v) => [v, { tuning: VARIANTS[v], ...results[v] }])) }, null, 2)}\n`,
);
console.log('wrote bench/results/control-plane-cost.json');
