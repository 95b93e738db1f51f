/** Where the test tools (crank, Kubernetes binaries) are cached between runs: one folder per tool and version. */
export { cacheRoot } from '../../scripts/cache-root.mjs';
