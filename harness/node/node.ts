/**
 * A real node for a harness cluster: `startNode(cluster)` runs containerd + runc, the kubelet, kube-proxy (iptables),
 * kube-network-policies, CoreDNS and kube-scheduler, so Pods run, NetworkPolicies hold, Services have ClusterIPs and
 * DNS names, and in-cluster clients reach the API server through the `kubernetes` Service, as in any cluster.
 *
 * What runs where (docs/decisions/pod-node.md): everything of the node except the scheduler runs inside a network
 * and mount namespace the run creates (netns.ts) and inside one cgroup tree below the runner's (cgroups.ts); the API
 * server, on the host's 127.0.0.1, is reached through a unix-socket bridge (apiserver-bridge.ts). `stop()` ends the
 * processes, then sweeps the cgroup tree (Pods and containerd's shims included), so the namespaces and every mount in
 * them end with their last process; then it deletes the state. A detached reaper does the same if the test runner
 * dies first, and the next start prunes what a killed reaper left.
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  closeSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { stringify } from 'yaml';
import { ensureCoreDns } from '../tools/coredns';
import { ensurePrograms, NODE_PROGRAMS, program } from '../tools/programs';
import { ensureKubeBinary } from '../tools/kube';
import { ensureNetworkPolicies } from '../tools/network-policies';
import { ADMIN, type ClusterInfo } from '../cluster/control-plane';
import { getObject, kubeFor } from '../cluster/kube';
import { launch, type Proc, tail, waitReady } from '../cluster/processes';
import { bridgeApiServer, forwardIntoNode, type NodePort } from './apiserver-bridge';
import { createNodeCgroup, sweepScript, shellQuote } from './cgroups';
import { writeCniConfig } from './cni';
import { registryHostsDir, startContainerd } from './containerd';
import { publishDns, startDns } from './dns';
import { publishEndpoints } from './endpoints';
import { BUSYBOX_IMAGE, ensureBusyboxImage, ensurePauseImage, importImages } from './images';
import { startKubelet } from './kubelet';
import { execInNode, inNode, type NodeNetwork, startNamespaces } from './netns';
import { startNetworkPolicies } from './network-policies';
import { startProxy } from './proxy';
import { startScheduler } from './scheduler';

export interface NodeOptions {
  /** Node name (a DNS label); default `node`. */
  readonly name?: string;
  /** The API server's `--service-cluster-ip-range`; default the harness's `10.0.0.0/24`. */
  readonly serviceCidr?: string;
  /** The node's Pod network; default `10.244.0.0/24`, the node at `.1`. */
  readonly podCidr?: string;
  /** OCI archives to import besides pause and busybox. */
  readonly images?: readonly string[];
  /** The multi-call binary; default built from harness/tools/kube (ensureKubeBinary). */
  readonly binary?: string;
  /** Progress lines; default stderr. */
  readonly log?: (line: string) => void;
}

export interface Node {
  readonly name: string;
  /** Logs (`<role>.log` per process, Pod logs under `kubelet/pod-logs`) and state. */
  readonly runDir: string;
  /** The node's address inside its network namespace. */
  readonly ip: string;
  /** The ClusterIP of `kube-system/kube-dns`. */
  readonly dnsIp: string;
  /** `net:[inode]` of the node's network namespace. */
  readonly netns: string;
  /** Image of busybox (Debian's busybox-static) present on the node. */
  readonly busyboxImage: string;
  /** Every process the harness started for the node. */
  readonly procs: readonly Proc[];
  /** The node's cgroup folders, one per hierarchy (gone after stop). */
  readonly cgroupDirs: readonly string[];
  /** The log file of a container of a Pod, for messages. */
  podLogs(namespace: string, pod: string): string;
  /** Runs a command inside the node's namespaces (iptables, busybox wget against node-local ports). */
  exec(command: string, args: readonly string[]): { code: number; output: string };
  /** Imports an OCI archive into the node's containerd. */
  importImage(archive: string): Promise<void>;
  /**
   * Starts a long-running process inside the node's namespaces and cgroup (log `<runDir>/<role>.log`); `stop()` ends
   * it with the node's own processes.
   */
  startProcess(role: string, command: string, args: readonly string[], env?: NodeJS.ProcessEnv): Proc;
  /** containerd's registry hosts folder: `<host:port>/hosts.toml` there tells the node how to trust a registry. */
  readonly registryHostsDir: string;
  /** A port on the host's 127.0.0.1 reaching `host:port` inside the node (HTTP CONNECT through the node's bridge). */
  forward(host: string, port: number): Promise<NodePort>;
  /** What another process needs to use the node (attach.ts): plain data, no processes. */
  readonly handle: NodeHandle;
  stop(): Promise<void>;
}

