/** The composition function's program, as synth bundles it and its image runs it (lib/deployable.ts). */
import type { Deployable } from '../../../lib/deployable';

/**
 * The function's runtime, measured by bench/function (docs/decisions/function-performance.md): a young generation of
 * 1 MiB semi-spaces (Node 24's default grows to 3 x 16 MiB for a process whose live data is a few MiB), the old
 * generation held to 64 MiB (V8 sizes its heap growth by it; the live data of 16 calls in flight is under 10 MiB),
 * one V8 worker thread and no concurrent recompilation (the container gets one core), no Maglev (hot code goes from
 * Sparkplug straight to Turbofan: 1 MiB less of V8's code paged in, and no more CPU per call), and one malloc arena.
 */
export const FUNCTION_RUNTIME = {
  nodeOptions: ['--max-semi-space-size=1', '--max-old-space-size=64', '--v8-pool-size=1', '--no-concurrent-recompilation', '--no-maglev'],
  env: { MALLOC_ARENA_MAX: '1' },
} as const;

export const FUNCTION_DEPLOYABLE: Deployable = {
  name: 'function',
  entry: 'functions/dataservices/main.ts',
  description: 'the composition function',
  ports: [
    { port: 9443, serves: 'gRPC with mTLS from /tls/server (mounted by Crossplane)' },
    { port: 8080, serves: '/healthz and /metrics' },
  ],
  runtime: FUNCTION_RUNTIME,
  // The SDK names grpc-js for a client the function never makes; grpc-server.ts serves.
  replace: { '@grpc/grpc-js': 'functions/dataservices/grpc-js-unused.ts' },
};
