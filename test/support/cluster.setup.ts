/**
 * Global setup of the `cluster` project: starts the shared control planes (cluster `a` of each worker's slot) in the
 * background and hands the test workers a file where their addresses appear once they are ready; cluster `b` of a
 * slot starts when a worker asks for it on its lease (cluster.ts).
 *
 * It does not wait: vitest runs every project's global setup before any test, and the `unit` project (which runs
 * first, see sequence.groupOrder) must not wait for a Kubernetes build. Cluster suites wait in `controlPlanes()`.
 */
import { mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import type {} from 'vitest';
import type { TestProject } from 'vitest/node';
import type {} from './platform/pod-platform';
import { ensureCoreDns } from '../../harness/tools/coredns';
import { ensureNetworkPolicies } from '../../harness/tools/network-policies';
import { ensurePrograms, type ProgramName, PROGRAMS } from '../../harness/tools/programs';
import { serveSlots } from './cluster-slots';
import { POD_PLATFORM_FILES, serveSharedPlatform, V1_FILES } from './platform/shared-platform';
import { type ControlPlanes, startControlPlanes } from '../../harness/cluster/control-plane';
import { CLUSTERS, EAGER_CLUSTERS, IDENTITIES, runClusterName, START_QUESTION, type ControlPlaneState } from './cluster';

declare module 'vitest' {
  export interface ProvidedContext {
    /** File that holds a ControlPlaneState once the control planes are up (or failed to come up). */
    controlPlaneState: string;
    /** Unix socket where each worker leases the slot of its clusters (cluster-slots.ts). */
    clusterSlots: string;
  }
}

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-cluster-'));
  const stateFile = join(dir, 'state.json');
  project.provide('controlPlaneState', stateFile);
  // Written whole, then renamed: a reader never sees half a file.
  const write = (state: ControlPlaneState) => {
    writeFileSync(`${stateFile}.tmp`, JSON.stringify(state));
    renameSync(`${stateFile}.tmp`, stateFile);
  };
  // The cluster files of this run (vitest's filters applied): how many workers can run, and whether a Pod suite is in.
  const filters = (project.vitest as unknown as { filenamePattern?: string[] }).filenamePattern;
  const files = (await project.globTestFiles(filters)).testFiles.map((f) => relative(project.config.root, f));
  // Clusters a and b for each worker, so files that run at the same time never share one (cluster.ts); b on demand.
  // No more workers run than files: a run of one file starts one `a`, not four (2.5 CPU-s each, then idle).
  const workers = Math.max(1, Math.min(Number(project.config.maxWorkers) || 1, files.length));
  // Every Debian package the cluster suites run, in one apt-get call before any cluster starts. Installed on demand
  // instead, the first to be missing (Chromium on a machine that had it removed) unpacked 110 MB in the middle of the
  // Pod suites: dpkg's fsyncs stalled etcd until API requests hit the handler timeout and a bind answered 500.
  await ensurePrograms(Object.keys(PROGRAMS) as ProgramName[], (line) => process.stderr.write(`[klutch-kit] ${line}\n`));
  const slotsPath = join(dir, 'slots.sock');
  let starting: Promise<ControlPlanes | undefined> | undefined;
  const slots = await serveSlots(slotsPath, workers, async (slot, question) => {
    const [what, name] = question.split(' ');
    if (what !== START_QUESTION || !CLUSTERS.includes(name as never)) throw new Error(`unknown question "${question}"`);
    const cp = await starting;
    if (!cp) throw new Error('the control planes failed to start (see the state file)');
    return JSON.stringify(await cp.addCluster(runClusterName(name!, String(slot))));
  });
  project.provide('clusterSlots', slotsPath);
  const names = Array.from({ length: workers }, (_, i) => EAGER_CLUSTERS.map((n) => runClusterName(n, String(i + 1)))).flat();
  // The shared Pod platform (platform/shared-platform.ts): started now when the run includes a Pod suite, so it comes
  // up while the unit project runs; otherwise only if a suite asks for it.
  const pods = await serveSharedPlatform({
    // Not inside `dir`, which goes at the end: the platform's logs stay when its start or a test on it failed.
    dir: mkdtempSync(join(tmpdir(), 'klutch-kit-pod-platform-')),
    stateFile: join(dir, 'pod-platform.json'),
    socket: join(dir, 'pod-platform.sock'),
    v1Files: V1_FILES.filter((f) => files.includes(f)),
    log: (line) => process.stderr.write(`[klutch-kit] ${line}\n`),
  });
  project.provide('podPlatform', { stateFile: join(dir, 'pod-platform.json'), socket: join(dir, 'pod-platform.sock') });
  if (files.some((f) => POD_PLATFORM_FILES.includes(f))) pods.start();
  starting = startControlPlanes({ clusters: names, identities: IDENTITIES }).then(
    (cp) => {
      write({ clusters: cp.clusters, runDir: cp.runDir });
      // The node suite's cluster DNS and NetworkPolicy agent, built once Kubernetes is (a cold build of both at once
      // only thrashes two cores); the suite waits on the same build lock. A failure is the suite's to report.
      void ensureCoreDns()
        .then(() => ensureNetworkPolicies())
        .catch(() => undefined);
      return cp;
    },
    (err: unknown) => {
      write({ error: err instanceof Error ? (err.stack ?? err.message) : String(err) });
      return undefined;
    },
  );
  return async () => {
    const cp = await starting;
    await slots.close();
    await pods.close();
    await cp?.stop();
    rmSync(dir, { recursive: true, force: true });
  };
}