/** A running node as plain data, for another process of the run (a test worker of the shared platform). */
export interface NodeHandle extends Pick<Node, 'name' | 'runDir' | 'ip' | 'dnsIp' | 'netns' | 'busyboxImage' | 'registryHostsDir'> {
  /** The process holding the node's namespaces: commands enter them through it. */
  readonly holderPid: number;
  /** The unix socket serving HTTP CONNECT into the node (forwardIntoNode). */
  readonly connectSocket: string;
  readonly containerdSocket: string;
  readonly kubeletLog: string;
}

const RUNS = join(tmpdir(), 'klutch-kit-node');
const KEEP_RUNS = 5;
const CLUSTER_DOMAIN = 'cluster.local';

/** Starts a node for `cluster`; resolves when the Node is Ready, kube-proxy has synced and CoreDNS answers. */
export async function startNode(cluster: ClusterInfo, o: NodeOptions = {}): Promise<Node> {
  const log = o.log ?? ((line: string) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const name = o.name ?? 'node';
  const serviceCidr = o.serviceCidr ?? '10.0.0.0/24';
  const podCidr = o.podCidr ?? '10.244.0.0/24';
  const net: NodeNetwork = { nodeIp: hostAddress(podCidr, 1), podCidr, serviceCidr, bridge: 'kk0' };
  const dnsIp = hostAddress(serviceCidr, 10);
  const apiPort = Number(new URL(cluster.server).port);

  await ensurePrograms(NODE_PROGRAMS, log);
  const binary = o.binary ?? (await ensureKubeBinary());
  const coredns = await ensureCoreDns(log);
  const policyAgent = await ensureNetworkPolicies(log);
  const images = [ensurePauseImage(log), ensureBusyboxImage(log), ...(o.images ?? [])];

  pruneNodeRuns();
  mkdirSync(RUNS, { recursive: true });
  const runDir = mkdtempSync(join(RUNS, `${new Date().toISOString().replace(/[:.]/g, '-')}-`));
  writeFileSync(join(runDir, 'owner.pid'), String(process.pid));
  const id = basename(runDir).slice(-6);
  const started = Date.now();
  log(`starting node ${name} for cluster ${cluster.name}; logs in ${runDir}`);

  const procs: Proc[] = [];
  const track = (p: Proc) => procs.push(p);
  const cg = createNodeCgroup(id, runDir);
  // The API server's egress socket is the node's (its forwarder made it), though it lies in the cluster's folder.
  startReaper(runDir, cluster.node ? [cluster.node.egressSocket] : []);
  let closeBridge: (() => Promise<void>) | undefined;
  let holder: Proc | undefined;

  const stop = async (): Promise<void> => {
    // The node's own processes first (they would restart Pods), then containerd, then whatever is left in the
    // cgroup tree: the shims and the Pods' processes, the namespaces' holder.
    await Promise.all(procs.filter((p) => p !== holder && p.role !== 'containerd').map((p) => p.stop(5_000)));
    await closeBridge?.();
    await Promise.all(procs.filter((p) => p.role === 'containerd').map((p) => p.stop(5_000)));
    const sweep = spawnSync('sh', ['-c', sweepScript(runDir)], { encoding: 'utf8' });
    await holder?.stop(2_000);
    removeState(runDir);
    writeFileSync(join(runDir, 'finished'), new Date().toISOString());
    if (sweep.status !== 0) throw new Error(`stopping node ${name}: ${sweep.stderr} (run folder ${runDir})`);
  };

  try {
    const ns = await startNamespaces(runDir, cg, net, String(process.pid));
    holder = ns.holder;
    track(holder);
    const containerdDir = join(runDir, 'containerd');
    const cniConf = join(runDir, 'cni', 'conf');
    writeCniConfig(cniConf, join(runDir, 'cni', 'ipam'), net);
    const containerd = await startContainerd(containerdDir, cniConf, cg, holder.pid, track);
    // Imported while the kubelet and the rest start (no Pod runs before the node is returned).
    const imported = importImages(containerd.socket, images);
    imported.catch(() => undefined); // awaited below; a failure before then must not be unhandled

    const bridge = await bridgeApiServer(runDir, apiPort, net.nodeIp, cg, holder.pid, track, cluster.node?.egressSocket);
    closeBridge = bridge.close;
    const kubeconfig = join(runDir, 'node.kubeconfig');
    writeFileSync(kubeconfig, nodeKubeconfig(cluster, bridge.server), { mode: 0o600 });
    const kube = kubeFor(cluster);
    // The API servers of the harness run with --endpoint-reconciler-type=none: the node says where it reaches them.
    await publishEndpoints(kube, 'default', 'kubernetes', net.nodeIp, [{ name: 'https', port: apiPort, protocol: 'TCP' }]);
    await publishDns(kube, dnsIp, net.nodeIp);

    const kubelet = startKubelet({
      binary,
      dir: join(runDir, 'kubelet'),
      nodeName: name,
      nodeIp: net.nodeIp,
      kubeconfig,
      containerdSocket: containerd.socket,
      cgroup: cg,
      holderPid: holder.pid,
      clusterDns: dnsIp,
      clusterDomain: CLUSTER_DOMAIN,
      clientCa: cluster.node?.kubeletClientCa,
    });
    track(kubelet);
    const proxy = startProxy({ binary, dir: runDir, nodeName: name, kubeconfig, podCidr, cgroup: cg, holderPid: holder.pid });
    track(proxy);
    const policies = startNetworkPolicies({
      binary: policyAgent,
      dir: runDir,
      nodeName: name,
      kubeconfig,
      cgroup: cg,
      holderPid: holder.pid,
    });
    track(policies);
    const dns = startDns({ binary: coredns, dir: runDir, kubeconfig, clusterDomain: CLUSTER_DOMAIN, cgroup: cg, holderPid: holder.pid });
    track(dns);
    const scheduler = startScheduler(binary, cluster.kubeconfig, runDir, name);
    track(scheduler);

    const exec = (command: string, args: readonly string[]) => execInNode(holder!.pid, command, args);
    await waitReady(kubelet, async () => {
      const node = await getObject(kube, `/api/v1/nodes/${name}`);
      return (node?.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
    });
    await waitReady(proxy, async () =>
      exec(program('iptables'), ['-t', 'nat', '-S', 'KUBE-SERVICES']).output.includes('default/kubernetes:https'),
    );
    await waitReady(dns, async () => exec(program('busybox'), ['wget', '-q', '-O-', 'http://127.0.0.1:8181/ready']).code === 0);
    await waitReady(
      scheduler,
      async () =>
        tail(scheduler.logPath, 200).includes('Attempting to acquire') ||
        tail(scheduler.logPath, 200).includes('Starting Kubernetes Scheduler'),
    );
    await imported;
    log(`node ${name} Ready in ${((Date.now() - started) / 1000).toFixed(1)}s (address ${net.nodeIp} in its own network namespace)`);

    // What another process needs to reach this node (the shared Pod platform hands it to the test workers).
    const handle: NodeHandle = {
      name,
      runDir,
      ip: net.nodeIp,
      dnsIp,
      netns: ns.netns,
      busyboxImage: BUSYBOX_IMAGE,
      registryHostsDir: registryHostsDir(containerdDir),
      holderPid: holder.pid,
      connectSocket: bridge.connectSocket,
      containerdSocket: containerd.socket,
      kubeletLog: kubelet.logPath,
    };
    return {
      ...handle,
      procs,
      cgroupDirs: cg.dirs,
      podLogs: (namespace, pod) => podLogDir(join(runDir, 'kubelet', 'pod-logs'), namespace, pod),
      exec,
      importImage: (archive) => importImages(containerd.socket, [archive]),
      startProcess: (role, command, args, env) => {
        const p = launch({ ...inNode(cg, holder!.pid, command, args), role, owner: 'node', logDir: runDir, env });
        track(p);
        return p;
      },
      forward: async (host, port) => {
        const f = await forwardIntoNode(runDir, bridge.connectSocket, host, port);
        track(f.proc);
        return f;
      },
      handle,
      stop,
    };
  } catch (err) {
    await stop().catch(() => undefined);
    throw err;
  }
}

/** The `n`th address of an IPv4 prefix (`10.0.0.0/24`, 10 -> `10.0.0.10`). */
export function hostAddress(cidr: string, n: number): string {
  const [ip, bits] = cidr.split('/');
  const parts = ip!.split('.').map(Number);
  const base = ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
  if (n >= 2 ** (32 - Number(bits))) throw new Error(`${cidr} has no address number ${n}`);
  const v = (base + n) >>> 0;
  return [v >>> 24, (v >>> 16) & 255, (v >>> 8) & 255, v & 255].join('.');
}

/**
 * The admin kubeconfig as seen inside the node: the bridge's address, and the API server's name in its certificate
 * (the serving certificate names `kubernetes.default.svc`, not the node's address).
 */
function nodeKubeconfig(cluster: ClusterInfo, server: string): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: cluster.name,
        cluster: {
          server,
          'certificate-authority-data': Buffer.from(cluster.ca).toString('base64'),
          'tls-server-name': 'kubernetes.default.svc',
        },
      },
    ],
    users: [{ name: ADMIN, user: { token: cluster.tokens[ADMIN] } }],
    contexts: [{ name: cluster.name, context: { cluster: cluster.name, user: ADMIN } }],
    'current-context': cluster.name,
  });
}

