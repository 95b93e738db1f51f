/**
 * The platform's object store (issue 35, harness/platform/object-store.ts): the Versity S3 Gateway as a Pod on the
 * shared Pod platform's control plane, with a user and a bucket per tenant, which the bind backend makes for each
 * provider namespace (backend/backup-store/, its `--backup-store-*` flags). What backups rely on: an S3 client with a
 * tenant's keys writes and reads its bucket over TLS of the store's CA; the same client with another tenant's keys,
 * with wrong keys or with none can neither read, list, write, delete nor re-grant that bucket, nor make one of its
 * own; the objects and the users survive the store's Pod being replaced (a store of this file's own, and a backend of
 * its own that makes its tenants). Then backups as an app team takes them, in the app cluster of the shared platform,
 * through the konnector, Crossplane and the cnpg backend (backends/cnpg-backup.ts) to CloudNativePG and the store the
 * sandbox runs: a `Backup` claim of the sandbox's instance ends Ready there with CNPG's completed backup, its WAL
 * archived all along; beside it a new instance claim takes its first backup, and once it is deleted, a new one with
 * `restoreFrom` it and a point in time T recovers from its kept backups exactly the rows written before T, while a new
 * instance under the deleted one's name says on its claim that it cannot archive there, and what to do.
 */
import {
  CreateBucketCommand,
  DeleteObjectCommand,
  GetObjectCommand,
  ListBucketsCommand,
  ListObjectsV2Command,
  PutBucketAclCommand,
  PutBucketPolicyCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { mkdtempSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BACKUP_STORE_KEYS, DEFAULT_BACKUP_SECRET } from '../../backends/cnpg-backup';
import { condition, createWhenServed, eventually, getObject, type Kube, requireOk, type WireObject } from '../../harness/cluster/kube';
import type { AttachedNode } from '../../harness/node/attach';
import { localVolumes } from '../../harness/node/cnpg';
import { psqlClientPod } from '../../harness/node/cnpg-images';
import { asSuperuser } from '../../harness/node/cnpg-sql';
import { sleep } from '../../lib/abort';
import {
  deployObjectStore,
  OBJECT_STORE_NAMESPACE,
  type ObjectStore,
  storeClient,
  type TenantBucket,
} from '../../harness/platform/object-store';
import { listPods, podLogTail } from '../../harness/platform/pods';
import { holdV1, podControlPlane, podPlatform } from '../support/platform/pod-platform';
import { runPodToEnd } from '../support/run-pod';
import postgresql from '../../apis/catalog/postgresql';
import { TENANT_ANNOTATION, tenantAccessKey } from '../../backend/backup-store/tenant';
import { sweepBackups } from '../../backend/backup-store/janitor';
import { storeObjects } from '../../backend/backup-store/objects';
import { storeAdmin } from '../../backend/backup-store/versitygw';
import { sweepDeps } from '../../backend/controllers/backup-sweep.controller';
import { backendClients } from '../../backend/kube';
import { serviceNamespaceName } from '../../backend/controllers/service-namespace.reconcile';
import { BIND_API_VERSION, Kinds } from '../../exports/bind-api';
import { launchBackendBundle } from '../../harness/parts/bind-backend';
import { freePorts, probe, type Proc, waitReady } from '../../harness/cluster/processes';

const NS = 'object-store-suite';
/** A bind backend of this file's own makes backup tenants for its provider namespaces (its prefix: no other's). */
const PREFIX = 'obs';
const BACKEND_NS = 'obs-backend';
/** A consumer's cluster namespace, as a bind makes it, and its APIServiceNamespace `a`. */
const CLUSTER_NS = 'obs-team';
/** team-a's provider namespace (`<cluster ns>-<name>`): its PostgreSQL, backed up into its bucket. */
const PG_NS = serviceNamespaceName(CLUSTER_NS, 'a');
const SERVICE_NAMESPACE = `/apis/${BIND_API_VERSION}/namespaces/${CLUSTER_NS}/apiservicenamespaces/a`;
const log = (line: string) => process.stderr.write(`[klutch-kit] ${line}\n`);

let kube: Kube;
let node: AttachedNode;
let pvs: string[] = [];
let release: (() => void) | undefined;
let backend: Proc | undefined;
let store: ObjectStore;
let teamA: TenantBucket;
let teamB: TenantBucket;
let a: S3Client;
let b: S3Client;

beforeAll(async () => {
  // Its claim is the default package's: the package move of crossplane-v2-native waits until it is gone (dropClaim).
  release = await holdV1('test/cluster/object-store.test.ts');
  const platform = await podControlPlane();
  kube = platform.control;
  node = platform.node;
  const t = Date.now();
  store = await deployObjectStore(kube, platform.node, { namespace: NS, log });
  teamB = await store.addTenant('team-b-backups');
  log(`object store: versitygw Ready in ${((Date.now() - t) / 1000).toFixed(1)} s`);
  backend = await startTenantBackend(platform.kubeconfig);
  // team-a's provider namespace as a bind makes it: the backend makes its tenant, its bucket the one the cnpg backend
  // names for it (backends/cnpg-backup.ts, `klutch-%s` of the claim's namespace).
  await requireOk(kube, 'POST', '/api/v1/namespaces', { metadata: { name: CLUSTER_NS } });
  await requireOk(kube, 'POST', `/apis/${BIND_API_VERSION}/namespaces/${CLUSTER_NS}/apiservicenamespaces`, {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceNamespace,
    metadata: { name: 'a' },
    spec: {},
  });
  teamA = await tenantOf(PG_NS);
  log(`object store: the backend made ${PG_NS}'s tenant ${((Date.now() - t) / 1000).toFixed(1)} s after the store was asked for`);
  a = storeClient(store, teamA);
  b = storeClient(store, teamB);
}, 15 * 60_000);

/** The bind backend as its Deployment runs it in control-plane mode, with the store's admin keys from the environment. */
async function startTenantBackend(kubeconfig: string): Promise<Proc> {
  const logDir = mkdtempSync(join(node.runDir, 'backend-backup-tenants-'));
  const [port] = await freePorts(1);
  const proc = await launchBackendBundle({
    args: [
      '--control-plane-mode',
      `--namespace-prefix=${PREFIX}`,
      `--namespace=${BACKEND_NS}`,
      `--kubeconfig=${kubeconfig}`,
      '--leader-election=false',
      `--probe-address=127.0.0.1:${port}`,
      `--backup-store-endpoint=${store.endpointFromHost}`,
      `--backup-store-ca-file=${store.caFile}`,
    ],
    env: {
      PATH: process.env.PATH,
      BACKEND_BACKUP_STORE_ADMIN_ACCESS_KEY: store.admin.accessKeyId,
      BACKEND_BACKUP_STORE_ADMIN_SECRET_KEY: store.admin.secretAccessKey,
    },
    logDir,
    role: 'backend-backup-tenants',
  });
  await waitReady(proc, () => probe(`http://127.0.0.1:${port}/readyz`).then((r) => r.code === 200), 60_000);
  return proc;
}

/** The keys of the tenant Secret the backend keeps in `ns`, once it is there (and its namespace marked done). */
async function tenantOf(ns: string, not?: TenantBucket): Promise<TenantBucket> {
  return eventually(
    `the backend's backup tenant Secret in ${ns}`,
    async () => {
      const n = await getObject(kube, `/api/v1/namespaces/${ns}`);
      const s = await getObject(kube, `/api/v1/namespaces/${ns}/secrets/${DEFAULT_BACKUP_SECRET}`);
      if (!n?.metadata?.annotations?.[TENANT_ANNOTATION] || !s?.data) return undefined;
      const read = (k: string) => Buffer.from(s.data[k] ?? '', 'base64').toString();
      const keys = {
        bucket: `klutch-${ns}`,
        accessKeyId: read(BACKUP_STORE_KEYS.accessKeyId),
        secretAccessKey: read(BACKUP_STORE_KEYS.secretAccessKey),
      };
      expect(n.metadata.annotations[TENANT_ANNOTATION]).toBe(keys.accessKeyId);
      expect(read(BACKUP_STORE_KEYS.ca)).toBe(store.ca);
      return not && keys.secretAccessKey === not.secretAccessKey ? undefined : keys;
    },
    120_000,
  );
}

afterAll(async () => {
  try {
    // The backend first: it would make the provider namespace again while its APIServiceNamespace is there.
    await backend?.stop(15_000);
    if (!kube) return;
    // The claims first (if a test failed before it dropped them), so that Crossplane removes what it composed.
    if (release) await dropClaims();
    for (const ns of [PG_NS, CLUSTER_NS, BACKEND_NS]) await kube.request('DELETE', `/api/v1/namespaces/${ns}`);
    for (const pv of pvs) await kube.request('DELETE', `/api/v1/persistentvolumes/${pv}`);
    await store?.remove();
  } finally {
    release?.();
  }
}, 10 * 60_000);

/** The S3 error's code (AccessDenied, SignatureDoesNotMatch, ...), or `ok` when the call succeeded. */
async function outcome(p: Promise<unknown>): Promise<string> {
  try {
    await p;
    return 'ok';
  } catch (e) {
    return (e as Error).name;
  }
}

async function text(client: S3Client, bucket: string, key: string): Promise<string> {
  const r = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
  return (await r.Body?.transformToString()) ?? '';
}

/** The app team's claims, in the shared platform's app cluster (the sandbox's namespace there). */
const APP_NS = 'default';
const INSTANCE = 'obs-orders';
const RESTORED = 'obs-orders-restored';
/** A restore to a point before the source's first backup: outside its recoverable window. */
const TOO_EARLY = 'obs-orders-too-early';
/** A binding of INSTANCE: its role, with its password, is in every backup of it, and so in RESTORED's database. */
const SOURCE_BINDING = 'obs-orders-app';
/** The restored instance's bindings (the in-place restore): one kept, one deleted after its Backup claim. */
const KEPT_BINDING = 'obs-restored-app';
const GONE_BINDING = 'obs-restored-gone';
/** Its Backup claim, and the Restore claim that makes it anew from it. */
const RESTORED_BACKUP = 'obs-restored-backup';
/** Backup claims made right after it, of the same instance: CloudNativePG takes them one after the other. */
const QUEUED_BACKUPS = ['obs-restored-backup-2', 'obs-restored-backup-3', 'obs-restored-backup-4'];
const IN_PLACE = 'obs-restored-undo';
let app: Kube;
/** The Backup claim the sandbox's backup step made (of its cnpg instance, not of INSTANCE): the file deletes it. */
let backupName: string | undefined;
/** Where the app cluster's claims of APP_NS are on the control plane: a backup tenant of the sandbox's store. */
let providerNs: string;
/** When the PITR test's instance claim was made (by the backup test, to come up beside it). */
let instanceMade = 0;

/** The cnpg offering's object store in the catalog the platform runs. */
const catalogStore = (): string | undefined => postgresql.props.cnpg?.backups?.endpointURL;

const appPath = (plural: string, name: string) => `/apis/anynines.com/v1/namespaces/${APP_NS}/${plural}/${name}`;

const instanceClaim = (name: string, more: Record<string, unknown> = {}) => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: { name, namespace: APP_NS },
  spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-nano', compositionRef: { name: 'cnpg-postgresql' }, ...more },
});

