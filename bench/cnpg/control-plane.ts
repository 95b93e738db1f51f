/**
 * bench/cnpg on the control plane only (BENCH_CNPG_MODE=control-plane): how long a PostgresqlInstance on the cnpg
 * backend takes to become a database, beside the time CloudNativePG itself needs for its Cluster, measured in the same
 * run on the same parts as test/cluster/cnpg.test.ts (a control plane with a node, the operator from its manifests,
 * Crossplane with our packages); no app cluster, no konnector: lighter than the default mode (app-cluster.ts).
 *
 * For BENCH_CLAIMS claims (default 10), BENCH_PARALLEL at a time (default 2: the node's 2 cores hold that many
 * PostgreSQL instances coming up without starving each other), rows of p50 and p99:
 * - claim created → database accepting connections: from the claim's create request until PostgreSQL, reached through
 *   the instance's `<claim>-rw` Service from the node's network, answers a login with its authentication request (what
 *   `pg_isready` calls accepting connections);
 * - claim created → claim Ready;
 * - the operator's own time: the CNPG Cluster's creation (its first watch event) → the Cluster healthy (phase
 *   `Cluster in healthy state`, every instance ready);
 * - claim created → Cluster created (what Crossplane, our function and provider-kubernetes add before CNPG starts).
 * Measured on the control plane only: the connection comes from the control plane's node, not from an app cluster's
 * Pod.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { startCrossplane } from '../../harness/crossplane/crossplane';
import { apply } from '../../harness/cluster/kube';
import { eventually, getObject, kubeFor, requireOk, type WireObject } from '../../harness/cluster/kube';
import { installCnpg, localVolumes } from '../../harness/node/cnpg';
import { ensureCnpgOperatorImage, ensureCnpgPostgresImage } from '../../harness/node/cnpg-images';
import { startNode } from '../../harness/node/node';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { loadLine, row, sampleLoad, table, writeResult } from './report';
import { sleep } from '../../lib/abort';

const NS = 'bench';
const HEALTHY = 'Cluster in healthy state';

export interface ControlPlaneOptions {
  readonly claims: number;
  readonly parallel: number;
  readonly resultFile: string;
  readonly log: (line: string) => void;
}

/**
 * Whether PostgreSQL at 127.0.0.1:`port` accepts connections: a protocol 3.0 startup packet for user and database
 * `app` is answered with an authentication request ('R'); an error ('E': "the database system is starting up") or
 * a closed connection is not accepting.
 */
function accepting(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const params = Buffer.from('user\0app\0database\0app\0\0');
    const startup = Buffer.alloc(8 + params.length);
    startup.writeInt32BE(startup.length, 0);
    startup.writeInt32BE(196608, 4); // protocol 3.0
    params.copy(startup, 8);
    const s = connect({ host: '127.0.0.1', port }, () => s.write(startup));
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(2_000, () => done(false));
    s.once('data', (d) => done(d[0] === 0x52));
    s.once('error', () => done(false));
    s.once('close', () => done(false));
  });
}

