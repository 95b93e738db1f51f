/**
 * The cnpg backend's backups as the function composes them: an offering with an object store gives every instance's
 * Cluster WAL archiving into its tenant's bucket and a ScheduledBackup; a `Backup` claim on cnpg-backup becomes a
 * CNPG Backup of its instance, whose phase and error reach the claim. The real store and CNPG taking such a backup:
 * test/cluster/object-store.test.ts.
 */
import { describe, expect, it } from 'vitest';
import type { Api } from '../apis/api';
import { DataService, planMatrix, s } from '../apis';
import type { CnpgOffering } from '../apis/dataservice';
import { runFunction } from '../functions/dataservices/fn';
import { Ready, Status } from '@crossplane-org/function-sdk-typescript';
import { observeStatus } from '../functions/dataservices/status';
import { answer, compositeOf, fatalMessages, inputOf, requestOf, SETTINGS } from '../harness/crossplane/function-requests';
import { loadCatalog, ROOT } from '../harness/crossplane/catalog';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { inputFor, type Recipe } from '../recipe';
import { parseYaml } from '../harness/crossplane/catalog';
import { validatorFor } from '../test/support/openapi';
import type { CnpgBackupStore } from './cnpg-backup';
import { CNPG_INSTANCE_LABEL, CNPG_OWNER_TRIGGER_SQL, CNPG_SUPERUSER_SETTINGS } from './cnpg';
import { CNPG_CLUSTER_LABEL, INSTANCE_LABEL } from './cnpg-backup';
import { QUEUE_REQUIREMENT } from '../functions/dataservices/queue';
import { conditionHold } from '../lib/claim-hold';
import { WAITS_FOR_REQUIREMENT } from '../functions/dataservices/diagnostics';

const apis: Api[] = await loadCatalog();
const api = (name: string): Api => apis.find((a) => a.name === name) as Api;

const STORE: CnpgBackupStore = { endpointURL: 'https://versitygw.klutch-object-store.svc:7070' };

const offering = (backups?: CnpgBackupStore): CnpgOffering => ({
  services: ['pg15'],
  plans: planMatrix({ prefix: 'demo', topologies: { single: ['small'] }, ssl: 'none' }),
  images: { pg15: 'postgres:15' },
  sizes: { small: { storage: '1Gi', cpu: '1', memory: '1Gi' } },
  instances: { single: 1 },
  sourceRanges: ['10.0.0.0/8'],
  ...(backups ? { backups } : {}),
});
const build = (backups?: CnpgBackupStore) =>
  new DataService({
    name: 'demo',
    kind: 'DemoInstance',
    defaultBackend: 'cnpg',
    sizes: ['small'],
    cnpg: offering(backups),
    parameters: [{ name: 'archiveTimeout', schema: s.integer({ description: 'Seconds.' }), keys: { cnpg: 'archive_timeout' } }],
  });

const clusterCrdSchema = parseYaml(
  readFileSync(join(ROOT, 'schemas', 'cloudnative-pg', 'postgresql.cnpg.io_clusters.yaml'), 'utf8'),
)[0] as any;
/** CloudNativePG's Cluster CRD (schemas/cloudnative-pg), which every composed Cluster must satisfy. */
const clusterCrd = validatorFor(clusterCrdSchema, 'v1');

/** The Object of a Ready Cluster as Crossplane observed it, CNPG's ContinuousArchiving condition `archiving`. */
const clusterObserved = (archiving: 'True' | 'False') => ({
  status: {
    conditions: [
      { type: 'Ready', status: 'True' },
      { type: 'Synced', status: 'True' },
    ],
    atProvider: {
      manifest: {
        status: {
          phase: 'Cluster in healthy state',
          conditions: [
            {
              type: 'ContinuousArchiving',
              status: archiving,
              reason: archiving === 'True' ? 'ContinuousArchivingSuccess' : 'ContinuousArchivingFailing',
            },
          ],
        },
      },
    },
  },
});

