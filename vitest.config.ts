import { defineConfig } from 'vitest/config';
import { ChainFirstSequencer } from './test/support/sequencer.ts';

// Two projects: `unit` runs everything that needs no Kubernetes cluster and starts at once; `cluster` holds the
// suites under test/cluster/, which share real control planes. The cluster setup starts them in the background
// (building Kubernetes first on a new machine) while `unit` runs: groupOrder runs `unit` first, then `cluster`.
//
// Workers: vitest's default is one less than the cores, which is one on a 2-core CI machine, so every file would
// run after the other. Unit files are CPU-bound: two at once. Cluster files mostly wait on API servers, leases,
// token caches and provider polls. Four at once: since the Pod suites share one platform and the process-based
// Crossplane suite is gone, a run uses about 12 CPU-minutes in 8 minutes with three workers (1.45 of 2 cores busy,
// every worker waiting); four took 7m33s at the same CPU (stop 30). Before that, four oversubscribed the cores.
export default defineConfig({
  test: {
    // The real tools (crank, kube-apiserver) are built once by the global setups; later tests only wait on processes.
    testTimeout: 60_000,
    hookTimeout: 45 * 60_000,
    // A worker keeps the modules it imported for its next file: @kubernetes/client-node alone is thousands of
    // modules, and importing it again per file cost more CPU than some suites. No suite mocks modules or keeps
    // global state across files (cluster.ts memoises only the worker's own clusters).
    isolate: false,
    // No experimental.fsModuleCache: with it, vite keeps a module's code as a Buffer and its stack-trace mapping
    // crashes the main process on the first error it maps (docs/decisions/unit-run-cost.md).
    // The Pod platform's chain files first (test/support/sequencer.ts): they bound the run.
    sequence: { sequencer: ChainFirstSequencer },
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: ['test/cluster/**', 'node_modules/**', 'dist/**'],
          globalSetup: ['test/support/tools.setup.ts'],
          sequence: { groupOrder: 0 },
          maxWorkers: 2,
        },
      },
      {
        extends: true,
        test: {
          name: 'cluster',
          include: ['test/cluster/**/*.test.ts'],
          globalSetup: ['test/support/cluster.setup.ts'],
          setupFiles: ['test/support/cluster.each.ts'],
          sequence: { groupOrder: 1 },
          // Three: on a new machine of this kind a run with four took 19 minutes, its Pods starved of CPU (a kubelet's
          // housekeeping took 24 s, probes timed out): the Pod files' waits failed, not their logic (issue 43).
          maxWorkers: 3,
        },
      },
    ],
  },
});