export async function benchOnControlPlane(o: ControlPlaneOptions): Promise<void> {
  const { log, claims: N, parallel: PARALLEL } = o;
  const images = [await ensureCnpgOperatorImage(log), await ensureCnpgPostgresImage(log)];
  const cp = await startControlPlanes({ clusters: ['bench'], binary: kubeBinaryPath(), pods: true, log: () => undefined });
  const cluster = cp.clusters.bench!;
  const kube = kubeFor(cluster);
  const node = await startNode(cluster, { images, log: () => undefined });
  const volumes = mkdtempSync(join(node.runDir, 'volumes-'));
  let crossplane: Awaited<ReturnType<typeof startCrossplane>> | undefined;
  try {
    // One volume per claim: the harness's volumes are Retained, a released one is not bound again.
    await localVolumes(kube, volumes, N, '1Gi');
    // The packages from synth's own entry (this bench runs as a bundle, which cannot import the catalog's .ts files).
    [crossplane] = await Promise.all([startCrossplane(cluster, { log: () => undefined }), installCnpg(kube)]);
    await requireOk(kube, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });

    interface Sample {
      readonly name: string;
      readonly toAcceptingMs: number;
      readonly toClaimReadyMs: number;
      readonly toClusterMs: number;
      readonly operatorMs: number;
    }

    /** One claim, timed from its create request; polls every 100 ms (the rows' resolution). */
    async function one(name: string): Promise<Sample> {
      const t0 = performance.now();
      await apply(kube, {
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: { name, namespace: NS },
        spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-nano', compositionRef: { name: 'cnpg-postgresql' } },
      });
      let clusterAt: number | undefined;
      let healthyAt: number | undefined;
      let readyAt: number | undefined;
      let acceptingAt: number | undefined;
      let forward: Awaited<ReturnType<typeof node.forward>> | undefined;
      try {
        const deadline = t0 + 600_000;
        while (acceptingAt === undefined || healthyAt === undefined || readyAt === undefined) {
          if (performance.now() > deadline) throw new Error(`bench/cnpg: ${name} not a database after 600 s`);
          const now = performance.now();
          const [c, claim] = await Promise.all([
            getObject(kube, `/apis/postgresql.cnpg.io/v1/namespaces/${NS}/clusters/${name}`),
            readyAt === undefined ? getObject(kube, `/apis/anynines.com/v1/namespaces/${NS}/postgresqlinstances/${name}`) : undefined,
          ]);
          if (c && clusterAt === undefined) clusterAt = now;
          if (c?.status?.phase === HEALTHY && c.status.readyInstances === c.spec.instances) healthyAt ??= now;
          if ((claim?.status?.conditions ?? []).some((x: WireObject) => x.type === 'Ready' && x.status === 'True')) readyAt ??= now;
          if (acceptingAt === undefined) {
            // The instance's read-write Service, once CNPG made it: forwarded from the host into the node.
            if (!forward) {
              const svc = await getObject(kube, `/api/v1/namespaces/${NS}/services/${name}-rw`);
              if (svc?.spec?.clusterIP) forward = await node.forward(svc.spec.clusterIP, 5432);
            }
            if (forward && (await accepting(forward.port))) acceptingAt = performance.now();
          }
          await sleep(100);
        }
      } finally {
        await forward?.close();
      }
      return {
        name,
        toAcceptingMs: acceptingAt! - t0,
        toClaimReadyMs: readyAt! - t0,
        toClusterMs: (clusterAt ?? t0) - t0,
        operatorMs: healthyAt! - (clusterAt ?? t0),
      };
    }

    const samples: Sample[] = [];
    const names = Array.from({ length: N }, (_, i) => `pg-${i}`);
    const load = sampleLoad();
    const started = performance.now();
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        for (let name = names.shift(); name; name = names.shift()) {
          const s = await one(name);
          samples.push(s);
          log(`${name}: accepting after ${(s.toAcceptingMs / 1000).toFixed(1)} s, operator ${(s.operatorMs / 1000).toFixed(1)} s`);
          // Deleted at once: its Cluster, Pod and PVC go (its volume is Retained, so every claim has one of its own).
          await requireOk(kube, 'DELETE', `/apis/anynines.com/v1/namespaces/${NS}/postgresqlinstances/${name}`);
        }
      }),
    );
    const totalMs = performance.now() - started;
    const loadAverage = load.stop();
    await eventually(
      'every bench claim gone',
      async () => {
        const list = await requireOk(kube, 'GET', `/apis/anynines.com/v1/namespaces/${NS}/postgresqlinstances`);
        return (list.items as unknown[]).length === 0 ? true : undefined;
      },
      300_000,
    );

    const rows = [
      row(
        'claim created → database accepting connections',
        samples.map((s) => s.toAcceptingMs),
      ),
      row(
        'claim created → claim Ready',
        samples.map((s) => s.toClaimReadyMs),
      ),
      row(
        "operator's own: Cluster created → Cluster healthy",
        samples.map((s) => s.operatorMs),
      ),
      row(
        'claim created → Cluster created',
        samples.map((s) => s.toClusterMs),
      ),
    ];
    console.log(`\n${table(rows)}`);
    console.log(`${N} claims, ${PARALLEL} at a time, in ${(totalMs / 1000).toFixed(0)} s; ${loadLine(loadAverage)}`);
    console.log(
      "note: measured on the control plane only: the connection is made from the control plane's node through the claim's -rw Service, not from an app cluster's Pod",
    );
    writeResult(o.resultFile, {
      mode: 'control-plane',
      claims: N,
      parallel: PARALLEL,
      plan: 'postgresql-single-nano',
      where: 'control plane only: connections from its node through <claim>-rw, not from an app cluster',
      rows,
      totalMs,
      loadAverage,
      samples,
    });
    log(`wrote ${o.resultFile}`);
  } finally {
    await crossplane?.stop();
    await node.stop();
    await cp.stop();
    rmSync(volumes, { recursive: true, force: true });
  }
}
