/**
 * containerd (Debian's, with runc) for the node: root, state and socket in the run's folder, CNI plugins from Debian,
 * the pause image made locally (images.ts) as the sandbox image.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { launch, type Proc, waitReady } from '../cluster/processes';
import { program } from '../tools/programs';
import type { NodeCgroup } from './cgroups';
import { CNI_BIN_DIR } from './cni';
import { inNode } from './netns';

export interface Containerd {
  readonly proc: Proc;
  /** Path of the gRPC socket (reachable from the host: a unix socket crosses network namespaces). */
  readonly socket: string;
}

/** containerd's config: `containerd config default` changed only where the node needs it (docs/decisions/pod-node.md). */
function containerdConfig(dir: string, cniConfDir: string): string {
  return `version = 2
root = "${join(dir, 'root')}"
state = "${join(dir, 'state')}"
# The opt plugin would install into /opt/containerd on the machine.
disabled_plugins = ["io.containerd.internal.v1.opt", "io.containerd.snapshotter.v1.btrfs", "io.containerd.snapshotter.v1.zfs", "io.containerd.snapshotter.v1.devmapper", "io.containerd.snapshotter.v1.aufs"]

[grpc]
  address = "${join(dir, 'containerd.sock')}"

[ttrpc]
  address = "${join(dir, 'containerd.sock.ttrpc')}"

[debug]
  address = ""

[metrics]
  address = ""

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${PAUSE_IMAGE}"
  # Without CAP_SYS_RESOURCE the pause container's oom_score_adj -998 cannot be written, and runc then fails every
  # sandbox with a bare "can't get final child's PID from pipe: EOF".
  restrict_oom_score_adj = true
  enable_selinux = false
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${cniConfDir}"
  # Registries the node trusts (<host:port>/hosts.toml with the CA), read at each pull: registry.ts writes them.
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${registryHostsDir(dir)}"
`;
}

/** containerd's per-registry folder (certs.d): `<host:port>/hosts.toml`. */
export function registryHostsDir(dir: string): string {
  return join(dir, 'certs.d');
}

/** Starts containerd in the node; resolves when `ctr version` reaches it. */
export async function startContainerd(
  dir: string,
  cniConfDir: string,
  cg: NodeCgroup,
  holderPid: number,
  track: (p: Proc) => void,
): Promise<Containerd> {
  mkdirSync(dir, { recursive: true });
  const config = join(dir, 'config.toml');
  writeFileSync(config, containerdConfig(dir, cniConfDir));
  const socket = join(dir, 'containerd.sock');
  const proc = launch({
    ...inNode(cg, holderPid, program('containerd'), ['--config', config]),
    role: 'containerd',
    owner: 'node',
    logDir: dir,
  });
  track(proc);
  await waitReady(proc, async () => existsSync(socket) && ctr(socket, ['version']).code === 0, 60_000);
  return { proc, socket };
}

/** The sandbox image the kubelet 1.34 expects (containerd's `sandbox_image`); images.ts builds it. */
export const PAUSE_IMAGE = 'registry.k8s.io/pause:3.10';

/** The arguments of `ctr` against the node's containerd in the `k8s.io` namespace (the CRI's). */
export const ctrArgs = (socket: string, args: readonly string[]): string[] => ['--address', socket, '--namespace', 'k8s.io', ...args];

/** Runs `ctr` against the node's containerd (ctrArgs). */
function ctr(socket: string, args: readonly string[]): { code: number; output: string } {
  const r = spawnSync(program('ctr'), ctrArgs(socket, args), { encoding: 'utf8', timeout: 120_000 });
  return { code: r.status ?? -1, output: `${r.stdout ?? ''}${r.stderr ?? ''}` };
}