/** As `kubectl create` in the app cluster, once it serves the kind. */
const createInApp = (plural: string, obj: Record<string, any>) => createWhenServed(app, plural, obj);

/** The claim once Ready in the app cluster, where the konnector brings its status; `check` may fail it sooner. */
async function readyInApp(plural: string, name: string, check?: (x: any) => void, timeoutMs = 300_000): Promise<any> {
  return eventually(
    `${plural} ${APP_NS}/${name} Ready in the app cluster`,
    async () => {
      const x = await getObject(app, appPath(plural, name));
      check?.(x);
      return condition(x, 'Ready') === 'True' ? x : undefined;
    },
    timeoutMs,
  );
}

/** An instance claim's condition `type` in the app cluster, once `matches` holds for it. */
async function conditionInApp(
  name: string,
  type: string,
  matches: (c: Record<string, string>) => boolean,
  timeoutMs: number,
  plural = 'postgresqlinstances',
): Promise<Record<string, string>> {
  let seen: Record<string, string> | undefined;
  return eventually(
    `${plural} ${APP_NS}/${name}: condition ${type} as expected, in the app cluster`,
    async () => {
      const conditions = ((await getObject(app, appPath(plural, name)))?.status?.conditions ?? []) as Record<string, string>[];
      seen = conditions.find((x) => x.type === type);
      return seen && matches(seen) ? seen : undefined;
    },
    timeoutMs,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; it was ${seen ? JSON.stringify(seen) : 'not there'}`);
  });
}

async function deleteInApp(plural: string, name: string): Promise<void> {
  const r = await app.request('DELETE', appPath(plural, name));
  if (r.code >= 300 && r.code !== 404) throw new Error(`cannot delete ${plural} ${name}: ${r.code} ${JSON.stringify(r.body.message)}`);
}

/**
 * An attacker's login to the restored instance with a deleted binding's creds (`data`, kept before it went): a Pod on
 * the control plane (`<name>-login`) given them in a Secret (`<name>-creds`, removed after), psql to `<RESTORED>-rw`.
 */
async function stolenLogin(name: string, data: Record<string, string>) {
  await requireOk(kube, 'POST', `/api/v1/namespaces/${providerNs}/secrets`, {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: `${name}-creds` },
    data,
  });
  try {
    return await runPodToEnd(
      kube,
      providerNs,
      psqlClientPod({ name: `${name}-login`, secret: `${name}-creds`, sql: 'SELECT 1', host: `${RESTORED}-rw` }),
    );
  } finally {
    await kube.request('DELETE', `/api/v1/namespaces/${providerNs}/secrets/${name}-creds`);
  }
}

/** SQL as the superuser in an instance's Pod on the control plane. */
const sql = (q: string, pod = `${INSTANCE}-1`) => asSuperuser(q, providerNs, pod);

/**
 * Deletes the file's claims in the app cluster and waits until their copies and CNPG Clusters are gone from the
 * control plane and the claims from the app cluster (the konnector lets them go last), then lets the package move go
 * on: the move counts every claim of the shared app cluster deleted while it runs. Deleting a Backup claim deletes
 * CloudNativePG's Backup object, not the backup in the bucket.
 */
async function dropClaims(): Promise<void> {
  if (app && providerNs) {
    if (backupName) await deleteInApp('backups', backupName);
    await deleteInApp('restores', IN_PLACE);
    for (const b of [RESTORED_BACKUP, ...QUEUED_BACKUPS]) await deleteInApp('backups', b);
    for (const b of [SOURCE_BINDING, KEPT_BINDING, GONE_BINDING]) await deleteInApp('servicebindings', b);
    for (const name of [INSTANCE, RESTORED, TOO_EARLY]) await deleteInApp('postgresqlinstances', name);
    const gone = [
      ...(backupName ? [`/apis/anynines.com/v1/namespaces/${providerNs}/backups/${backupName}`] : []),
      `/apis/anynines.com/v1/namespaces/${providerNs}/restores/${IN_PLACE}`,
      ...[RESTORED_BACKUP, ...QUEUED_BACKUPS].map((b) => `/apis/anynines.com/v1/namespaces/${providerNs}/backups/${b}`),
      ...[SOURCE_BINDING, KEPT_BINDING, GONE_BINDING].map((b) => `/apis/anynines.com/v1/namespaces/${providerNs}/servicebindings/${b}`),
      ...[INSTANCE, RESTORED, TOO_EARLY].flatMap((name) => [
        `/apis/anynines.com/v1/namespaces/${providerNs}/postgresqlinstances/${name}`,
        `/apis/postgresql.cnpg.io/v1/namespaces/${providerNs}/clusters/${name}`,
      ]),
    ];
    await eventually(
      `the file's claims and Clusters gone from ${providerNs}`,
      async () => ((await Promise.all(gone.map((p) => getObject(kube, p)))).every((x) => !x) ? true : undefined),
      300_000,
    );
    const claims = [
      ...(backupName ? [appPath('backups', backupName)] : []),
      appPath('restores', IN_PLACE),
      appPath('backups', RESTORED_BACKUP),
      ...[SOURCE_BINDING, KEPT_BINDING, GONE_BINDING].map((b) => appPath('servicebindings', b)),
      ...[INSTANCE, RESTORED, TOO_EARLY].map((n) => appPath('postgresqlinstances', n)),
    ];
    await eventually(
      `the file's claims gone from the app cluster`,
      async () => ((await Promise.all(claims.map((p) => getObject(app, p)))).every((x) => !x) ? true : undefined),
      120_000,
    );
  }
  release?.();
  release = undefined;
}