/**
 * The function's resources for instance `pg` of `namespace` (a v1 claim, or the v2 namespaced composite), its Cluster
 * observed with working WAL archiving unless `observed` says otherwise.
 */
function compose(
  backups: CnpgBackupStore | undefined,
  namespace = 'team-a',
  target: 'v1' | 'v2' = 'v1',
  more: Record<string, unknown> = {},
  observed: Record<string, Record<string, unknown>> = { 'cnpg-demo': clusterObserved('True') },
) {
  const input = inputFor(build(backups).api.backends.cnpg as Recipe, { backend: 'cnpg', service: 'demo', settings: SETTINGS, target });
  const xr: Record<string, any> =
    target === 'v1'
      ? {
          apiVersion: 'x/v1',
          kind: 'XDemo',
          metadata: { name: 'pg-x', labels: { 'crossplane.io/claim-name': 'pg', 'crossplane.io/claim-namespace': namespace } },
          spec: { service: 'pg15', plan: 'demo-single-small', ...more },
        }
      : {
          apiVersion: 'x/v1',
          kind: 'Demo',
          metadata: { name: 'pg', namespace, uid: 'u-1' },
          spec: { service: 'pg15', plan: 'demo-single-small', ...more },
        };
  return runFunction(requestOf(input, xr, observed));
}
const manifest = (rsp: ReturnType<typeof compose>, name: string): any =>
  (rsp.desired?.resources[name]?.resource as any)?.spec.forProvider.manifest;

