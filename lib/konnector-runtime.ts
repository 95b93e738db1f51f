/**
 * How the konnector's node runs, wherever a Deployment of it is written: the Konnector construct
 * (konnector/deploy/konnector.ts) and the bind backend's AppClusterBinding controller, which writes one per app
 * cluster on the control plane. Here because both import lib/ and neither may import the other.
 */

/**
 * Node's heap settings for the konnector: a small young generation (V8 reserves up to 3 × 16 MiB by default, which
 * shows in RSS but buys a process that mostly waits on the network nothing), an old space below the memory limit,
 * and one V8 worker thread (the container gets one core; each thread's malloc arena and GC work showed in RSS).
 */
export const KONNECTOR_NODE_OPTIONS = '--max-semi-space-size=2 --max-old-space-size=256 --v8-pool-size=1';

/**
 * The konnector's runtime environment: NODE_OPTIONS and one malloc arena (glibc gives each thread that allocates an
 * arena of its own). With --v8-pool-size=1: peak RSS through bench/konnector's 1,000-claim phases 127 → 119 MiB
 * (docs/decisions/konnector-memory.md).
 */
export const KONNECTOR_RUNTIME_ENV: Readonly<Record<string, string>> = { NODE_OPTIONS: KONNECTOR_NODE_OPTIONS, MALLOC_ARENA_MAX: '1' };

/** The port of the konnector's probes and metrics (its `--probe-address` default), named in its probes and policies. */
export const KONNECTOR_PROBE_PORT = 8080;
