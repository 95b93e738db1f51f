/**
 * bench/platform: the platform as an operator deploys it (harness/platform/) beside the process-based harness, in
 * one run.
 *
 * Rows: from an empty node (a `pods` cluster's startNode) to every Pod of the platform Ready (registry, images and
 * packages pushed, Crossplane from its Helm chart, the Configuration and its dependencies Healthy: core, RBAC manager,
 * function, provider-kubernetes, the provider-anynines stand-in), images already built (warm); then, over an idle window
 * of BENCH_IDLE_S seconds (default 30), the CPU (cores) and resident memory of the node's own processes (containerd
 * and its shims, kubelet, kube-proxy, CoreDNS, registry, forwarders), of the platform's Pods, and of the same Crossplane
 * core, function and provider-kubernetes run as processes by startCrossplane on a second cluster of the same run.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { startCrossplane, synthOutputAsync } from '../../harness/crossplane/crossplane';
import { kubeFor } from '../../harness/cluster/kube';
import { type Node, startNode } from '../../harness/node/node';
import { ensureCrossplaneImages, ensureDeployableImages } from '../../harness/node/platform-images';
import { listPods } from '../../harness/platform/pods';
import { releaseToMirror } from '../../sandbox/release';
import { startPlatformOnPods } from '../../harness/platform/platform-on-pods';
import { cpuSeconds as cpuS, memMiB as rssMiB } from '../measure';
import { sleep } from '../../lib/abort';

const root = process.cwd();
const idleS = Number(process.env.BENCH_IDLE_S ?? 30);
const quiet = () => undefined;

/** Pids of a cgroup folder and every folder below it. */
function treePids(dir: string): number[] {
  const own = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  const subs = readdirSync(dir, { withFileTypes: true }).filter((e) => e.isDirectory());
  return [...own, ...subs.flatMap((e) => treePids(join(dir, e.name)))];
}

const dist = mkdtempSync(join(tmpdir(), 'klutch-kit-bench-platform-'));
process.once('exit', () => rmSync(dist, { recursive: true, force: true }));
await synthOutputAsync(dist);
// Warm: the images exist before the clock starts (a cold build is a one-off, docs/decisions/images.md).
await ensureDeployableImages(dist, quiet);
await ensureCrossplaneImages(quiet);
const cp = await startControlPlanes({ clusters: ['pods'], pods: true, log: quiet });
const processes = await startControlPlanes({ clusters: ['processes'], log: quiet });
const cluster = cp.clusters.pods!;
// The process harness first, so the clock below measures the node and the platform alone.
const xp = await startCrossplane(processes.clusters.processes!, { version: 'v2' });
const t = performance.now();
let node: Node | undefined;
try {
  node = await startNode(cluster, { log: quiet });
  const nodeReadyMs = performance.now() - t;
  const platform = await startPlatformOnPods(cluster, node, { log: quiet, publish: releaseToMirror(join(dist, 'release'), 'v1', quiet) });
  const kube = kubeFor(cluster);
  for (;;) {
    const pods = await listPods(kube);
    const ready = (p: (typeof pods)[number]) =>
      (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
    if (pods.length > 0 && pods.every(ready)) break;
    await sleep(250);
  }
  const allReadyMs = performance.now() - t;
  const podCount = (await listPods(kube)).length;

  const pidsDir = node.cgroupDirs.find((d) => d.includes('/pids/')) ?? node.cgroupDirs[0]!;
  const nodeOwn = () => treePids(join(pidsDir, 'node'));
  const groups: Record<string, () => number[]> = {
    'node (containerd, kubelet, proxy, DNS, registry)': nodeOwn,
    [`platform Pods (${podCount})`]: () => {
      const own = new Set(nodeOwn());
      return treePids(pidsDir).filter((p) => !own.has(p));
    },
    'process harness (core, function, provider)': () => [xp.crossplane.pid, xp.fn.pid, xp.provider.pid],
    'control plane of the pods cluster': () => [...cp.pids],
  };
  const before = Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, f().reduce((s, p) => s + cpuS(p), 0)]));
  const started = performance.now();
  await sleep(idleS * 1000);
  const elapsedS = (performance.now() - started) / 1000;
  const usage = Object.entries(groups).map(([what, f]) => {
    const list = f();
    return {
      what,
      processes: list.length,
      cores: (list.reduce((s, p) => s + cpuS(p), 0) - before[what]!) / elapsedS,
      rssMiB: list.reduce((s, p) => s + rssMiB(p), 0),
    };
  });

  console.log(`\n${'what'.padEnd(52)} ${'value'.padStart(10)}`);
  console.log(`${'empty node to Ready'.padEnd(52)} ${`${(nodeReadyMs / 1000).toFixed(1)} s`.padStart(10)}`);
  console.log(
    `${`empty node to every Pod of the platform Ready (${podCount})`.padEnd(52)} ${`${(allReadyMs / 1000).toFixed(1)} s`.padStart(10)}`,
  );
  for (const [step, s] of Object.entries(platform.timings)) console.log(`${`  ${step}`.padEnd(52)} ${`${s.toFixed(1)} s`.padStart(10)}`);
  console.log(`\nidle ${idleS} s:`);
  console.log(`${'processes'.padEnd(52)} ${'count'.padStart(5)} ${'cores'.padStart(7)} ${'RSS MiB'.padStart(8)}`);
  for (const u of usage)
    console.log(
      `${u.what.padEnd(52)} ${String(u.processes).padStart(5)} ${u.cores.toFixed(3).padStart(7)} ${u.rssMiB.toFixed(0).padStart(8)}`,
    );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'platform.json'),
    `${JSON.stringify({ date: new Date().toISOString(), idleS, nodeReadyMs, allReadyMs, podCount, steps: platform.timings, usage }, null, 2)}\n`,
  );
  console.log('wrote bench/results/platform.json');
  await platform.close();
} finally {
  await xp.stop();
  await node?.stop();
  await processes.stop();
  await cp.stop();
  rmSync(dist, { recursive: true, force: true });
}