describe('a cnpg offering with an object store', () => {
  it.each(['v1', 'v2'] as const)("archives each instance's WAL into its tenant's bucket with that tenant's keys (%s)", (target) => {
    const rsp = compose(STORE, 'team-a', target);
    expect(fatalMessages(rsp)).toEqual([]);
    const secret = (key: string) => ({ name: 'klutch-backup-store', key });
    expect(manifest(rsp, 'cnpg-demo').spec.backup).toEqual({
      retentionPolicy: '7d',
      barmanObjectStore: {
        destinationPath: 's3://klutch-team-a/',
        endpointURL: 'https://versitygw.klutch-object-store.svc:7070',
        endpointCA: secret('ca.crt'),
        s3Credentials: { accessKeyId: secret('ACCESS_KEY_ID'), secretAccessKey: secret('ACCESS_SECRET_KEY') },
        wal: { compression: 'gzip', maxParallel: 4 },
        data: { compression: 'gzip' },
      },
    });
    // A segment switched every minute when anything was written: at most a minute of commits outside the bucket, and
    // a new instance archives (and takes its first backup) a minute after it starts, not CNPG's five.
    expect(manifest(rsp, 'cnpg-demo').spec.postgresql.parameters).toMatchObject({ archive_timeout: '60' });
    // Another tenant's instance of the same name writes to its own bucket, never to team-a's.
    expect(manifest(compose(STORE, 'team-b', target), 'cnpg-demo').spec.backup.barmanObjectStore.destinationPath).toBe(
      's3://klutch-team-b/',
    );
  });

  it('takes a base backup when the instance is up and then on schedule, owned by the Cluster', () => {
    const rsp = compose({ ...STORE, schedule: '0 30 2 * * *', retention: '4w', bucket: 'backups-%s.eu', privateCA: false });
    expect(manifest(rsp, 'cnpg-demo-scheduled-backup')).toEqual({
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'ScheduledBackup',
      metadata: { name: 'pg', namespace: 'team-a' },
      spec: {
        cluster: { name: 'pg' },
        schedule: '0 30 2 * * *',
        method: 'barmanObjectStore',
        immediate: true,
        backupOwnerReference: 'cluster',
      },
    });
    const backup = manifest(rsp, 'cnpg-demo').spec.backup;
    expect([backup.retentionPolicy, backup.barmanObjectStore.destinationPath, backup.barmanObjectStore.endpointCA]).toEqual([
      '4w',
      's3://backups-team-a.eu/',
      undefined,
    ]);
    expect(manifest(compose({ ...STORE, schedule: false }), 'cnpg-demo-scheduled-backup')).toBeUndefined();
  });

  it("switches WAL segments after the offering's archiveTimeout, or the claim's own; checkpoints at once when asked", () => {
    const timeout = (rsp: ReturnType<typeof compose>) => manifest(rsp, 'cnpg-demo').spec.postgresql.parameters.archive_timeout;
    expect(timeout(compose({ ...STORE, archiveTimeout: 300 }))).toBe('300');
    // A spread checkpoint unless the offering asks for an immediate one (CNPG's default).
    const data = (b: CnpgBackupStore) => manifest(compose(b), 'cnpg-demo').spec.backup.barmanObjectStore.data;
    expect([data(STORE), data({ ...STORE, immediateCheckpoint: true })]).toEqual([
      { compression: 'gzip' },
      { compression: 'gzip', immediateCheckpoint: true },
    ]);
    expect(timeout(compose({ ...STORE, archiveTimeout: 300 }, 'team-a', 'v1', { parameters: { archiveTimeout: 30 } }))).toBe('30');
    // Without a store nothing is archived, and CNPG's own default stays.
    expect(manifest(compose(undefined), 'cnpg-demo').spec.postgresql?.parameters?.archive_timeout).toBeUndefined();
  });

  it.each(['v1', 'v2'] as const)(
    'schedules backups only once CNPG says WAL archiving works, and the claim does not wait for the schedule (%s)',
    (target) => {
      // The instance's other resources applied and Ready, so that the claim's condition is the schedule's doing.
      const applied = {
        status: {
          conditions: [
            { type: 'Ready', status: 'True' },
            { type: 'Synced', status: 'True' },
          ],
        },
      };
      const others = Object.fromEntries(
        ['network-policy', 'session-reaper', 'session-reaper-secret'].map((n) => [`cnpg-demo-${n}`, applied]),
      );
      const at = (observed: Record<string, Record<string, unknown>>) => compose(STORE, 'team-a', target, {}, { ...others, ...observed });
      const ready = (rsp: ReturnType<typeof compose>) =>
        rsp.conditions.filter((c) => c.type === 'DataServiceReady').map((c) => [c.status, c.reason]);
      const archiving = (rsp: ReturnType<typeof compose>) =>
        rsp.conditions.filter((c) => c.type === 'ContinuousArchiving').map((c) => c.status);
      // CNPG starts a backup of a Cluster whose archiving does not work by waiting for it, holding every other
      // Cluster's backups meanwhile: no schedule while the Cluster is new or its archiving fails, the claim Ready.
      expect(compose(STORE, 'team-a', target, {}, {}).desired?.resources['cnpg-demo-scheduled-backup']).toBeUndefined();
      const failingArchive = at({ 'cnpg-demo': clusterObserved('False') });
      expect(failingArchive.desired?.resources['cnpg-demo-scheduled-backup']).toBeUndefined();
      expect(ready(failingArchive)).toEqual([[Status.STATUS_CONDITION_TRUE, 'Available']]);
      // It serves on, and says beside that it is not backed up.
      expect(archiving(failingArchive)).toEqual([Status.STATUS_CONDITION_FALSE]);
      // Archiving works: the schedule is composed, and the claim stays Ready while Crossplane creates it.
      const first = at({ 'cnpg-demo': clusterObserved('True') });
      expect(manifest(first, 'cnpg-demo-scheduled-backup')).toMatchObject({ kind: 'ScheduledBackup', spec: { immediate: true } });
      expect(first.desired?.resources['cnpg-demo-scheduled-backup']?.ready).toBe(Ready.READY_TRUE);
      expect(ready(first)).toEqual([[Status.STATUS_CONDITION_TRUE, 'Available']]);
      expect(archiving(first)).toEqual([Status.STATUS_CONDITION_TRUE]);
      // Once there, it stays when archiving fails later (the Cluster's condition changing deletes no schedule), and
      // its failure to apply is the claim's.
      const kept = at({ 'cnpg-demo': clusterObserved('False'), 'cnpg-demo-scheduled-backup': applied });
      expect(manifest(kept, 'cnpg-demo-scheduled-backup')).toMatchObject({ kind: 'ScheduledBackup' });
      const refused = {
        status: { conditions: [{ type: 'Synced', status: 'False', reason: 'ReconcileError', message: 'scheduledbackups is forbidden' }] },
      };
      const failing = at({ 'cnpg-demo': clusterObserved('True'), 'cnpg-demo-scheduled-backup': refused });
      expect(failing.desired?.resources['cnpg-demo-scheduled-backup']?.ready).toBe(Ready.READY_FALSE);
      expect(failing.conditions.filter((c) => c.type === 'DataServiceReady').map((c) => c.message)).toEqual([
        'cnpg demo: scheduledbackups is forbidden',
      ]);
    },
  );

  it("names the instance's label as the cnpg backend writes it on the Cluster", () => {
    expect(INSTANCE_LABEL).toBe(CNPG_INSTANCE_LABEL);
  });

  it('shows the last backup and the start of the recoverable window in `kubectl get`, from the Cluster status the claim holds', () => {
    const columns = (backups?: CnpgBackupStore) => build(backups).api.printerColumns.map((c) => `${c.name} ${c.jsonPath}`);
    expect(columns(STORE)).toEqual([
      'ManagedResource .status.managed.state',
      'Archiving .status.managed.conditions[?(@.type=="ContinuousArchiving")].status',
      'LastBackup .status.managed.lastSuccessfulBackup',
      'RecoverableFrom .status.managed.firstRecoverabilityPoint',
    ]);
    expect(columns(undefined)).toEqual(['ManagedResource .status.managed.state']);
    // CloudNativePG's Cluster status has both fields (status.managed is the Cluster's status).
    const status = clusterCrdSchema.spec.versions[0].schema.openAPIV3Schema.properties.status.properties;
    expect(Object.keys(status)).toEqual(expect.arrayContaining(['lastSuccessfulBackup', 'firstRecoverabilityPoint']));
  });

  it('composes no backup and no schedule without a store', () => {
    const rsp = compose(undefined);
    expect(manifest(rsp, 'cnpg-demo').spec.backup).toBeUndefined();
    expect(Object.keys(rsp.desired?.resources ?? {}).filter((k) => k.includes('backup'))).toEqual([]);
  });

  it("fails the claim, naming the fix, when the tenant's bucket name would be longer than S3 takes", () => {
    const rsp = compose(STORE, 'n'.repeat(57));
    expect(fatalMessages(rsp)).toEqual([
      expect.stringMatching(/spec\.backup\.barmanObjectStore\.destinationPath.*S3 takes bucket names of 63 characters at most/),
    ]);
  });

  it.each([
    [
      'an endpoint that is no URL',
      { endpointURL: 's3.example.com' },
      'cnpg.backups.endpointURL: "s3.example.com" is not the URL of an S3 endpoint',
    ],
    ['an endpoint with a path', { endpointURL: 'https://s3.example.com/bucket' }, 'write the scheme, host and port only'],
    ['a bucket without the tenant', { bucket: 'backups' }, 'cnpg.backups.bucket: "backups" is not a bucket name with one %s'],
    ['a bucket of capitals', { bucket: 'Backups-%s' }, 'use lower-case letters, digits, dots and dashes around one %s'],
    ['a retention CNPG does not read', { retention: '7 days' }, 'cnpg.backups.retention: "7 days" is not a retention period'],
    ['a five-field schedule', { schedule: '0 0 * * *' }, 'cnpg.backups.schedule: "0 0 * * *" is not a cron expression of six fields'],
    ['an archive timeout of zero', { archiveTimeout: 0 }, 'cnpg.backups.archiveTimeout: 0 is not a number of seconds from 1 to 86400'],
    ['an archive timeout in minutes', { archiveTimeout: 1.5 }, 'write whole seconds'],
  ] as const)('fails at synth time on %s', (_name, b, message) => {
    expect(() => build({ ...STORE, ...b })).toThrow(message);
  });
});

