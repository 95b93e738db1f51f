/**
 * The kubelet (a mode of the multi-call binary harness/tools/kube) inside the node's namespaces and cgroup, on containerd.
 * Its settings are those a kubelet on these machines needs (docs/decisions/pod-node.md): cgroupfs under the node's
 * cgroup, cgroup v1 allowed, no swap check, no eviction or image GC on a shared development disk, every folder in the
 * run's folder, the cluster DNS at the kube-dns Service's address.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { launch, type Proc } from '../cluster/processes';
import type { NodeCgroup } from './cgroups';
import { inNode } from './netns';

export interface KubeletOptions {
  readonly binary: string;
  readonly dir: string;
  readonly nodeName: string;
  readonly nodeIp: string;
  readonly kubeconfig: string;
  readonly containerdSocket: string;
  readonly cgroup: NodeCgroup;
  readonly holderPid: number;
  readonly clusterDns: string;
  readonly clusterDomain: string;
  /** PEM of the CA of the API server's kubelet client certificate; without it nobody may call the kubelet. */
  readonly clientCa?: string;
}

function kubeletConfig(o: KubeletOptions): Record<string, unknown> {
  return {
    apiVersion: 'kubelet.config.k8s.io/v1beta1',
    kind: 'KubeletConfiguration',
    cgroupDriver: 'cgroupfs',
    cgroupRoot: o.cgroup.path,
    // These machines mount cgroup v1 controllers (hybrid mode); 1.34 refuses v1 unless told not to.
    failCgroupV1: false,
    failSwapOn: false,
    containerRuntimeEndpoint: `unix://${o.containerdSocket}`,
    // Only the API server calls the kubelet (logs, exec), with its client certificate (startControlPlanes with
    // `pods`); no anonymous access, no token webhook. Whoever holds that certificate may do anything here.
    authentication: {
      anonymous: { enabled: false },
      webhook: { enabled: false },
      x509: o.clientCa ? { clientCAFile: join(o.dir, 'client-ca.crt') } : {},
    },
    authorization: { mode: 'AlwaysAllow' },
    address: o.nodeIp,
    readOnlyPort: 0,
    healthzBindAddress: '127.0.0.1',
    healthzPort: 10248,
    enforceNodeAllocatable: [],
    evictionHard: { 'memory.available': '0%', 'nodefs.available': '0%', 'nodefs.inodesFree': '0%', 'imagefs.available': '0%' },
    imageGCHighThresholdPercent: 100,
    imageGCLowThresholdPercent: 99,
    // The machine's resolv.conf names servers outside: Pods get only the cluster DNS.
    resolvConf: '',
    clusterDNS: [o.clusterDns],
    clusterDomain: o.clusterDomain,
    podLogsDir: join(o.dir, 'pod-logs'),
    volumePluginDir: join(o.dir, 'volume-plugins'),
    serializeImagePulls: false,
    registerNode: true,
    // Quick status for tests that wait on Ready and on Pods: a change of the node's status is sent within 2 s.
    nodeStatusUpdateFrequency: '2s',
    // An unchanged status only every 5 minutes (the kubelet's default, its liveness is the node's Lease). Unset, it
    // would follow the 2 s above: a whole Node written every 2 s per node, 0.4 PATCH/s on the Pod platform's API
    // servers (docs/decisions/platform-api-load.md).
    nodeStatusReportFrequency: '5m',
    syncFrequency: '5s',
  };
}

/** Starts the kubelet; the caller waits for the Node to be Ready (node.ts). */
export function startKubelet(o: KubeletOptions): Proc {
  mkdirSync(o.dir, { recursive: true });
  const config = join(o.dir, 'kubelet.yaml');
  if (o.clientCa) writeFileSync(join(o.dir, 'client-ca.crt'), o.clientCa);
  writeFileSync(config, stringify(kubeletConfig(o)));
  return launch({
    ...inNode(o.cgroup, o.holderPid, o.binary, [
      'kubelet',
      `--config=${config}`,
      `--kubeconfig=${o.kubeconfig}`,
      `--hostname-override=${o.nodeName}`,
      `--node-ip=${o.nodeIp}`,
      `--root-dir=${join(o.dir, 'root')}`,
      `--cert-dir=${join(o.dir, 'pki')}`,
      '--v=2',
    ]),
    role: 'kubelet',
    owner: o.nodeName,
    logDir: o.dir,
    env: { ...process.env, KUBE_EXIT_WITH_PARENT: '1' },
  });
}
