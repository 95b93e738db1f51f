/**
 * The node's cgroup: one folder per cgroup hierarchy, under the test runner's own cgroup (so nothing of the node
 * leaves the cgroup its session is accounted and ended by). Every process of the node is put into it before it runs
 * (nodeCommand in netns.ts); the kubelet makes its Pods' cgroups below it (`cgroupRoot`), and containerd's shims
 * inherit containerd's. Ending the node is then a sweep of one tree, which also catches Pods and shims that
 * containerd left running: the same shell script stops a node, cleans up after a killed run and prunes old runs.
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

const CGROUP_FS = '/sys/fs/cgroup';

export interface NodeCgroup {
  /** The path inside every hierarchy, e.g. `/process_api/1a2b/klutch-kit-node-x`: the kubelet's `cgroupRoot`. */
  readonly path: string;
  /** Its folder in each hierarchy. */
  readonly dirs: readonly string[];
  /** Where the node's own processes go (a child of `dirs`), one folder per hierarchy. */
  readonly processDirs: readonly string[];
}

/** Mounted cgroup v1 hierarchies (and the unified one in hybrid mode); symlinked names (cpu,cpuacct) once. */
function hierarchies(): string[] {
  return readdirSync(CGROUP_FS, { withFileTypes: true })
    .filter((e) => e.isDirectory())
    .map((e) => join(CGROUP_FS, e.name))
    .filter((d) => existsSync(join(d, 'cgroup.procs')));
}

/**
 * The runner's deepest cgroup path among the hierarchies (on these machines only `memory` is nested), so the node's
 * tree sits inside it in the hierarchy that accounts the session, and at the same path in the others: the kubelet
 * takes one `cgroupRoot` for all.
 */
function runnerCgroupPath(): string {
  let deepest = '/';
  for (const line of readFileSync('/proc/self/cgroup', 'utf8').split('\n')) {
    const path = line.split(':')[2];
    if (path && path.split('/').length > deepest.split('/').length) deepest = path;
  }
  return deepest;
}

/** Makes the node's cgroup `klutch-kit-node-<id>` in every hierarchy; records the folders it made for the sweep. */
export function createNodeCgroup(id: string, runDir: string): NodeCgroup {
  const path = join(runnerCgroupPath(), `klutch-kit-node-${id}`);
  const made: string[] = [];
  const dirs: string[] = [];
  for (const h of hierarchies()) {
    // Folders between the hierarchy's root and ours may be missing in hierarchies where the runner sits at the root.
    let dir = h;
    for (const part of path.split('/').filter(Boolean)) {
      const parent = dir;
      dir = join(dir, part);
      if (existsSync(dir)) continue;
      mkdirSync(dir);
      made.push(dir);
      // cpuset: a new v1 cgroup has no CPUs or memory nodes and admits no process until given its parent's.
      for (const f of ['cpuset.cpus', 'cpuset.mems'])
        if (existsSync(join(parent, f))) writeFileSync(join(dir, f), readFileSync(join(parent, f), 'utf8'));
    }
    dirs.push(dir);
  }
  const processDirs = dirs.map((d) => join(d, 'node'));
  for (const [i, d] of processDirs.entries()) {
    mkdirSync(d, { recursive: true });
    for (const f of ['cpuset.cpus', 'cpuset.mems'])
      if (existsSync(join(dirs[i]!, f))) writeFileSync(join(d, f), readFileSync(join(dirs[i]!, f), 'utf8'));
  }
  // Deepest first, so the sweep can remove them in order (only the empty ones: another run may share a parent).
  writeFileSync(join(runDir, 'cgroups'), `${[...dirs].join('\n')}\n`);
  writeFileSync(join(runDir, 'cgroups.made'), `${made.reverse().join('\n')}\n`);
  return { path, dirs, processDirs };
}

/**
 * A shell script that SIGKILLs every process in the node's cgroup trees until none is left, then removes the trees
 * and the parents it made. Reads the lists `createNodeCgroup` wrote into the run folder, so it works for a run whose
 * owner is long gone.
 */
export function sweepScript(runDir: string): string {
  const q = shellQuote(runDir);
  return `
run=${q}
[ -f "$run/cgroups" ] || exit 0
roots=$(cat "$run/cgroups")
for i in $(seq 1 100); do
  pids=$(for r in $roots; do [ -d "$r" ] && find "$r" -name cgroup.procs -exec cat {} +; done 2>/dev/null | sort -u)
  [ -z "$pids" ] && break
  kill -9 $pids 2>/dev/null
  sleep 0.1
done
for r in $roots; do [ -d "$r" ] && find "$r" -depth -type d -exec rmdir {} + 2>/dev/null; done
for d in $(cat "$run/cgroups.made" 2>/dev/null); do rmdir "$d" 2>/dev/null; done
left=$(for r in $roots; do [ -d "$r" ] && echo "$r"; done)
if [ -n "$left" ]; then echo "cgroups still there: $left" >&2; exit 1; fi
rm -f "$run/cgroups" "$run/cgroups.made"
`;
}

export function shellQuote(s: string): string {
  return `'${s.replaceAll("'", `'\\''`)}'`;
}