describe('a cnpg instance restored from backups (restoreFrom)', () => {
  const restored = (restoreFrom: Record<string, unknown>, target: 'v1' | 'v2' = 'v1') => {
    const rsp = compose(STORE, 'team-a', target, { restoreFrom });
    expect(fatalMessages(rsp)).toEqual([]);
    return manifest(rsp, 'cnpg-demo');
  };

  it.each(['v1', 'v2'] as const)(
    "recovers from the source instance's archive in the tenant's bucket up to the point in time, as CNPG's CRD accepts (%s)",
    (target) => {
      const cluster = restored({ instance: 'orders', pointInTime: '2026-12-03T04:00:00Z' }, target);
      const secret = (key: string) => ({ name: 'klutch-backup-store', key });
      expect(cluster.spec.bootstrap).toEqual({
        recovery: { source: 'origin', database: 'app', owner: 'app', recoveryTarget: { targetTime: '2026-12-03T04:00:00Z' } },
      });
      expect(cluster.spec.externalClusters).toEqual([
        {
          name: 'origin',
          barmanObjectStore: {
            serverName: 'orders',
            destinationPath: 's3://klutch-team-a/',
            endpointURL: STORE.endpointURL,
            endpointCA: secret('ca.crt'),
            s3Credentials: { accessKeyId: secret('ACCESS_KEY_ID'), secretAccessKey: secret('ACCESS_SECRET_KEY') },
            // The source's WAL fetched four segments at a time while it recovers.
            wal: { maxParallel: 4 },
          },
        },
      ]);
      // Its own WAL goes to its own place in the same bucket (Barman's server name is the Cluster's: pg).
      expect(cluster.spec.backup.barmanObjectStore.destinationPath).toBe('s3://klutch-team-a/');
      expect(cluster.spec.backup.barmanObjectStore.serverName).toBeUndefined();
      expect(clusterCrd(cluster).errors).toEqual([]);
    },
  );

  it("recovers to the end of the source's WAL without a point in time; a new instance bootstraps by initdb", () => {
    expect(restored({ instance: 'orders' }).spec.bootstrap).toEqual({ recovery: { source: 'origin', database: 'app', owner: 'app' } });
    const fresh = manifest(compose(STORE), 'cnpg-demo');
    expect([fresh.spec.bootstrap, fresh.spec.externalClusters]).toEqual([
      {
        initdb: {
          database: 'app',
          owner: 'app',
          postInitSQL: [...CNPG_SUPERUSER_SETTINGS],
          postInitApplicationSQL: [...CNPG_OWNER_TRIGGER_SQL],
        },
      },
      undefined,
    ]);
    expect(clusterCrd(fresh).errors).toEqual([]);
  });

  it('is a field of the XRD only with a store, immutable, refused by other compositions and not added later', () => {
    const field = (backups?: CnpgBackupStore) => (build(backups).api.spec.toJSON().properties as any).restoreFrom;
    expect(field(undefined)).toBeUndefined();
    expect(field(STORE)).toMatchObject({
      required: ['instance'],
      properties: { pointInTime: { format: 'date-time' } },
      'x-kubernetes-validations': [{ rule: 'self == oldSelf' }],
    });
    const withStore = JSON.stringify(build(STORE).api.rules('v1'));
    expect(withStore).toContain('restoreFrom is only offered by the cnpg-demo composition');
    expect(withStore).toContain('has(self.restoreFrom) == has(oldSelf.restoreFrom)');
    expect(JSON.stringify(build(undefined).api.rules('v1'))).not.toContain('restoreFrom');
  });
});

