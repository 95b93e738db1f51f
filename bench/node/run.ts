/**
 * bench/node: the harness's node (harness/node/) beside the process-based control plane it serves.
 *
 * Rows: from an empty node to Ready (containerd up, images imported, kubelet registered, kube-proxy synced, CoreDNS
 * answering), then BENCH_PODS Pods (default 5, busybox sleeping) from create to Running; and, over an idle window of
 * BENCH_IDLE_S seconds (default 30) with those Pods running, the CPU (cores) and resident memory of the node's own
 * processes (containerd and its shims, kubelet, kube-proxy, CoreDNS, the API server forwarder; not the Pods) beside the
 * control plane's (etcd, kube-apiserver, kube-controller-manager) and the scheduler.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { eventually, getObject, kubeFor, requireOk } from '../../harness/cluster/kube';
import { startNode } from '../../harness/node/node';
import { cpuSeconds as cpuS, memMiB as rssMiB } from '../measure';
import { sleep } from '../../lib/abort';

const root = process.cwd();
const pods = Number(process.env.BENCH_PODS ?? 5);
const idleS = Number(process.env.BENCH_IDLE_S ?? 30);

/** The node's own processes: those in its cgroup's `node` folder (containerd's shims inherit it; Pods do not). */
function nodePids(cgroupDirs: readonly string[]): number[] {
  const pidsDir = cgroupDirs.find((d) => d.includes('/pids/')) ?? cgroupDirs[0]!;
  return readFileSync(join(pidsDir, 'node', 'cgroup.procs'), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map(Number);
}

const cp = await startControlPlanes({ clusters: ['bench'], pods: true, log: () => undefined });
const cluster = cp.clusters.bench!;
const kube = kubeFor(cluster);
let t = performance.now();
const node = await startNode(cluster, { log: () => undefined });
const readyMs = performance.now() - t;
try {
  await eventually('the default ServiceAccount', () => getObject(kube, '/api/v1/namespaces/default/serviceaccounts/default'));
  t = performance.now();
  for (let i = 0; i < pods; i++) {
    await requireOk(kube, 'POST', '/api/v1/namespaces/default/pods', {
      metadata: { name: `sleeper-${i}` },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [{ name: 'main', image: node.busyboxImage, imagePullPolicy: 'Never', command: ['sleep', '3600'] }],
      },
    });
  }
  await eventually(
    `${pods} Pods Running`,
    async () => {
      const list = await requireOk(kube, 'GET', '/api/v1/namespaces/default/pods');
      return (list.items as { status?: { phase?: string } }[]).filter((p) => p.status?.phase === 'Running').length === pods
        ? true
        : undefined;
    },
    180_000,
  );
  const podsMs = performance.now() - t;

  const scheduler = node.procs.find((p) => p.role === 'kube-scheduler')!.pid;
  const groups = { node: () => nodePids(node.cgroupDirs), 'control plane': () => cp.pids, scheduler: () => [scheduler] };
  const before = Object.fromEntries(Object.entries(groups).map(([k, f]) => [k, f().reduce((s, p) => s + cpuS(p), 0)]));
  const started = performance.now();
  await sleep(idleS * 1000);
  const elapsedS = (performance.now() - started) / 1000;
  const usage = Object.entries(groups).map(([k, f]) => {
    const list = f();
    return {
      what: k,
      processes: list.length,
      cores: (list.reduce((s, p) => s + cpuS(p), 0) - before[k]!) / elapsedS,
      rssMiB: list.reduce((s, p) => s + rssMiB(p), 0),
    };
  });
  // Shims of the Pods are the node's too; say how many there are.
  const shims = nodePids(node.cgroupDirs).filter((p) => {
    try {
      return readFileSync(`/proc/${p}/comm`, 'utf8').startsWith('containerd-shim');
    } catch {
      return false;
    }
  }).length;

  console.log(`\n${'what'.padEnd(46)} ${'value'.padStart(10)}`);
  console.log(`${'empty node to Ready'.padEnd(46)} ${`${(readyMs / 1000).toFixed(1)} s`.padStart(10)}`);
  console.log(`${`${pods} Pods created to Running`.padEnd(46)} ${`${(podsMs / 1000).toFixed(1)} s`.padStart(10)}`);
  console.log(`\nidle ${idleS} s with ${pods} Pods running (${shims} shims):`);
  console.log(`${'processes'.padEnd(30)} ${'count'.padStart(5)} ${'cores'.padStart(7)} ${'RSS MiB'.padStart(8)}`);
  for (const u of usage)
    console.log(
      `${u.what.padEnd(30)} ${String(u.processes).padStart(5)} ${u.cores.toFixed(3).padStart(7)} ${u.rssMiB.toFixed(0).padStart(8)}`,
    );
  mkdirSync(join(root, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(root, 'bench', 'results', 'node.json'),
    `${JSON.stringify({ date: new Date().toISOString(), pods, idleS, readyMs, podsMs, shims, usage }, null, 2)}\n`,
  );
  console.log('wrote bench/results/node.json');
} finally {
  await node.stop();
  await cp.stop();
}
