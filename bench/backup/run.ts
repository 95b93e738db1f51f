/**
 * bench/backup (issue 35, item 6): what the cnpg backend's backups cost on this machine, each beside its physical
 * limit measured in the same run. On a control plane with a node (the parts of test/cluster/object-store.test.ts):
 * CloudNativePG, the platform's object store (versitygw) with a tenant, and a Cluster composed by the function for
 * an offering with that store. The database is filled with BENCH_BACKUP_MIB MiB (default 1024) of rows that do not
 * compress, then:
 * - plain copy: the same number of bytes written to the tenant's bucket and read back by an S3 client of this
 *   process (the AWS SDK through the node's forward): the store's and the network's limit here;
 * - backup: a CNPG Backup (Barman Cloud, gzip) from its create to `completed`, and its throughput;
 * - restore: a new Cluster recovering from that backup and the WAL archived after it, from its create to healthy;
 * - the load's WAL: how long after the load the archive caught up (Barman Cloud archives one segment at a time), which
 *   the backup then does not wait for;
 * - WAL archive lag: under a steady write load for BENCH_WAL_SECONDS (default 60), each WAL segment's time from being
 *   closed (the server moved past it) to archived (pg_stat_archiver), sampled every second: p50 and p99.
 * BENCH_BACKUP_COMPRESSION (gzip, what the backend composes; bzip2; none) sets Barman Cloud's compression,
 * BENCH_BACKUP_JOBS CNPG's `data.jobs` (a base backup's upload and download processes; Barman's default 2) and
 * BENCH_WAL_PARALLEL its `wal.maxParallel` (WAL segments archived and restored at once; CNPG's default 1).
 * Goals: backup and restore within 2x of the plain copy. Not measured here: a Backup claim's time from the app
 * cluster (the sandbox's platform: bench/cnpg's app-cluster mode is the model). Writes bench/results/backup.json.
 */
import { GetObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { apply } from '../../harness/cluster/kube';
import { startControlPlanes } from '../../harness/cluster/control-plane';
import { eventually, getObject, kubeFor, requireOk } from '../../harness/cluster/kube';
import { installCnpg, localVolumes } from '../../harness/node/cnpg';
import { ensureCnpgOperatorImage, ensureCnpgPostgresImage, CNPG_POSTGRESQL_IMAGE } from '../../harness/node/cnpg-images';
import { asSuperuserAsync } from '../../harness/node/cnpg-sql';
import { startNode } from '../../harness/node/node';
import { deployObjectStore, storeClient } from '../../harness/platform/object-store';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { BACKUP_STORE_KEYS, DEFAULT_BACKUP_SECRET } from '../../backends/cnpg-backup';
import { sleep } from '../../lib/abort';
import { percentile } from '../measure';
import { composedCluster } from '../../test/support/cnpg-backup';
import { sampleLoad, writeResult } from '../cnpg/report';

const NS = 'bench-backup';
const HEALTHY = 'Cluster in healthy state';
const log = (line: string) => process.stderr.write(`[bench/backup] ${line}\n`);

function positive(name: string, fallback: number): number {
  const raw = process.env[name];
  const n = Number(raw ?? fallback);
  if (!Number.isInteger(n) || n < 1)
    throw new Error(`${name}=${raw} is not a positive whole number; unset it or give one (e.g. ${fallback})`);
  return n;
}

const MIB = positive('BENCH_BACKUP_MIB', 1024);
/** Barman Cloud's compression of base backups and WAL: the backend composes gzip; `none` measures what it costs. */
const COMPRESSION = process.env.BENCH_BACKUP_COMPRESSION ?? 'gzip';
if (!['gzip', 'bzip2', 'none'].includes(COMPRESSION))
  throw new Error(
    `BENCH_BACKUP_COMPRESSION=${COMPRESSION}: choose gzip (what the backend composes), bzip2 or none (snappy: Debian 12's python3-snappy fails on its Python 3.11)`,
  );
/** CNPG's `data.jobs` (Barman Cloud's upload and download processes of a base backup) and `wal.maxParallel`. */
const JOBS = process.env.BENCH_BACKUP_JOBS ? positive('BENCH_BACKUP_JOBS', 2) : undefined;
const WAL_PARALLEL = process.env.BENCH_WAL_PARALLEL ? positive('BENCH_WAL_PARALLEL', 1) : undefined;
const WAL_SECONDS = positive('BENCH_WAL_SECONDS', 60);
const resultFile = join(process.cwd(), 'bench', 'results', 'backup.json');

const clusterPath = (name: string) => `/apis/postgresql.cnpg.io/v1/namespaces/${NS}/clusters/${name}`;
const mibps = (bytes: number, ms: number) => bytes / 2 ** 20 / (ms / 1000);

async function healthy(name: string, timeoutMs: number): Promise<void> {
  await eventually(
    `Cluster ${name} healthy`,
    async () => ((await getObject(kubeOf(), clusterPath(name)))?.status?.phase === HEALTHY ? true : undefined),
    timeoutMs,
  );
}

let kubeOf: () => ReturnType<typeof kubeFor>;

async function main(): Promise<void> {
  const images = [await ensureCnpgOperatorImage(log), await ensureCnpgPostgresImage(log)];
  const cp = await startControlPlanes({ clusters: ['bench'], binary: kubeBinaryPath(), pods: true, log: () => undefined });
  const cluster = cp.clusters.bench!;
  const kube = kubeFor(cluster);
  kubeOf = () => kube;
  const node = await startNode(cluster, { images, log: () => undefined });
  const volumes = mkdtempSync(join(node.runDir, 'volumes-'));
  try {
    await localVolumes(kube, volumes, 2, `${Math.ceil((MIB * 3) / 1024)}Gi`);
    await installCnpg(kube);
    const store = await deployObjectStore(kube, node, { log });
    await requireOk(kube, 'POST', '/api/v1/namespaces', { metadata: { name: NS } });
    const tenant = await store.addTenant(`klutch-${NS}`);
    await apply(kube, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: DEFAULT_BACKUP_SECRET, namespace: NS },
      stringData: {
        [BACKUP_STORE_KEYS.accessKeyId]: tenant.accessKeyId,
        [BACKUP_STORE_KEYS.secretAccessKey]: tenant.secretAccessKey,
        [BACKUP_STORE_KEYS.ca]: store.ca,
      },
    });
    const storage = { size: `${Math.ceil((MIB * 3) / 1024)}Gi` };
    const source = composedCluster(store.endpoint, NS, 'pg');
    for (const part of ['data', 'wal'] as const) {
      if (COMPRESSION === 'none') delete source.backup.barmanObjectStore[part].compression;
      else source.backup.barmanObjectStore[part].compression = COMPRESSION;
    }
    if (JOBS) source.backup.barmanObjectStore.data.jobs = JOBS;
    if (WAL_PARALLEL) source.backup.barmanObjectStore.wal.maxParallel = WAL_PARALLEL;
    await apply(kube, {
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: { name: 'pg', namespace: NS },
      spec: { instances: 1, imageName: CNPG_POSTGRESQL_IMAGE, storage, bootstrap: source.bootstrap, backup: source.backup },
    });
    await healthy('pg', 600_000);
    const sql = (q: string, timeoutMs?: number) => asSuperuserAsync(q, NS, 'pg-1', timeoutMs);

    // Rows of 1 KiB that gzip cannot shrink much: md5 of random values, hex.
    log(`filling the database with ${MIB} MiB ...`);
    let t = performance.now();
    await sql('CREATE TABLE load (id bigint, pad text)');
    const perBatch = 64 * 1024; // rows of ~1 KiB: 64 MiB a statement
    for (let done = 0; done < MIB * 1024; done += perBatch) {
      const n = Math.min(perBatch, MIB * 1024 - done);
      await sql(
        `INSERT INTO load SELECT g, (SELECT string_agg(md5(random()::text || g || i), '') FROM generate_series(1, 31) i) FROM generate_series(${done + 1}, ${done + n}) g`,
      );
    }
    const bytes = Number(await sql("SELECT pg_database_size('app')"));
    log(`database app: ${(bytes / 2 ** 20).toFixed(0)} MiB in ${((performance.now() - t) / 1000).toFixed(0)} s`);
    await sql('CHECKPOINT');
    // The load's WAL is archived one segment at a time: a backup started now would wait for that backlog first.
    t = performance.now();
    const last = await sql('SELECT pg_walfile_name(pg_switch_wal())');
    await eventually(
      `WAL segment ${last} archived`,
      async () => ((await sql('SELECT last_archived_wal FROM pg_stat_archiver')) >= last ? true : undefined),
      60 * 60_000,
    );
    const catchUpMs = performance.now() - t;
    log(`the load's WAL archived ${(catchUpMs / 1000).toFixed(0)} s after the load ended`);

    const load = sampleLoad();
    // Plain copy: the same number of bytes to the bucket and back, by this process's S3 client.
    const client = storeClient(store, tenant);
    const blob = Buffer.alloc(bytes);
    for (let i = 0; i < blob.length; i += 1 << 20) blob.fill(Math.random().toString(36), i, Math.min(blob.length, i + (1 << 20)));
    t = performance.now();
    await client.send(new PutObjectCommand({ Bucket: tenant.bucket, Key: 'bench/plain', Body: blob }));
    const plainUpMs = performance.now() - t;
    t = performance.now();
    const got = await client.send(new GetObjectCommand({ Bucket: tenant.bucket, Key: 'bench/plain' }));
    let read = 0;
    for await (const chunk of got.Body as AsyncIterable<Uint8Array>) read += chunk.length;
    const plainDownMs = performance.now() - t;
    if (read !== bytes) throw new Error(`plain copy read back ${read} of ${bytes} bytes`);
    log(`plain copy: up ${mibps(bytes, plainUpMs).toFixed(1)} MiB/s, down ${mibps(bytes, plainDownMs).toFixed(1)} MiB/s`);

    // Backup: CNPG's Backup from its create to completed.
    t = performance.now();
    await apply(kube, {
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Backup',
      metadata: { name: 'full', namespace: NS },
      spec: { cluster: { name: 'pg' }, method: 'barmanObjectStore' },
    });
    const backup = await eventually(
      'the Backup completed',
      async () => {
        const b = await getObject(kube, `/apis/postgresql.cnpg.io/v1/namespaces/${NS}/backups/full`);
        return ['completed', 'failed'].includes(b?.status?.phase) ? b : undefined;
      },
      60 * 60_000,
    );
    if (backup.status.phase === 'failed') throw new Error(`the Backup failed: ${backup.status.error}`);
    const backupMs = performance.now() - t;
    log(`backup: ${(backupMs / 1000).toFixed(1)} s, ${mibps(bytes, backupMs).toFixed(1)} MiB/s (${backup.status.backupId})`);

    // WAL archive lag under a steady write load: ~4 MiB/s, so a 16 MiB segment closes every few seconds.
    const seen = new Map<string, { closed?: number; archived?: number }>();
    const writing = sql(
      `DO $$ BEGIN FOR i IN 1..${WAL_SECONDS} LOOP INSERT INTO load SELECT g, repeat(md5(random()::text), 31) FROM generate_series(1, 4096) g; COMMIT; PERFORM pg_sleep(0.9); END LOOP; END $$`,
      (WAL_SECONDS + 120) * 1000,
    );
    let writingDone = false;
    void writing.finally(() => (writingDone = true));
    while (!writingDone) {
      const now = performance.now();
      const [current = '', archived = ''] = (
        await sql('SELECT pg_walfile_name(pg_current_wal_lsn()), last_archived_wal FROM pg_stat_archiver')
      ).split('|');
      for (const [segment, s] of seen) {
        if (s.closed === undefined && segment < current) s.closed = now;
        if (s.archived === undefined && segment <= archived) s.archived = now;
      }
      if (!seen.has(current)) seen.set(current, {});
      await sleep(1000);
    }
    await writing;
    const lags = [...seen.values()].flatMap((s) =>
      s.closed !== undefined && s.archived !== undefined ? [Math.max(0, s.archived - s.closed)] : [],
    );
    log(`WAL: ${lags.length} segments closed and archived under load`);

    // Restore: a new Cluster recovering from the backup, from its create to healthy.
    const restored = composedCluster(store.endpoint, NS, 'pg-restored', { restoreFrom: { instance: 'pg' } });
    t = performance.now();
    await apply(kube, {
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Cluster',
      metadata: { name: 'pg-restored', namespace: NS },
      spec: {
        instances: 1,
        imageName: CNPG_POSTGRESQL_IMAGE,
        storage,
        bootstrap: restored.bootstrap,
        externalClusters: WAL_PARALLEL
          ? restored.externalClusters.map((c: any) => ({
              ...c,
              barmanObjectStore: { ...c.barmanObjectStore, wal: { maxParallel: WAL_PARALLEL } },
            }))
          : restored.externalClusters,
      },
    });
    await healthy('pg-restored', 60 * 60_000);
    const restoreMs = performance.now() - t;
    log(`restore: ${(restoreMs / 1000).toFixed(1)} s, ${mibps(bytes, restoreMs).toFixed(1)} MiB/s`);
    const loadAverage = load.stop();

    const rows = [
      { what: 'plain copy to the store (S3 client)', seconds: plainUpMs / 1000, mibPerSecond: mibps(bytes, plainUpMs) },
      { what: 'plain copy from the store (S3 client)', seconds: plainDownMs / 1000, mibPerSecond: mibps(bytes, plainDownMs) },
      { what: 'backup: CNPG Backup created → completed', seconds: backupMs / 1000, mibPerSecond: mibps(bytes, backupMs) },
      { what: 'restore: new Cluster created → healthy', seconds: restoreMs / 1000, mibPerSecond: mibps(bytes, restoreMs) },
    ];
    const width = Math.max(...rows.map((r) => r.what.length));
    console.log(`\n${'what'.padEnd(width)} ${'seconds'.padStart(8)} ${'MiB/s'.padStart(7)}`);
    for (const r of rows)
      console.log(`${r.what.padEnd(width)} ${r.seconds.toFixed(1).padStart(8)} ${r.mibPerSecond.toFixed(1).padStart(7)}`);
    console.log(
      `the load's WAL (${(bytes / 2 ** 20).toFixed(0)} MiB of rows) still being archived when the load ended: ${(catchUpMs / 1000).toFixed(1)} s to catch up`,
    );
    const ratio = { backup: backupMs / plainUpMs, restore: restoreMs / plainDownMs };
    console.log(
      `${(bytes / 2 ** 20).toFixed(0)} MiB database; backup ${ratio.backup.toFixed(2)}x the plain copy up, restore ${ratio.restore.toFixed(2)}x the plain copy down (goal: within 2x)`,
    );
    const lag = { n: lags.length, p50Ms: percentile(lags, 50), p99Ms: percentile(lags, 99) };
    console.log(
      `WAL archive lag under ~4 MiB/s of writes: ${lag.n} segments, p50 ${(lag.p50Ms / 1000).toFixed(1)} s, p99 ${(lag.p99Ms / 1000).toFixed(1)} s`,
    );
    console.log(
      `compression ${COMPRESSION}, data.jobs ${JOBS ?? 'default'}, wal.maxParallel ${WAL_PARALLEL ?? 'default'}; load average (1 min) from the plain copy to the restore: ${loadAverage.min}–${loadAverage.max}, median ${loadAverage.p50}`,
    );
    writeResult(resultFile, {
      databaseBytes: bytes,
      compression: COMPRESSION,
      ...(JOBS ? { jobs: JOBS } : {}),
      ...(WAL_PARALLEL ? { walMaxParallel: WAL_PARALLEL } : {}),
      rows,
      ratio,
      walArchiveLag: lag,
      walSeconds: WAL_SECONDS,
      loadAverage,
    });
    log(`wrote ${resultFile}`);
  } finally {
    await node.stop();
    await cp.stop();
    rmSync(volumes, { recursive: true, force: true });
  }
}

try {
  await main();
  process.exit(0);
} catch (e) {
  log(e instanceof Error ? (e.stack ?? e.message) : String(e));
  process.exit(1);
}