/** The kubelet's folder of a Pod's logs (`<namespace>_<pod>_<uid>`), or where it would be. */
export function podLogDir(root: string, namespace: string, pod: string): string {
  const prefix = `${namespace}_${pod}_`;
  const found = existsSync(root) ? readdirSync(root).find((d) => d.startsWith(prefix)) : undefined;
  return join(root, found ?? `${prefix}<uid>`);
}

/** State that holds no logs: containerd's images and snapshots, the kubelet's root, CNI leases, the sockets. */
function stateDirs(runDir: string): string[] {
  return [
    'containerd/root',
    'containerd/state',
    'kubelet/root',
    'kubelet/pki',
    'cni/ipam',
    'registry/data',
    'sysctl',
    'apiserver.sock',
    'containerd/containerd.sock',
  ].map((d) => join(runDir, d));
}

function removeState(runDir: string): void {
  for (const d of stateDirs(runDir)) rmSync(d, { recursive: true, force: true });
}

/**
 * A detached shell that waits while the test runner lives; if the runner dies before `stop()` finished, it sweeps
 * the node's cgroup tree (its namespaces and mounts end with their processes) and deletes the state.
 */
function startReaper(runDir: string, alsoRemove: readonly string[]): void {
  const run = shellQuote(runDir);
  const script = `
while kill -0 ${process.pid} 2>/dev/null && [ ! -e ${run}/finished ]; do sleep 1; done
[ -e ${run}/finished ] && exit 0
echo "owner ${process.pid} is gone: cleaning up the node"
# A subshell: the sweep exits early when there is nothing to sweep.
(${sweepScript(runDir)})
rm -rf ${[...stateDirs(runDir), ...alsoRemove].map(shellQuote).join(' ')}
echo "cleaned up by the reaper" > ${run}/finished
`;
  const out = openSync(join(runDir, 'reaper.log'), 'a');
  try {
    spawn('sh', ['-c', script], { detached: true, stdio: ['ignore', out, out] }).unref();
  } finally {
    closeSync(out);
  }
}

