/**
 * bench/app-cluster-bindings: a platform team registers 100 app clusters at once with AppClusterBindings, against the
 * bundled backend in --control-plane-mode on a control plane of its own. Each AppClusterBinding has its own Secret and
 * kubeconfig; the 100 "app clusters" are simulated by one real app-cluster API server (each binding's access checks,
 * SelfSubjectAccessReviews, go to it), since 100 API servers do not fit 2 cores. No Pods run here, so the konnectors the
 * backend deploys never start: the bench measures the backend's part, from the AppClusterBinding's creation to its
 * `KonnectorDeployed` condition (Secret validated, access checked, consumer provisioned, binding root namespace, export
 * requested, APIServiceBinding and konnector Deployment written).
 *
 * Rows: one AppClusterBinding alone (the baseline, same run), then 100 at once; time until all are provisioned, p50
 * and p99 per cluster, and the backend's CPU and peak resident memory. Writes bench/results/app-cluster-bindings.json.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AppClusterRole } from '../../konnector/deploy/app-cluster-role';
import { installBindCrds, installClaimApi, launchBackendBundle } from '../../harness/parts/bind-backend';
import { parseYaml } from '../../harness/crossplane/catalog';
import { bearerKubeconfigYaml, startControlPlanes } from '../../harness/cluster/control-plane';
import { applyConstruct } from '../../harness/parts/konnector';
import { kubeFor, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';
import { freePorts, probe, waitReady } from '../../harness/cluster/processes';
import { ensureKubeBinary } from '../../harness/tools/kube';
import { cpuSeconds, memMiB as rssMiB, percentile as pct } from '../measure';
import { sleep } from '../../lib/abort';
const cpuMs = (pid: number) => cpuSeconds(pid) * 1000;

const root = process.cwd();
const N = Number(process.env.BENCH_APP_CLUSTERS ?? 100);
const PG = { group: 'anynines.com', resource: 'postgresqlinstances' } as const;
const OPS = 'platform';
const TEMPLATES = 'templates';
const ACBS = `/apis/klutch.anynines.com/v1alpha1/namespaces/${OPS}/appclusterbindings`;

// The claim API from `npm run synth` (this bench runs as a bundle, without the catalog's .ts files).
const out = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-acb-'));
const synth = spawnSync(process.execPath, [join(root, 'scripts', 'synth.mjs'), '--out', out, '--quiet'], { cwd: root, encoding: 'utf8' });
if (synth.status !== 0) throw new Error(`npm run synth failed: ${synth.stderr}`);
const synthOutput = new Map<string, Record<string, unknown>[]>();
for (const f of readdirSync(out, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.yaml')))
  synthOutput.set(f, parseYaml(readFileSync(join(out, f), 'utf8')));

console.log(`starting a control plane and an app cluster; ${N} AppClusterBindings ...`);
const cp = await startControlPlanes({ clusters: ['cp', 'app'], binary: await ensureKubeBinary(), log: () => undefined });
const control = cp.clusters.cp!;
const appCluster = cp.clusters.app!;
const kc = kubeFor(control);
const ka = kubeFor(appCluster);
try {
  await installBindCrds(kc);
  for (const ns of [OPS, TEMPLATES]) await requireOk(kc, 'POST', '/api/v1/namespaces', { metadata: { name: ns } });
  await installClaimApi(kc, PG.resource, TEMPLATES, synthOutput);
  // The app cluster: the minimal ClusterRole as synth ships it, and a token of its ServiceAccount.
  await applyConstruct(ka, (c) => new AppClusterRole(c, 'role', { apis: [{ ...PG, claimed: ['secrets'] }] }));
  const token = await requireOk(ka, 'POST', '/api/v1/namespaces/klutch-control-plane/serviceaccounts/konnector/token', {
    apiVersion: 'authentication.k8s.io/v1',
    kind: 'TokenRequest',
    spec: { expirationSeconds: 7200 },
  });
  const kubeconfig = bearerKubeconfigYaml('app', appCluster.server, appCluster.ca, 'konnector', token.status.token as string);

  const dir = join(cp.runDir, 'bench');
  mkdirSync(dir, { recursive: true });
  const caFile = join(dir, 'control-plane-ca.crt');
  writeFileSync(caFile, control.ca);
  const [port] = await freePorts(1);
  const backend = await launchBackendBundle({
    args: [
      '--control-plane-mode',
      '--namespace-prefix=bench',
      '--consumer-scope=Namespaced',
      `--kubeconfig=${control.kubeconfig}`,
      '--namespace=default',
      `--external-address=${control.server}`,
      `--external-ca-file=${caFile}`,
      `--probe-address=127.0.0.1:${port}`,
      // The root namespaces' NetworkPolicy opens only these; the app cluster listens on a loopback port.
      `--konnector-api-ports=443,6443,${new URL(appCluster.server).port}`,
      // All N in one namespace, as a platform team registers them.
      `--max-app-cluster-bindings=${N}`,
    ],
    env: { PATH: process.env.PATH },
    logDir: dir,
    role: 'backend',
  });
  await waitReady(backend, () => probe(`http://127.0.0.1:${port}/readyz`).then((r) => r.code === 200), 60_000);

  /** Creates `names` at once and resolves with each one's ms from its creation to KonnectorDeployed. */
  async function register(
    names: readonly string[],
    kube: Kube,
  ): Promise<{ perCluster: number[]; wallMs: number; cpu: number; peak: number }> {
    const cpu0 = cpuMs(backend.pid);
    let peak = rssMiB(backend.pid);
    const started = new Map<string, number>();
    const t0 = performance.now();
    await Promise.all(
      names.map(async (name) => {
        await requireOk(kube, 'POST', `/api/v1/namespaces/${OPS}/secrets`, {
          metadata: { name },
          data: { kubeconfig: Buffer.from(kubeconfig).toString('base64') },
        });
        started.set(name, performance.now());
        await requireOk(kube, 'POST', ACBS, {
          apiVersion: 'klutch.anynines.com/v1alpha1',
          kind: 'AppClusterBinding',
          metadata: { name },
          spec: { kubeconfigSecretRef: { namespace: OPS, name, key: 'kubeconfig' }, apiExports: [PG], konnector: { deploy: true } },
        });
      }),
    );
    const done = new Map<string, number>();
    const deadline = Date.now() + 10 * 60_000;
    while (done.size < names.length) {
      if (Date.now() > deadline) throw new Error(`only ${done.size} of ${names.length} AppClusterBindings provisioned in 10 minutes`);
      peak = Math.max(peak, rssMiB(backend.pid));
      const list = (await requireOk(kube, 'GET', ACBS)).items as WireObject[];
      for (const o of list) {
        const name = o.metadata.name as string;
        const deployed = (o.status?.conditions as WireObject[] | undefined)?.some(
          (c) => c.type === 'KonnectorDeployed' && c.status === 'True',
        );
        if (deployed && names.includes(name) && !done.has(name)) done.set(name, performance.now() - started.get(name)!);
      }
      await sleep(200);
    }
    return { perCluster: [...done.values()], wallMs: performance.now() - t0, cpu: cpuMs(backend.pid) - cpu0, peak };
  }

  const rows = [];
  for (const [what, names] of [
    ['one AppClusterBinding alone (baseline)', ['solo']],
    [`${N} AppClusterBindings at once`, Array.from({ length: N }, (_, i) => `app-${String(i).padStart(3, '0')}`)],
  ] as const) {
    const r = await register(names, kc);
    rows.push({
      what,
      n: names.length,
      allProvisionedS: r.wallMs / 1000,
      p50S: pct(r.perCluster, 50) / 1000,
      p99S: pct(r.perCluster, 99) / 1000,
      backendCpuMsPerCluster: r.cpu / names.length,
      backendPeakRssMiB: r.peak,
    });
  }
  console.log('\n| what | clusters | all provisioned | p50 per cluster | p99 per cluster | backend CPU per cluster | backend peak RSS |');
  console.log('|---|---|---|---|---|---|---|');
  for (const r of rows)
    console.log(
      `| ${r.what} | ${r.n} | ${r.allProvisionedS.toFixed(1)} s | ${r.p50S.toFixed(2)} s | ${r.p99S.toFixed(2)} s | ${r.backendCpuMsPerCluster.toFixed(0)} ms | ${r.backendPeakRssMiB.toFixed(0)} MiB |`,
    );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'app-cluster-bindings.json'),
    `${JSON.stringify({ date: new Date().toISOString(), rows }, null, 2)}\n`,
  );
  await backend.stop(10_000);
} finally {
  await cp.stop();
}
