import { defineConfig } from 'vitest/config';

// Two projects: `unit` runs everything that needs no Kubernetes cluster and starts at once; `cluster` holds the
// suites under test/cluster/, which share real control planes. The cluster setup starts them in the background
// (building Kubernetes first on a new machine) while `unit` runs: groupOrder runs `unit` first, then `cluster`.
export default defineConfig({
  test: {
    // The real tools (crank, kube-apiserver) are built once by the global setups; later tests only wait on processes.
    testTimeout: 60_000,
    hookTimeout: 45 * 60_000,
    projects: [
      {
        extends: true,
        test: {
          name: 'unit',
          include: ['**/*.test.ts'],
          exclude: ['test/cluster/**', 'node_modules/**', 'dist/**'],
          globalSetup: ['test/support/tools.setup.ts'],
          sequence: { groupOrder: 0 },
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
        },
      },
    ],
  },
});
