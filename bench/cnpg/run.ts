/**
 * bench/cnpg: how long a cnpg PostgresqlInstance takes to become a database, beside CloudNativePG's own time to a
 * healthy Cluster measured in the same run (issue 20). Two modes, BENCH_CNPG_MODE:
 * - `app-cluster` (default; app-cluster.ts): the sandbox's platform, claims and ServiceBindings created in the app
 *   cluster, connections from a Pod of the app cluster with `<binding>-creds`; writes bench/results/cnpg.json;
 * - `control-plane` (control-plane.ts): claims on a control plane alone, connections from its node; lighter; writes
 *   bench/results/cnpg-control-plane.json.
 * BENCH_CLAIMS (default 10) claims, BENCH_PARALLEL (default 2: the node's 2 cores hold that many PostgreSQL instances
 * coming up without starving each other) at a time. App-cluster mode only: BENCH_CROSSPLANE (v1 or v2, the package
 * target, default v1), BENCH_DIR (keep the sandbox's logs there; default a temporary folder, removed).
 */
import { join } from 'node:path';
import { benchFromAppCluster } from './app-cluster';
import { benchOnControlPlane } from './control-plane';

const log = (line: string) => process.stderr.write(`[bench/cnpg] ${line}\n`);
const results = join(process.cwd(), 'bench', 'results');

function count(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = Number(raw ?? fallback);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name}=${raw} is not a positive whole number of claims; unset it or give one (e.g. 10)`);
  return n;
}

const mode = process.env.BENCH_CNPG_MODE ?? 'app-cluster';
const crossplane = process.env.BENCH_CROSSPLANE ?? 'v1';
try {
  const claims = count('BENCH_CLAIMS', 10);
  const parallel = count('BENCH_PARALLEL', 2);
  if (mode === 'app-cluster') {
    if (crossplane !== 'v1' && crossplane !== 'v2') throw new Error(`BENCH_CROSSPLANE=${crossplane}: the package target is v1 or v2`);
    await benchFromAppCluster({
      claims,
      parallel,
      crossplane,
      ...(process.env.BENCH_DIR ? { dir: process.env.BENCH_DIR } : {}),
      resultFile: join(results, 'cnpg.json'),
      log,
    });
  } else if (mode === 'control-plane') {
    await benchOnControlPlane({ claims, parallel, resultFile: join(results, 'cnpg-control-plane.json'), log });
  } else throw new Error(`BENCH_CNPG_MODE=${mode}: choose app-cluster (the default) or control-plane`);
  // Everything started is stopped; a handle a client library keeps must not hold the bench open.
  process.exit(0);
} catch (e) {
  log(e instanceof Error ? e.message : String(e));
  process.exit(1);
}