describe('the object store', () => {
  // The objects of these first tests lie under `app/`: Barman Cloud refuses to archive a cluster's WAL where the
  // archive of its server name (`pg/`, the last test) is not empty, so that two clusters never write one archive.
  it("serves S3 over TLS of its own CA: a tenant's keys write, list and read back objects in its bucket", async () => {
    await a.send(new PutObjectCommand({ Bucket: teamA.bucket, Key: 'app/base/0001/data.tar', Body: 'team-a base backup' }));
    await a.send(new PutObjectCommand({ Bucket: teamA.bucket, Key: 'app/wals/000000010000000000000001', Body: 'team-a wal' }));
    const listed = await a.send(new ListObjectsV2Command({ Bucket: teamA.bucket, Prefix: 'app/' }));
    expect((listed.Contents ?? []).map((o) => o.Key).sort()).toEqual(['app/base/0001/data.tar', 'app/wals/000000010000000000000001']);
    expect(await text(a, teamA.bucket, 'app/base/0001/data.tar')).toBe('team-a base backup');
    const buckets = await a.send(new ListBucketsCommand({}));
    expect((buckets.Buckets ?? []).map((x) => x.Name)).toEqual([teamA.bucket]);
    // A client that trusts only the machine's CAs does not talk to it.
    const untrusting = storeClient({ endpointFromHost: store.endpointFromHost, ca: '' }, teamA);
    await expect(untrusting.send(new ListBucketsCommand({}))).rejects.toThrow(/certificate|self.signed|issuer/i);
  });

  it("opens no tenant's bucket to another tenant's keys, to wrong keys or to none, and lets no tenant make or re-grant a bucket", async () => {
    await b.send(new PutObjectCommand({ Bucket: teamB.bucket, Key: 'app/base/0001/data.tar', Body: 'team-b base backup' }));
    const anonymous = storeClient(store);
    const forged = storeClient(store, { ...teamA, secretAccessKey: teamB.secretAccessKey });
    const attempts = {
      'list A with B': outcome(b.send(new ListObjectsV2Command({ Bucket: teamA.bucket }))),
      'read A with B': outcome(b.send(new GetObjectCommand({ Bucket: teamA.bucket, Key: 'app/base/0001/data.tar' }))),
      'write A with B': outcome(b.send(new PutObjectCommand({ Bucket: teamA.bucket, Key: 'app/base/0001/data.tar', Body: 'evil' }))),
      'delete in A with B': outcome(b.send(new DeleteObjectCommand({ Bucket: teamA.bucket, Key: 'app/base/0001/data.tar' }))),
      'grant A to B with B': outcome(
        b.send(new PutBucketAclCommand({ Bucket: teamA.bucket, GrantFullControl: `id=${teamB.accessKeyId}` })),
      ),
      'open A by policy with B': outcome(
        b.send(
          new PutBucketPolicyCommand({
            Bucket: teamA.bucket,
            Policy: JSON.stringify({
              Version: '2012-10-17',
              Statement: [{ Effect: 'Allow', Principal: '*', Action: 's3:*', Resource: [`arn:aws:s3:::${teamA.bucket}/*`] }],
            }),
          }),
        ),
      ),
      'make a bucket with B': outcome(b.send(new CreateBucketCommand({ Bucket: 'team-b-more' }))),
      'list A with no keys': outcome(anonymous.send(new ListObjectsV2Command({ Bucket: teamA.bucket }))),
      'read A with no keys': outcome(anonymous.send(new GetObjectCommand({ Bucket: teamA.bucket, Key: 'app/base/0001/data.tar' }))),
      "read A with A's key id and B's secret": outcome(
        forged.send(new GetObjectCommand({ Bucket: teamA.bucket, Key: 'app/base/0001/data.tar' })),
      ),
    };
    const results = Object.fromEntries(await Promise.all(Object.entries(attempts).map(async ([k, p]) => [k, await p] as const)));
    for (const [what, result] of Object.entries(results)) expect(result, what).not.toBe('ok');
    expect(results).toMatchObject({
      'list A with B': 'AccessDenied',
      'read A with B': 'AccessDenied',
      'write A with B': 'AccessDenied',
      'delete in A with B': 'AccessDenied',
      'make a bucket with B': 'AccessDenied',
      "read A with A's key id and B's secret": 'SignatureDoesNotMatch',
    });
    expect((await b.send(new ListBucketsCommand({}))).Buckets?.map((x) => x.Name)).toEqual([teamB.bucket]);
    // Nothing of the attempts changed team-a's bucket.
    expect(await text(a, teamA.bucket, 'app/base/0001/data.tar')).toBe('team-a base backup');
    expect(await outcome(b.send(new ListObjectsV2Command({ Bucket: teamA.bucket })))).toBe('AccessDenied');
  });

  it('keeps the objects and the tenants when its Pod is replaced', async () => {
    const [pod] = await listPods(kube, NS, 'app.kubernetes.io/name=versitygw');
    const old = pod!.metadata.uid as string;
    await kube.request('DELETE', `/api/v1/namespaces/${NS}/pods/${pod!.metadata.name}`);
    await eventually(
      'a new versitygw Pod Ready',
      async () => {
        const pods = await listPods(kube, NS, 'app.kubernetes.io/name=versitygw');
        const ready = pods.filter(
          (p) =>
            p.metadata.uid !== old &&
            (p.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True'),
        );
        return ready.length === 1 && pods.length === 1 ? true : undefined;
      },
      120_000,
    );
    // The Service's endpoints follow the new Pod; the forward goes to the Service's address.
    const read = await eventually(
      "team-a's object through the new Pod",
      async () => text(a, teamA.bucket, 'app/wals/000000010000000000000001').catch(() => undefined),
      60_000,
    );
    expect(read).toBe('team-a wal');
    expect(await text(b, teamB.bucket, 'app/base/0001/data.tar')).toBe('team-b base backup');
    expect(await outcome(b.send(new GetObjectCommand({ Bucket: teamA.bucket, Key: 'app/wals/000000010000000000000001' })))).toBe(
      'AccessDenied',
    );
    expect(await getObject(kube, `/api/v1/namespaces/${NS}/persistentvolumeclaims/versitygw-data`)).toMatchObject({
      status: { phase: 'Bound' },
    });
  });

  it("gets each provider namespace's tenant from the bind backend, which takes no keys from a Secret someone else wrote there", async () => {
    // What a consumer who may write Secrets in its provider namespace could try: the tenant Secret rewritten with
    // another tenant's access key and a secret of its choosing, hoping the backend sets that secret on that user.
    const forged = { ...teamB, secretAccessKey: 'chosen-by-the-attacker-0123456789abcdefgh' };
    await requireOk(kube, 'PUT', `/api/v1/namespaces/${PG_NS}/secrets/${DEFAULT_BACKUP_SECRET}`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: DEFAULT_BACKUP_SECRET, namespace: PG_NS, labels: { 'app.kubernetes.io/managed-by': 'klutch-kit-backend' } },
      stringData: { [BACKUP_STORE_KEYS.accessKeyId]: forged.accessKeyId, [BACKUP_STORE_KEYS.secretAccessKey]: forged.secretAccessKey },
    });
    // The backend's next look at the namespace (it looks again every 10 minutes; a change of its APIServiceNamespace now).
    const marked = async () => (await getObject(kube, `/api/v1/namespaces/${PG_NS}`))?.metadata?.annotations?.[TENANT_ANNOTATION];
    const before = await marked();
    await requireOk(
      kube,
      'PATCH',
      SERVICE_NAMESPACE,
      { metadata: { annotations: { 'obs.test/poke': String(Date.now()) } } },
      'application/merge-patch+json',
    );
    // Done when the Secret is no longer the forged one, or (a backend that took the forged keys) the mark changed.
    await eventually(
      'the backend looking at the forged Secret',
      async () => {
        const s = await getObject(kube, `/api/v1/namespaces/${PG_NS}/secrets/${DEFAULT_BACKUP_SECRET}`);
        const secret = Buffer.from(s?.data?.[BACKUP_STORE_KEYS.secretAccessKey] ?? '', 'base64').toString();
        return secret !== forged.secretAccessKey || (await marked()) !== before ? true : undefined;
      },
      60_000,
    );
    expect(await outcome(b.send(new ListObjectsV2Command({ Bucket: teamB.bucket }))), "team-b's keys after the forged Secret").toBe('ok');
    const renewed = await tenantOf(PG_NS, teamA);
    expect(renewed.accessKeyId).toBe(teamA.accessKeyId);
    expect(renewed.secretAccessKey).not.toBe(forged.secretAccessKey);
    // team-b's user was not touched: its keys still work and the chosen secret opens nothing.
    expect(await text(b, teamB.bucket, 'app/base/0001/data.tar')).toBe('team-b base backup');
    expect(await outcome(storeClient(store, forged).send(new ListObjectsV2Command({ Bucket: teamB.bucket })))).toBe(
      'SignatureDoesNotMatch',
    );
    // team-a's keys were made anew (the old secret is refused) and open its objects, which stayed.
    expect(await outcome(a.send(new ListObjectsV2Command({ Bucket: teamA.bucket })))).toBe('SignatureDoesNotMatch');
    teamA = renewed;
    a = storeClient(store, teamA);
    expect(await text(a, teamA.bucket, 'app/wals/000000010000000000000001')).toBe('team-a wal');
  }, 180_000);

  it("sweeps a deleted instance's backups and a gone namespace's bucket and user once nothing was written there for the keep period, and keeps a live instance's", async () => {
    // The backend's own sweep (backup-store/janitor.ts, its reads of this control plane and its store clients) run
    // once here with a keep period of seconds, over buckets of this file's store only. The live instance is the
    // sandbox's: a bucket for its provider namespace is made in this store as the backend makes a tenant's.
    const platform = await podPlatform();
    const liveNs = platform.claims.providerNamespace;
    const live = platform.claims.cnpg?.instance;
    if (!live) throw new Error('the sandbox made no cnpg instance: the package has no cnpg example');
    const keys = {
      endpoint: store.admin.endpoint,
      accessKeyId: store.admin.accessKeyId,
      secretAccessKey: store.admin.secretAccessKey,
      ca: store.ca,
    };
    const admin = storeAdmin(keys);
    const objects = storeObjects(keys);
    const root = storeClient(store, { bucket: '', accessKeyId: keys.accessKeyId, secretAccessKey: keys.secretAccessKey });
    const tenant = async (bucket: string, owner: string) => {
      await admin.createUser(owner, 'a-secret-of-forty-characters-0123456789');
      expect(await admin.createBucket(bucket, owner)).toBe('created');
    };
    const put = (bucket: string, key: string) => root.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: key }));
    const listed = async (bucket: string) =>
      ((await root.send(new ListObjectsV2Command({ Bucket: bucket }))).Contents ?? []).map((x) => x.Key).sort();
    const liveBucket = `klutch-${liveNs}`;
    const liveOwner = tenantAccessKey((await requireOk(kube, 'GET', `/api/v1/namespaces/${liveNs}`)).metadata.uid);
    const goneNs = `obs-gone-${Date.now().toString(36)}`;
    const goneOwner = tenantAccessKey(`a namespace ${goneNs} deleted long ago`);
    try {
      await tenant(liveBucket, liveOwner);
      await tenant(`klutch-${goneNs}`, goneOwner);
      await put(liveBucket, `${live}/wals/0000000100000000/000000010000000000000001.gz`);
      await put(liveBucket, 'deleted-instance/base/20261207T000000/data.tar');
      await put(`klutch-${goneNs}`, 'orders/base/20261207T000000/data.tar');
      const teamBBefore = await listed(teamB.bucket);
      await sleep(4000);
      // Written within the keep period: a deleted instance's WAL, archived just before its Cluster went.
      await put(liveBucket, 'lately-deleted/wals/0000000100000000/000000010000000000000001.gz');
      const now = Date.now();
      const said: string[] = [];
      // An object written after the sweep decided (an instance made anew under the name) must stay.
      const deps = sweepDeps(backendClients(kube.config), admin, objects);
      const decided = deps.newest;
      deps.newest = async (bucket, prefix) => {
        const at = await decided(bucket, prefix);
        if (bucket === liveBucket && prefix === 'deleted-instance/') await put(liveBucket, 'deleted-instance/wals/written-after');
        return at;
      };
      const { removed } = await sweepBackups(
        deps,
        { bucket: 'klutch-%s', keepMs: 2000, now, only: new Set([liveBucket, `klutch-${goneNs}`, teamB.bucket]) },
        (m, e) => said.push(e ? `${m}: ${String(e)}` : m),
      );
      expect(
        said.filter((m) => m.includes('failed')),
        'no bucket failed',
      ).toEqual([]);
      expect(removed).toEqual([
        { what: `${liveBucket}/deleted-instance/`, objects: 1 },
        { what: `klutch-${goneNs}`, objects: 1 },
      ]);
      // The live instance's archive stays, however old; the one deleted lately stays until its keep period is over.
      expect(await listed(liveBucket)).toEqual([
        'deleted-instance/wals/written-after',
        `${live}/wals/0000000100000000/000000010000000000000001.gz`,
        'lately-deleted/wals/0000000100000000/000000010000000000000001.gz',
      ]);
      // The gone namespace's bucket and user are gone: its keys open nothing.
      expect(await outcome(root.send(new ListObjectsV2Command({ Bucket: `klutch-${goneNs}` })))).toBe('NoSuchBucket');
      const goneClient = storeClient(store, {
        bucket: '',
        accessKeyId: goneOwner,
        secretAccessKey: 'a-secret-of-forty-characters-0123456789',
      });
      expect(await outcome(goneClient.send(new ListBucketsCommand({})))).toBe('InvalidAccessKeyId');
      // A bucket that is no tenant's (its owner's key is not one the backend derives) is not touched.
      expect(await listed(teamB.bucket)).toEqual(teamBBefore);
    } finally {
      await objects.deleteObjects(liveBucket, '', Infinity).catch(() => 0);
      await objects.deleteBucket(liveBucket).catch(() => undefined);
      await admin.deleteUser(liveOwner).catch(() => undefined);
      objects.close();
      await admin.close();
    }
  }, 300_000);

  it(
    "backs up the sandbox's instance from the app cluster: a Backup claim there Completed with CNPG's backup, its WAL archived all along",
    async () => {
      const platform = await podPlatform();
      app = platform.app;
      providerNs = platform.claims.providerNamespace;
      const source = platform.claims.cnpg?.instance;
      if (!source) throw new Error('the sandbox made no cnpg instance: the package has no cnpg example');
      // The offering's store is the one the sandbox runs, and the backend made the provider namespace its tenant.
      expect(catalogStore()).toBe(`https://versitygw.${OBJECT_STORE_NAMESPACE}.svc:7070`);
      pvs = await localVolumes(kube, mkdtempSync(join(node.runDir, 'volumes-object-store-')), 3, '1Gi', 'object-store-pg', [
        { namespace: providerNs, name: `${INSTANCE}-1` },
        { namespace: providerNs, name: `${RESTORED}-1` },
        { namespace: providerNs, name: `${TOO_EARLY}-1` },
      ]);
      // The next test's instance starts now: it comes up (and takes its first backup) while this one's backup runs.
      instanceMade = Date.now();
      // A statement timeout an app team may well set, server-wide: Barman's pg_backup_stop, which waits for the last
      // WAL segment to be archived, takes longer, and must not be cut short by it.
      const parameters = { statementTimeout: 1000 };
      await createInApp('postgresqlinstances', instanceClaim(INSTANCE, { parameters }));
      await createInApp('servicebindings', {
        apiVersion: 'anynines.com/v1',
        kind: 'ServiceBinding',
        metadata: { name: SOURCE_BINDING, namespace: APP_NS },
        spec: { instanceRef: INSTANCE, serviceInstanceType: 'postgresql', compositionRef: { name: 'cnpg-servicebinding' } },
      });
      // The sandbox's own step (sandbox/backups.ts), as `npm run sandbox` runs it: the Backup claim in the app cluster.
      const claim = await platform.backup();
      backupName = claim.name;
      log(
        `object store: the Backup claim of ${source} was Ready in the app cluster ${(claim.ms / 1000).toFixed(1)} s after it was made there, ${claim.lagMs === undefined ? '?' : (claim.lagMs / 1000).toFixed(1)} s after CloudNativePG's Backup turned completed`,
      );
      const t = Date.now() - claim.ms;
      // What CloudNativePG reports, as the app developer reads it.
      const backup = claim.managed as Record<string, any>;
      log(
        `object store: CloudNativePG's backup of ${source} ran from +${((Date.parse(backup.startedAt) - t) / 1000).toFixed(0)} s to +${((Date.parse(backup.stoppedAt) - t) / 1000).toFixed(0)} s`,
      );
      expect(backup).toMatchObject({ phase: 'completed', destinationPath: `s3://klutch-${providerNs}/`, serverName: source });
      expect(backup.backupId).toMatch(/^\d{8}T\d{6}$/);
      expect(Date.parse(backup.stoppedAt)).toBeGreaterThanOrEqual(Date.parse(backup.startedAt));
      // A base backup ends once its last WAL segment is archived: the instance archives continuously.
      const cluster = await getObject(kube, `/apis/postgresql.cnpg.io/v1/namespaces/${providerNs}/clusters/${source}`);
      const archiving = (cluster?.status?.conditions ?? []).find((x: { type: string }) => x.type === 'ContinuousArchiving');
      expect(archiving, JSON.stringify(cluster?.status?.conditions)).toMatchObject({ status: 'True' });
      // The instance claim shows its last backup (printer column LastBackup).
      await eventually(
        `${source}'s last backup in the app cluster`,
        async () =>
          (await getObject(app, appPath('postgresqlinstances', source)))?.status?.managed?.lastSuccessfulBackup ? true : undefined,
        120_000,
      );
    },
    15 * 60_000,
  );

  it(
    'restores into a new claim, to a point in time, from the backups of an instance deleted in the app cluster: the rows written before it and none after',
    async () => {
      await readyInApp('postgresqlinstances', INSTANCE);
      log(
        `object store: ${INSTANCE} Ready in the app cluster ${((Date.now() - instanceMade) / 1000).toFixed(1)} s after it was made there`,
      );
      // The owner's, as a table a binding makes is (backends/cnpg.ts CNPG_OWNER_TRIGGER_SQL): the bindings of the
      // instances restored from this one read it.
      sql('CREATE TABLE orders (n int PRIMARY KEY); ALTER TABLE orders OWNER TO app; INSERT INTO orders VALUES (1), (2), (3)');
      // The source's binding can log in to it: its role is in what the restore below recovers.
      const canLogIn = (pod: string) => sql(`SELECT rolcanlogin FROM pg_roles WHERE rolname = 'binding-${SOURCE_BINDING}'`, pod);
      await eventually(
        `binding-${SOURCE_BINDING} able to log in to ${INSTANCE}`,
        async () => (canLogIn(`${INSTANCE}-1`) === 't' ? true : undefined),
        180_000,
      );
      // Its first backup, taken as soon as its WAL archiving works (its ScheduledBackup): the base T is recovered from.
      // Read where CloudNativePG writes it: the claim shows it up to a minute later (the previous test reads it there).
      const first = await eventually(
        `${INSTANCE}'s first backup`,
        async () => {
          const backups = await requireOk(kube, 'GET', `/apis/postgresql.cnpg.io/v1/namespaces/${providerNs}/backups`);
          const own = (backups.items as any[]).filter((b) => b.spec?.cluster?.name === INSTANCE);
          const failed = own.filter((b) => b.status?.phase === 'failed');
          if (failed.length) return { failed: failed.map((b) => b.status) };
          return own.some((b) => b.status?.phase === 'completed') ? { failed: [] } : undefined;
        },
        600_000,
      );
      expect(first.failed, `${INSTANCE}'s backups failed`).toEqual([]);
      log(`object store: ${INSTANCE}'s first backup done ${((Date.now() - instanceMade) / 1000).toFixed(1)} s after it was made`);
      sql('INSERT INTO orders VALUES (4), (5)');
      await sleep(1500);
      // T: a whole second after rows 4 and 5 and before rows 6 and 7, as the app team would note it.
      const t = sql(`SELECT to_char(date_trunc('second', now()) AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS"Z"')`);
      await sleep(1500);
      sql('INSERT INTO orders VALUES (6), (7)');
      // The segment with T and the commits after it in the bucket: recovery stops at the first commit after T.
      const segment = sql('SELECT pg_walfile_name(pg_switch_wal())');
      await eventually(
        `WAL segment ${segment} archived`,
        async () => (sql('SELECT last_archived_wal FROM pg_stat_archiver') >= segment ? true : undefined),
        120_000,
      );
      // The source's binding is deleted after T, so the restore recovers its role, and an attacker who kept its
      // credentials (a departed team member) tries them on the restored instance below. Its role is no longer any
      // binding's: nothing but the restored instance's pg_hba (its login group) stands in the way.
      const kept = await requireOk(kube, 'GET', `/api/v1/namespaces/${providerNs}/secrets/${SOURCE_BINDING}-creds`);
      await deleteInApp('servicebindings', SOURCE_BINDING);
      await eventually(
        `the ServiceBinding ${providerNs}/${SOURCE_BINDING} gone from the control plane`,
        async () =>
          (await getObject(kube, `/apis/anynines.com/v1/namespaces/${providerNs}/servicebindings/${SOURCE_BINDING}`)) ? undefined : true,
        180_000,
      );
      // Deleted by its app team (it is not protected): its Cluster goes, its backups stay in the bucket.
      await deleteInApp('postgresqlinstances', INSTANCE);
      await eventually(
        `the Cluster ${providerNs}/${INSTANCE} gone`,
        async () =>
          (await getObject(kube, `/apis/postgresql.cnpg.io/v1/namespaces/${providerNs}/clusters/${INSTANCE}`)) ? undefined : true,
        180_000,
      );
      // Its name made free again in the app cluster and on the control plane, volumes included, for the reuse below.
      await eventually(
        `${INSTANCE} gone from the app cluster, and its volumes from the control plane`,
        async () => {
          if (await getObject(app, appPath('postgresqlinstances', INSTANCE))) return undefined;
          const pvcs = await requireOk(
            kube,
            'GET',
            `/api/v1/namespaces/${providerNs}/persistentvolumeclaims?labelSelector=${encodeURIComponent(`cnpg.io/cluster=${INSTANCE}`)}`,
          );
          return (pvcs.items as unknown[]).length === 0 ? true : undefined;
        },
        180_000,
      );
      // The instance made under that name below gets a volume of its own: the first one's is Released (Retain), and
      // one of the shared platform's, which the suites after this one use, would be lost to it.
      pvs.push(
        ...(await localVolumes(kube, mkdtempSync(join(node.runDir, 'volumes-reused-')), 1, '1Gi', 'object-store-pg-reused', [
          { namespace: providerNs, name: `${INSTANCE}-1` },
        ])),
      );
      const started = Date.now();
      // Beside it, a restore to a moment before the source's first backup: nothing to recover from; and a new instance
      // under the deleted one's name, whose kept backups hold the place in the bucket it would archive to.
      await Promise.all([
        createInApp('postgresqlinstances', instanceClaim(RESTORED, { restoreFrom: { instance: INSTANCE, pointInTime: t } })),
        createInApp(
          'postgresqlinstances',
          instanceClaim(TOO_EARLY, { restoreFrom: { instance: INSTANCE, pointInTime: '2020-01-01T00:00:00Z' } }),
        ),
        createInApp('postgresqlinstances', instanceClaim(INSTANCE)),
      ]);
      await readyInApp('postgresqlinstances', RESTORED, undefined, 600_000).catch((e: Error) => {
        throw new Error(`${e.message}; the instance's log:\n${podLogTail(node, providerNs, `${RESTORED}-1`, 40)}`);
      });
      log(
        `object store: ${RESTORED}, restored to ${t}, was Ready in the app cluster ${((Date.now() - started) / 1000).toFixed(1)} s after it was made there`,
      );
      // Rows 6 and 7 were committed (and archived) after T: a restore that brought them back would be wrong.
      expect(sql("SELECT string_agg(n::text, ',' ORDER BY n) FROM orders", `${RESTORED}-1`)).toBe('1,2,3,4,5');
      // Attack: the deleted binding's password, recovered with its role (which may still log in: no binding lists it
      // any more), must not open the restored instance: pg_hba admits only the members of the restored instance's own
      // login group (backends/cnpg.ts CNPG_PG_HBA), and the recovered role is a member of the source's.
      expect(canLogIn(`${RESTORED}-1`)).toBe('t');
      const attempt = await stolenLogin('obs-stolen', kept.data);
      expect(attempt.phase, attempt.log).toBe('Failed');
      expect(attempt.log).toContain(`pg_hba.conf rejects connection for host`);
      expect(attempt.log).toContain(`user "binding-${SOURCE_BINDING}"`);
      // Once its recovery Pod is on the node: it waits for room while other files' instances take the node's CPU
      // (w113: Insufficient cpu for five and a half minutes, until cnpg.test's three-instance claim went).
      await eventually(
        `${TOO_EARLY}'s recovery Pod scheduled`,
        async () => {
          const selector = encodeURIComponent(`cnpg.io/cluster=${TOO_EARLY}`);
          const pods = ((await getObject(kube, `/api/v1/namespaces/${providerNs}/pods?labelSelector=${selector}`))?.items ??
            []) as WireObject[];
          return pods.some((p) => p.status?.conditions?.some((c: WireObject) => c.type === 'PodScheduled' && c.status === 'True'))
            ? true
            : undefined;
        },
        12 * 60_000,
      );
      // The app developer reads in the app cluster that the recovery failed and what to do, long before CloudNativePG
      // gives up on the Job (about ten minutes of retries).
      const said = await conditionInApp(TOO_EARLY, 'DataServiceReady', (c) => c.reason === 'PodFailed', 180_000);
      expect(said.status).toBe('False');
      expect(said.message).toMatch(new RegExp(`Pod ${TOO_EARLY}-1-full-recovery-\\w+ failed: container full-recovery exited with 1`));
      expect(said.message).toContain('restoreFrom.pointInTime must lie between');
      // The instance under the reused name serves, but cannot archive: its claim in the app cluster says so, and why.
      const archiving = await conditionInApp(INSTANCE, 'ContinuousArchiving', (c) => c.status === 'False', 300_000);
      // CloudNativePG says how Barman Cloud's check exited (1: the store reachable, the archive refused); the advice
      // says what that means for a new instance and what to do.
      expect(archiving.message).toContain('barman-cloud-wal-archive: exit status 1');
      expect(archiving.message).toContain("Delete the instance's claim and create it under a name of its own");
      log(`object store: the reused ${INSTANCE} said it cannot archive ${((Date.now() - started) / 1000).toFixed(1)} s after it was made`);
    },
    27 * 60_000,
  );

  it(
    'restores an instance in place from its Backup claim: the same claim and creds, the rows as of the backup, a binding deleted since revoked',
    async () => {
      const binding = (name: string) => ({
        apiVersion: 'anynines.com/v1',
        kind: 'ServiceBinding',
        metadata: { name, namespace: APP_NS },
        spec: { instanceRef: RESTORED, serviceInstanceType: 'postgresql', compositionRef: { name: 'cnpg-servicebinding' } },
      });
      await Promise.all([createInApp('servicebindings', binding(KEPT_BINDING)), createInApp('servicebindings', binding(GONE_BINDING))]);
      const credsInApp = (name: string) =>
        eventually(
          `${name}-creds in the app cluster`,
          async () => {
            const s = await getObject(app, `/api/v1/namespaces/${APP_NS}/secrets/${name}-creds`);
            return Object.keys(s?.data ?? {}).length ? s : undefined;
          },
          300_000,
        );
      const query = async (name: string, secret: string, q: string) =>
        runPodToEnd(app, APP_NS, psqlClientPod({ name, secret, sql: q, tls: 'verify-ca' }));
      await Promise.all([credsInApp(KEPT_BINDING), credsInApp(GONE_BINDING)]);
      const pod = `${RESTORED}-1`;
      sql('INSERT INTO orders VALUES (10)', pod);
      // The Backup claim from the app cluster (it waits for the instance's archiving, which starts after its recovery),
      // and three more made after it: CloudNativePG takes one backup of an instance at a time, the oldest first (and
      // the instance's own first backup, scheduled, starts as its archiving works), so those behind wait their turn.
      for (const name of [RESTORED_BACKUP, ...QUEUED_BACKUPS])
        await createInApp('backups', {
          apiVersion: 'anynines.com/v1',
          kind: 'Backup',
          metadata: { name, namespace: APP_NS },
          spec: { instanceRef: RESTORED, serviceInstanceType: 'postgresql', compositionRef: { name: 'cnpg-backup' } },
        });
      // Meanwhile one behind names the Backup it waits for, in the app cluster. Any of them: how long each waits
      // depends on how soon Crossplane composes it beside the backups ahead (a loaded control plane composed the last
      // as the ones ahead were done, and it never waited), so the three behind make the window three backups long.
      const [waiter, queued] = await eventually(
        `one of backups ${QUEUED_BACKUPS.join(', ')} in ${APP_NS}: DataServiceReady Queued, in the app cluster`,
        async () => {
          for (const name of QUEUED_BACKUPS) {
            const conditions = ((await getObject(app, appPath('backups', name)))?.status?.conditions ?? []) as Record<string, string>[];
            const c = conditions.find((x) => x.type === 'DataServiceReady' && x.reason === 'Queued');
            if (c) return [name, c] as const;
          }
          return undefined;
        },
        600_000,
      );
      expect(queued.message).toMatch(
        /^cnpg backup: (.*; )?waits for Backup \S+, (running since \S+|started since \S+|started|running|made before it and not started yet): CloudNativePG takes one backup of an instance at a time/,
      );
      const ahead = /waits for Backup (\S+),/.exec(queued.message!)![1];
      expect(ahead).not.toBe(waiter);
      log(`object store: Backup claim ${waiter} named the backup it waited for: ${ahead}`);
      for (const name of [RESTORED_BACKUP, ...QUEUED_BACKUPS]) await readyInApp('backups', name, undefined, 600_000);
      // After the backup: a row the restore must take back, and a binding deleted whose role the backup still holds,
      // able to log in, with the password an attacker kept.
      sql('INSERT INTO orders VALUES (11)', pod);
      const kept = await requireOk(kube, 'GET', `/api/v1/namespaces/${providerNs}/secrets/${GONE_BINDING}-creds`);
      await deleteInApp('servicebindings', GONE_BINDING);
      await eventually(
        `binding-${GONE_BINDING} revoked in ${RESTORED}`,
        async () => (sql(`SELECT rolcanlogin FROM pg_roles WHERE rolname = 'binding-${GONE_BINDING}'`, pod) === 'f' ? true : undefined),
        180_000,
      );
      const clusterPath = `/apis/postgresql.cnpg.io/v1/namespaces/${providerNs}/clusters/${RESTORED}`;
      const before = {
        claim: (await requireOk(app, 'GET', appPath('postgresqlinstances', RESTORED))).metadata.uid,
        cluster: (await requireOk(kube, 'GET', clusterPath)).metadata.uid,
        pvc: (await requireOk(kube, 'GET', `/api/v1/namespaces/${providerNs}/persistentvolumeclaims/${pod}`)).metadata.uid,
        creds: (await credsInApp(KEPT_BINDING)).metadata.uid,
      };
      // The Cluster made anew claims a volume under the same name: one waits for it, bound to that name, made before
      // CloudNativePG asks (the volumes here are made by hand; a shared platform's would be lost to it).
      pvs.push(
        ...(await localVolumes(kube, mkdtempSync(join(node.runDir, 'volumes-in-place-')), 1, '1Gi', 'object-store-pg-in-place', [
          { namespace: providerNs, name: pod },
        ])),
      );
      const started = Date.now();
      // The sandbox bound instances, bindings and backups in the app cluster; restores are bound here.
      await (await podPlatform()).bind('restores');
      await createInApp('restores', {
        apiVersion: 'anynines.com/v1',
        kind: 'Restore',
        metadata: { name: IN_PLACE, namespace: APP_NS },
        spec: {
          backupRef: RESTORED_BACKUP,
          instanceRef: RESTORED,
          serviceInstanceType: 'postgresql',
          compositionRef: { name: 'cnpg-restore' },
        },
      });
      // The instance says it is being restored, in the app cluster.
      await conditionInApp(RESTORED, 'DataServiceReady', (c) => c.reason === 'Restoring', 180_000);
      // Its volume goes with the Cluster (CNPG names the new one the same): this platform's volumes are made by hand.
      await eventually(
        `the volume claim ${pod} of the Cluster made before gone`,
        async () => {
          const pvc = await getObject(kube, `/api/v1/namespaces/${providerNs}/persistentvolumeclaims/${pod}`);
          return pvc?.metadata?.uid === before.pvc ? undefined : true;
        },
        300_000,
      );
      await readyInApp('restores', IN_PLACE, undefined, 600_000).catch((e: Error) => {
        throw new Error(`${e.message}; the instance's log:\n${podLogTail(node, providerNs, pod, 40)}`);
      });
      log(
        `object store: ${RESTORED} restored in place from ${RESTORED_BACKUP}, Ready in the app cluster ${((Date.now() - started) / 1000).toFixed(1)} s after the Restore was made`,
      );
      const instance = await readyInApp('postgresqlinstances', RESTORED, undefined, 300_000);
      expect(instance.metadata.uid, 'the same claim').toBe(before.claim);
      expect(instance.status.managed.restore).toMatchObject({ name: IN_PLACE, backup: RESTORED_BACKUP, phase: 'Restored' });
      expect((await requireOk(kube, 'GET', clusterPath)).metadata.uid, 'a Cluster made anew').not.toBe(before.cluster);
      // The rows as of the backup: 11, written after it, is gone.
      expect(sql("SELECT string_agg(n::text, ',' ORDER BY n) FROM orders", pod)).toBe('1,2,3,4,5,10');
      // The app keeps its Secret and reads with it (the load balancer's address may be new: the Secret follows it).
      const creds = await credsInApp(KEPT_BINDING);
      expect(creds.metadata.uid).toBe(before.creds);
      let last = '';
      const read = await eventually(
        `${KEPT_BINDING}'s creds reading ${RESTORED}`,
        async () => {
          const r = await query(`obs-in-place-read-${Date.now() % 100000}`, `${KEPT_BINDING}-creds`, 'SELECT count(*) FROM orders');
          last = r.log;
          return r.phase === 'Succeeded' ? r : undefined;
        },
        180_000,
      ).catch((e: Error) => {
        throw new Error(`${e.message}; the last attempt said: ${last}`);
      });
      // The Secret names the instance's new address everywhere (its Service was made again with the Cluster).
      const decoded = (s: Record<string, any>, k: string) => Buffer.from(s.data[k], 'base64').toString();
      const address = (await requireOk(kube, 'GET', `/api/v1/namespaces/${providerNs}/services/${RESTORED}-external`)).status.loadBalancer
        .ingress[0].ip;
      await eventually(
        `${KEPT_BINDING}-creds naming ${address} in host and uri`,
        async () => {
          const s = await credsInApp(KEPT_BINDING);
          return decoded(s, 'host') === address && decoded(s, 'uri').startsWith(`postgresql://${address}:`) ? true : undefined;
        },
        120_000,
      );
      expect(read.log.trim()).toBe('6');
      // Attack: the deleted binding's role came back from the backup able to log in, in this instance's own login
      // group; the restore keeps it revoked (the roles list of the Cluster before), so the kept password is refused.
      expect(sql(`SELECT rolcanlogin FROM pg_roles WHERE rolname = 'binding-${GONE_BINDING}'`, pod)).toBe('f');
      const attempt = await stolenLogin('obs-stolen-restored', kept.data);
      expect(attempt.phase, attempt.log).toBe('Failed');
      // Refused by its NOLOGIN, or by pg_hba once CNPG has taken it out of the login group (the pass after).
      expect(attempt.log).toMatch(/is not permitted to log in|password authentication failed|pg_hba.conf rejects connection/);
      await dropClaims();
    },
    20 * 60_000,
  );
});