/** Instance `name`'s Cluster in `namespace` as Crossplane finds it, CNPG's ContinuousArchiving condition `archiving`. */
const cluster = (namespace: string, name: string, archiving?: 'True' | 'False', message = '') => ({
  apiVersion: 'postgresql.cnpg.io/v1',
  kind: 'Cluster',
  metadata: { name, namespace, labels: { [INSTANCE_LABEL]: name } },
  status: { conditions: archiving ? [{ type: 'ContinuousArchiving', status: archiving, message }] : [] },
});

describe('a cnpg Backup claim', () => {
  const input = inputOf(api('backup'), 'cnpg');
  /** The input on `target` and Backup claim `name` of instance pg in team-a as its composite. */
  const backupOn = (target: 'v1' | 'v2', name: string) => ({
    own: inputFor(api('backup').backends.cnpg as Recipe, { backend: 'cnpg', service: 'backup', settings: SETTINGS, target }),
    xr:
      target === 'v1'
        ? compositeOf(api('backup'), 'cnpg', { instanceRef: 'pg', serviceInstanceType: 'postgresql' }, { name, namespace: 'team-a' })
        : {
            apiVersion: 'anynines.com/v1',
            kind: 'Backup',
            metadata: { name, namespace: 'team-a', uid: 'u-1' },
            spec: { instanceRef: 'pg', serviceInstanceType: 'postgresql' },
          },
  });

  it.each(['v1', 'v2'] as const)(
    "waits for its instance's WAL archiving before CNPG's Backup is made, saying why on the claim (%s)",
    (target) => {
      const { own, xr } = backupOn(target, 'nightly');
      const run = (found?: Record<string, unknown>[], observed: Record<string, Record<string, unknown>> = {}) => {
        const req = requestOf(own, xr, observed);
        return runFunction(found ? answer(req, WAITS_FOR_REQUIREMENT, found) : req);
      };
      const said = (rsp: ReturnType<typeof run>) => rsp.conditions.map((c) => [c.status, c.reason, c.message]);
      // First asked for: the instance's Cluster, by its label, in the claim's namespace only.
      const first = run();
      expect(first.desired?.resources).toEqual({});
      expect(first.desired?.composite?.ready).toBe(Ready.READY_FALSE);
      expect(first.requirements?.extraResources?.[WAITS_FOR_REQUIREMENT]).toMatchObject({
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'Cluster',
        namespace: 'team-a',
        matchLabels: { labels: { [INSTANCE_LABEL]: 'pg' } },
      });
      // CNPG says archiving fails: no Backup, and the claim says why in CNPG's words and what to do, as the instance
      // claim's ContinuousArchiving does (Barman's exit status 2: the store could not be reached; 4: it answered with
      // an error), under ArchivingFailing: waiting alone does not mend it.
      const failing = run([cluster('team-a', 'pg', 'False', 'unexpected failure invoking barman-cloud-wal-archive: exit status 4')]);
      expect(failing.desired?.resources).toEqual({});
      expect(said(failing)).toEqual([
        [
          Status.STATUS_CONDITION_FALSE,
          'ArchivingFailing',
          expect.stringMatching(
            /^cnpg backup: waiting for Cluster pg to archive its WAL: ContinuousArchiving False, unexpected failure invoking barman-cloud-wal-archive: exit status 4; this instance is not backed up while it lasts: the object store answered with an error .*Secret klutch-backup-store/,
          ),
        ],
      ]);
      const unreachable = run([cluster('team-a', 'pg', 'False', 'unexpected failure invoking barman-cloud-wal-archive: exit status 2')]);
      expect(said(unreachable)).toEqual([
        [
          Status.STATUS_CONDITION_FALSE,
          'ArchivingFailing',
          expect.stringMatching(
            /exit status 2; this instance is not backed up while it lasts: the object store could not be reached or verified;/,
          ),
        ],
      ]);
      // Archiving not reported yet (CNPG writes the condition at its first archive): waiting, as Provisioning.
      expect(said(run([cluster('team-a', 'pg')]))).toEqual([
        [Status.STATUS_CONDITION_FALSE, 'Provisioning', 'cnpg backup: waiting for Cluster pg to archive its WAL'],
      ]);
      // No Cluster of that instance, or only another namespace's (a lax fetcher): still waiting.
      expect(said(run([]))[0]?.[2]).toBe('cnpg backup: waiting for Cluster pg to archive its WAL: there is no Cluster pg');
      expect(run([cluster('team-b', 'pg', 'True')]).desired?.resources).toEqual({});
      // Archiving works: the Backup is made, with the same requirement so that Crossplane's requirements settle.
      const made = run([cluster('team-a', 'pg', 'True')]);
      expect(Object.keys(made.desired?.resources ?? {})).toEqual(['cnpg-backup']);
      expect(made.requirements?.extraResources?.[WAITS_FOR_REQUIREMENT]).toEqual(
        first.requirements?.extraResources?.[WAITS_FOR_REQUIREMENT],
      );
      // Once made, it stays whatever the Cluster says later, and nothing more is asked.
      const later = run(undefined, { 'cnpg-backup': made.desired?.resources['cnpg-backup']?.resource as Record<string, unknown> });
      expect(Object.keys(later.desired?.resources ?? {})).toEqual(['cnpg-backup']);
      expect(later.requirements?.extraResources?.[WAITS_FOR_REQUIREMENT]).toBeUndefined();
    },
  );
  const observed = (status: Record<string, unknown>) => ({
    status: { atProvider: { manifest: { status } }, conditions: [{ type: 'Ready', status: 'False', reason: 'Unavailable' }] },
  });

  it("is a CNPG Backup of the instance's Cluster in the claim's namespace, by Barman Cloud", () => {
    const xr = compositeOf(
      api('backup'),
      'cnpg',
      { instanceRef: 'pg', serviceInstanceType: 'postgresql' },
      { name: 'nightly', namespace: 'team-a' },
    );
    const rsp = runFunction(answer(requestOf(input, xr, {}), WAITS_FOR_REQUIREMENT, [cluster('team-a', 'pg', 'True')]));
    expect(fatalMessages(rsp)).toEqual([]);
    const object = rsp.desired?.resources['cnpg-backup']?.resource as any;
    expect(object.spec.forProvider.manifest).toEqual({
      apiVersion: 'postgresql.cnpg.io/v1',
      kind: 'Backup',
      metadata: { name: 'nightly', namespace: 'team-a', labels: { [CNPG_CLUSTER_LABEL]: 'pg' } },
      spec: { cluster: { name: 'pg' }, method: 'barmanObjectStore' },
    });
    expect(object.spec.readiness.celQuery).toContain("object.status.phase == 'completed'");
  });

  it.each(['v1', 'v2'] as const)(
    "names the backup of its instance it waits behind, a scheduled one or another claim's, in its namespace only (%s)",
    (target) => {
      const { own, xr } = backupOn(target, 'now');
      /** A CNPG Backup as Crossplane finds it (or as the Object observes it). */
      const backup = (name: string, made: string, phase?: string, o: { ns?: string; cluster?: string; startedAt?: string } = {}) => ({
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'Backup',
        metadata: { name, namespace: o.ns ?? 'team-a', creationTimestamp: made, labels: { [CNPG_CLUSTER_LABEL]: o.cluster ?? 'pg' } },
        spec: { cluster: { name: o.cluster ?? 'pg' } },
        status: { ...(phase ? { phase } : {}), ...(o.startedAt ? { startedAt: o.startedAt } : {}) },
      });
      const mine = (phase?: string) => ({
        status: {
          atProvider: { manifest: backup('now', '2026-12-07T10:00:05Z', phase) },
          conditions: [{ type: 'Ready', status: 'False', reason: 'Unavailable' }],
        },
      });
      const run = (phase: string | undefined, found?: Record<string, unknown>[]) => {
        const req = answer(requestOf(own, xr, { 'cnpg-backup': mine(phase) }), WAITS_FOR_REQUIREMENT, [cluster('team-a', 'pg', 'True')]);
        return runFunction(found ? answer(req, QUEUE_REQUIREMENT, found) : req);
      };
      const said = (rsp: ReturnType<typeof run>) => rsp.conditions.find((c) => c.type === 'DataServiceReady');
      const first = run('pending');
      expect(fatalMessages(first)).toEqual([]);
      expect(first.requirements?.extraResources?.[QUEUE_REQUIREMENT]).toEqual({
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'Backup',
        namespace: 'team-a',
        matchLabels: { labels: { [CNPG_CLUSTER_LABEL]: 'pg' } },
      });
      // The instance's scheduled backup runs: the claim names it, and why it waits.
      const scheduled = backup('pg-daily-20261207100000', '2026-12-07T10:00:00Z', 'running', { startedAt: '2026-12-07T10:00:01Z' });
      const behind = said(run('pending', [scheduled, backup('now', '2026-12-07T10:00:05Z', 'pending')]));
      expect(behind).toMatchObject({
        status: Status.STATUS_CONDITION_FALSE,
        reason: 'Queued',
        message:
          'cnpg backup: pending; waits for Backup pg-daily-20261207100000, running since 2026-12-07T10:00:01Z: CloudNativePG takes one backup of an instance at a time, the oldest first',
      });
      // The data service's hop, with what to do (lib/claim-hold.ts), as the claim in the app cluster says it.
      expect(conditionHold({ type: 'DataServiceReady', status: 'False', reason: behind!.reason, message: behind!.message })).toMatchObject({
        hop: 'data service',
        todo: expect.stringContaining('starts this one once the one named is done'),
      });
      // An older claim's Backup, not started yet, goes first; a younger one does not.
      expect(said(run(undefined, [backup('earlier', '2026-12-07T09:59:59Z', 'pending')]))?.message).toContain(
        'waits for Backup earlier, made before it and not started yet',
      );
      expect(said(run('pending', [backup('later', '2026-12-07T10:00:06Z', 'pending')]))?.reason).toBe('Provisioning');
      // Done ones, another instance's and another namespace's say nothing; nor does anything once its own runs.
      const others = [
        backup('old', '2026-12-07T09:00:00Z', 'completed'),
        backup('broken', '2026-12-07T09:30:00Z', 'failed'),
        backup('theirs', '2026-12-07T09:00:00Z', 'running', { cluster: 'other' }),
        backup('victims', '2026-12-07T09:00:00Z', 'running', { ns: 'team-b' }),
      ];
      expect(said(run('pending', others))?.reason).toBe('Provisioning');
      const runs = run('running', [scheduled]);
      expect(said(runs)).toMatchObject({ reason: 'Provisioning', message: 'cnpg backup: running' });
      expect(runs.requirements?.extraResources?.[QUEUE_REQUIREMENT]).toBeUndefined();
    },
  );

  it.each([
    ['running', { phase: 'running' }, { status: 'False', reason: 'Provisioning', message: 'cnpg backup: running' }],
    [
      'an instance without backups',
      { phase: 'failed', error: 'cannot proceed with the backup as the cluster has no backup section' },
      {
        status: 'False',
        reason: 'ProvisioningFailed',
        message: expect.stringMatching(
          /^cnpg backup: cannot proceed .* no backup section; this instance's offering keeps no backups: the platform operator gives/,
        ),
      },
    ],
    [
      'keys the store refuses',
      { phase: 'failed', error: 'encountered an error while taking a backup: exit status 4 (AccessDenied)' },
      {
        status: 'False',
        reason: 'ProvisioningFailed',
        message: expect.stringMatching(
          /\(AccessDenied\); the object store refused the tenant's keys: .* Secret klutch-backup-store .* new Backup claim$/,
        ),
      },
    ],
    [
      'a store it cannot reach',
      { phase: 'failed', error: 'barman-cloud-backup: EndpointConnectionError: Could not connect to the endpoint URL' },
      {
        status: 'False',
        reason: 'ProvisioningFailed',
        message: expect.stringContaining('; the object store could not be reached or verified'),
      },
    ],
    [
      'something else',
      { phase: 'failed', error: 'the instance is fenced' },
      { status: 'False', reason: 'ProvisioningFailed', message: 'cnpg backup: the instance is fenced' },
    ],
  ])("%s: the claim's condition says it in CNPG's words, and what to do where that is known", (_name, status, want) => {
    expect(observeStatus(input, observed(status)).condition).toEqual(want);
  });
});