/** Cleans up runs whose owner died without cleaning (the reaper killed too), keeping the logs of the newest few. */
function pruneNodeRuns(): void {
  if (!existsSync(RUNS)) return;
  const runs: { dir: string; mtime: number }[] = [];
  for (const n of readdirSync(RUNS)) {
    const dir = join(RUNS, n);
    try {
      if (isLive(dir)) continue;
      if (!existsSync(join(dir, 'finished'))) {
        spawnSync('sh', ['-c', sweepScript(dir)]);
        removeState(dir);
        writeFileSync(join(dir, 'finished'), 'pruned by a later run');
      }
      runs.push({ dir, mtime: statSync(dir).mtimeMs });
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
    }
  }
  runs.sort((a, b) => b.mtime - a.mtime);
  for (const { dir } of runs.slice(KEEP_RUNS)) rmSync(dir, { recursive: true, force: true });
}

function isLive(runDir: string): boolean {
  if (existsSync(join(runDir, 'finished'))) return false;
  if (!existsSync(join(runDir, 'owner.pid'))) return Date.now() - statSync(runDir).mtimeMs < 60_000;
  try {
    process.kill(Number(readFileSync(join(runDir, 'owner.pid'), 'utf8')), 0);
    return true;
  } catch {
    return false;
  }
}

/** Processes whose network namespace is `netns` (`net:[inode]`), for checks that a stopped node left none. */
export function processesInNetns(netns: string): number[] {
  const pids: number[] = [];
  for (const p of readdirSync('/proc')) {
    if (!/^\d+$/.test(p)) continue;
    try {
      if (readlinkSync(`/proc/${p}/ns/net`) === netns) pids.push(Number(p));
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return pids;
}
