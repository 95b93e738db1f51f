/**
 * The bench's gRPC load: bench/function/loadgen (a Go client on one connection, as Crossplane's function runner
 * calls a function), built into the cache keyed by its sources. A Node client could not drive a fast server: on a
 * shared 2-core machine grpc-js topped out near 1,200 calls/s while the server sat idle 70% of the time.
 */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { cacheRoot } from '../../harness/tools/cache';
import { goBuild, wrapperHash, wrapperModule } from '../../harness/tools/go';

const moduleDir = wrapperModule('bench/function/loadgen');

/** Path of the loadgen binary, building it first if needed. */
export function ensureLoadgen(): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: '.',
    out: join(cacheRoot(), `function-loadgen-${wrapperHash(moduleDir)}`, 'loadgen'),
    label: 'bench/function/loadgen',
    ldflags: '-s -w',
  });
}

export interface LoadResult {
  readonly calls: number;
  readonly wallMs: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
  readonly responseBytes: number;
}

/** Runs `calls` calls (after `warmup`) with `concurrency` in flight against an insecure function at `address`. */
export function runLoad(
  loadgen: string,
  o: { address: string; requestFile: string; concurrency: number; calls: number; warmup: number; cpus?: string },
): Promise<LoadResult> {
  const args = [
    '-addr',
    o.address,
    '-request',
    o.requestFile,
    '-concurrency',
    String(o.concurrency),
    '-calls',
    String(o.calls),
    '-warmup',
    String(o.warmup),
  ];
  const [cmd, argv] = o.cpus ? ['taskset', ['-c', o.cpus, loadgen, ...args]] : [loadgen, args];
  return new Promise((resolve, reject) => {
    const p = spawn(cmd as string, argv as string[], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    p.stdout.on('data', (d) => (out += String(d)));
    p.stderr.on('data', (d) => (err += String(d)));
    p.on('error', reject);
    p.on('exit', (code) =>
      code === 0 ? resolve(JSON.parse(out) as LoadResult) : reject(new Error(`loadgen exited with ${code}: ${err.trim()}`)),
    );
  });
}
