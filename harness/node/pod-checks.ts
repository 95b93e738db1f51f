/**
 * What a suite needs to check a node by its Pods (test/cluster/platform-pods.test.ts, "the app cluster's node"):
 * busybox Pods run to a phase, what they printed read from the kubelet's log files, and what a stopped node must not
 * leave behind.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { applyAt, eventually, getObject, type Kube, type WireObject } from '../cluster/kube';
import { tail } from '../cluster/processes';
import type { Node } from './node';

/** Fixed paths where containerd, the kubelet, the CNI library and buildah write by default: a node keeps off them. */
export const MACHINE_PATHS = [
  '/run/containerd',
  '/run/netns',
  '/var/lib/kubelet',
  '/var/lib/cni',
  '/var/lib/containerd',
  '/var/log/pods',
  '/var/log/containers',
  '/etc/cni',
  '/var/lib/containers',
  '/opt/containerd',
];

/**
 * What a container printed, from the kubelet's log file of the Pod. CRI format: `<time> <stream> <tag> <text>`, a
 * long line split into parts tagged P and a last one tagged F.
 */
export function podOutput(node: Pick<Node, 'podLogs'>, ns: string, pod: string): string {
  const dir = node.podLogs(ns, pod);
  if (!existsSync(dir)) return '';
  let out = '';
  for (const c of readdirSync(dir)) {
    const file = join(dir, c, '0.log');
    if (!existsSync(file)) continue;
    for (const line of readFileSync(file, 'utf8').split('\n')) {
      const m = /^\S+ \S+ ([PF]) (.*)$/.exec(line);
      if (m) out += m[2] + (m[1] === 'F' ? '\n' : '');
    }
  }
  return out;
}

/**
 * Creates a Pod of the node's busybox image running `script` (as `sh -c`) in `ns` and waits for `phase` (Running
 * means Ready too); the error names the Pod, its status, what it printed and the kubelet's last lines.
 */
export async function runBusybox(
  kube: Kube,
  node: Pick<Node, 'podLogs' | 'busyboxImage' | 'procs'>,
  ns: string,
  name: string,
  script: string,
  phase: 'Running' | 'Succeeded',
  extra: WireObject = {},
): Promise<WireObject> {
  await applyAt(kube, `/api/v1/namespaces/${ns}/pods/${name}`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { app: name } },
    spec: {
      restartPolicy: 'Never',
      terminationGracePeriodSeconds: 1,
      containers: [{ name: 'main', image: node.busyboxImage, imagePullPolicy: 'Never', command: ['/bin/sh', '-c', script], ...extra }],
    },
  });
  let last: WireObject | undefined;
  try {
    return await eventually(
      `Pod ${ns}/${name} to be ${phase}`,
      async () => {
        last = await getObject(kube, `/api/v1/namespaces/${ns}/pods/${name}`);
        if (last?.status?.phase === 'Failed') throw new Error('the Pod failed');
        const ready =
          phase !== 'Running' || (last?.status?.conditions ?? []).some((c: WireObject) => c.type === 'Ready' && c.status === 'True');
        return last?.status?.phase === phase && ready ? last : undefined;
      },
      90_000,
    );
  } catch (e) {
    const kubelet = node.procs.find((p) => p.role === 'kubelet')!;
    throw new Error(
      `${(e as Error).message}\nPod status: ${JSON.stringify(last?.status)}\nits logs (${node.podLogs(ns, name)}):\n${podOutput(node, ns, name)}\n` +
        `kubelet log ${kubelet.logPath}:\n${tail(kubelet.logPath, 15)}`,
    );
  }
}

/** Every process id in a cgroup folder and below. */
export function cgroupProcs(dir: string): number[] {
  const here = readFileSync(join(dir, 'cgroup.procs'), 'utf8').split('\n').filter(Boolean).map(Number);
  const below = readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .flatMap((e) => {
      try {
        return cgroupProcs(join(dir, e.name));
      } catch {
        return [];
      }
    });
  return [...here, ...below];
}
