/**
 * The node's network and mount namespaces, made by the run: a holder process (`unshare --net --mount`) owns them and
 * every process of the node joins them with nsenter. In the network namespace live the node's address (on the CNI
 * bridge), the Pod and Service addresses and kube-proxy's iptables rules; nothing is put on the machine's own
 * interfaces. In the mount namespace live every mount of the node (the kubelet's root folder bound onto itself, Pod
 * volumes, containerd's snapshots and Pod network namespaces) and private tmpfs over /run, /var/log and /var/lib,
 * where containerd, the kubelet and the CNI library keep files at fixed paths; all of it ends with the namespace's
 * last process.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, readlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, type Proc, tail, waitReady } from '../cluster/processes';
import { program } from '../tools/programs';
import type { NodeCgroup } from './cgroups';
import { shellQuote } from './cgroups';

export interface NodeNetwork {
  /** The node's address: the CNI bridge's, the Pods' gateway. */
  readonly nodeIp: string;
  /** The bridge's prefix, e.g. `10.244.0.0/24`. */
  readonly podCidr: string;
  /** The API servers' `--service-cluster-ip-range`, routed to the bridge so kube-proxy's DNAT sees node traffic. */
  readonly serviceCidr: string;
  /** The CNI bridge's name. */
  readonly bridge: string;
}

/**
 * Kernel settings the kubelet writes at start unless they already hold its value (vm/overcommit_memory,
 * kernel/panic_on_oops, ...). They are not per network namespace: on the shared machine they are files of the node,
 * bound over /proc/sys in its mount namespace, holding the values the kubelet wants.
 */
const KUBELET_SYSCTLS: Readonly<Record<string, string>> = {
  'vm/overcommit_memory': '1',
  'vm/panic_on_oom': '0',
  'kernel/panic': '10',
  'kernel/panic_on_oops': '1',
  'kernel/keys/root_maxkeys': '1000000',
  'kernel/keys/root_maxbytes': '25000000',
};

export interface Namespaces {
  readonly holder: Proc;
  /** `net:[inode]` of the node's network namespace, for checks that it is gone. */
  readonly netns: string;
}

/**
 * Starts the holder: it makes the namespaces, the bridge with the node's address, the Service route, forwarding,
 * and then waits while `owner` (the test runner) lives, so it never outlives a killed run.
 */
export async function startNamespaces(runDir: string, cg: NodeCgroup, net: NodeNetwork, owner: string): Promise<Namespaces> {
  const sysctlDir = join(runDir, 'sysctl');
  const binds: string[] = [];
  mkdirSync(sysctlDir, { recursive: true });
  for (const [k, v] of Object.entries(KUBELET_SYSCTLS)) {
    const file = join(sysctlDir, k.replaceAll('/', '.'));
    writeFileSync(file, `${v}\n`);
    binds.push(`mount --bind ${shellQuote(file)} /proc/sys/${k}`);
  }
  const prefix = net.podCidr.split('/')[1];
  const ip = program('ip');
  const setup = [
    'set -e',
    ...binds,
    'mount -t tmpfs -o mode=755 klutch-kit-node-run /run',
    'mount -t tmpfs -o mode=755 klutch-kit-node-log /var/log',
    // The kubelet's device-plugins folder and the CNI library's cache are fixed paths under /var/lib.
    'mount -t tmpfs -o mode=755 klutch-kit-node-lib /var/lib',
    `${ip} link set lo up`,
    `${ip} link add ${net.bridge} type bridge`,
    `${ip} addr add ${net.nodeIp}/${prefix} dev ${net.bridge}`,
    `${ip} link set ${net.bridge} up`,
    // A Service address has no interface: locally made packets need a route before kube-proxy's OUTPUT DNAT.
    `${ip} route add ${net.serviceCidr} dev ${net.bridge} src ${net.nodeIp}`,
    'echo 1 > /proc/sys/net/ipv4/ip_forward',
    // Pod-to-Service-to-Pod on one bridge: bridged replies must pass iptables to be un-NATed (per namespace).
    'echo 1 > /proc/sys/net/bridge/bridge-nf-call-iptables',
    'echo namespaces ready',
    'set +e',
    `while kill -0 ${owner} 2>/dev/null; do sleep 1; done`,
  ].join('\n');
  const holder = launch({
    ...inCgroup(cg, 'unshare', ['--net', '--mount', '--propagation', 'private', '--', 'sh', '-c', setup]),
    role: 'namespaces',
    owner: 'node',
    logDir: runDir,
  });
  await waitReady(holder, async () => tail(holder.logPath).includes('namespaces ready'), 30_000);
  return { holder, netns: readlinkSync(`/proc/${holder.pid}/ns/net`) };
}

/** `command args` started inside the node's cgroup: a shell writes its pid into every hierarchy, then execs. */
export function inCgroup(cg: NodeCgroup, command: string, args: readonly string[]): { command: string; args: string[] } {
  const script = `for d in ${cg.processDirs.map(shellQuote).join(' ')}; do echo $$ > "$d/cgroup.procs" || exit 97; done; exec "$@"`;
  return { command: '/bin/sh', args: ['-c', script, 'sh', command, ...args] };
}

/** `command args` inside the node's cgroup and namespaces (the pid stays the same through both execs). */
export function inNode(cg: NodeCgroup, holderPid: number, command: string, args: readonly string[]): { command: string; args: string[] } {
  return inCgroup(cg, 'nsenter', [`--target=${holderPid}`, '--net', '--mount', '--', command, ...args]);
}

/** Runs a short command in the node's namespaces (not its cgroup: it ends by itself) and returns its output. */
export function execInNode(holderPid: number, command: string, args: readonly string[]): { code: number; output: string } {
  const r = spawnSync('nsenter', [`--target=${holderPid}`, '--net', '--mount', '--', command, ...args], {
    encoding: 'utf8',
    timeout: 30_000,
  });
  return { code: r.status ?? -1, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}
