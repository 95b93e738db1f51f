/**
 * Backups of the cnpg backend (issue 35; docs/decisions/cnpg-backups.md): CloudNativePG's in-tree Barman Cloud
 * archives each instance's WAL and stores its base backups in an S3 object store the operator names in the offering
 * (`CnpgOffering.backups`). Each tenant namespace of the control plane has a bucket of its own and a Secret with keys
 * that reach only that bucket (the platform's object store makes both per tenant: harness/platform/object-store.ts),
 * so one tenant's instances never read or overwrite another's backups. A `Backup` claim on `cnpg-backup` becomes a
 * CNPG `Backup` of its instance's Cluster, and the instance keeps a daily `ScheduledBackup` when the offering asks.
 */
import type { Companion, ErrorAdvice, FieldMapping, Recipe, RelatedMatch, RestoredBy, ShownCondition } from '../recipe';
import { kubernetesCompanion, kubernetesObject, OBJECT_STATUS } from './kubernetes-object';
import { CNPG_OPERATOR_ADVICE } from './cnpg-operator';

/** The application database and its owner (backends/cnpg.ts CNPG_APP_OWNER; not imported: cnpg.ts imports this). */
const CNPG_APP_DATABASE = 'app';
/** The label naming the instance on its Cluster (backends/cnpg.ts CNPG_INSTANCE_LABEL; not imported, as above). */
export const INSTANCE_LABEL = 'klutch.anynines.com/instance';

/** The claim's name and namespace as the function reads them; a v2 composite is namespaced itself (no label). */
const CLAIM_NAME = 'metadata.labels[crossplane.io/claim-name]';
const CLAIM_NAMESPACE = 'metadata.labels[crossplane.io/claim-namespace]';

/** CloudNativePG's Backup and ScheduledBackup (postgresql.cnpg.io/v1). */
export const CNPG_BACKUP = { apiVersion: 'postgresql.cnpg.io/v1', kind: 'Backup' } as const;
export const CNPG_SCHEDULED_BACKUP = { apiVersion: 'postgresql.cnpg.io/v1', kind: 'ScheduledBackup' } as const;

/** The keys of a tenant's object-store Secret: CNPG's own names for S3 keys, and the store's CA. */
export const BACKUP_STORE_KEYS = { accessKeyId: 'ACCESS_KEY_ID', secretAccessKey: 'ACCESS_SECRET_KEY', ca: 'ca.crt' } as const;

/** Where an operator's object store is, and how backups are kept there. */
export interface CnpgBackupStore {
  /** The store's S3 endpoint, as the instance Pods reach it (`https://versitygw.klutch-object-store.svc:7070`). */
  readonly endpointURL: string;
  /**
   * The bucket of an instance's backups, `%s` standing for the claim's namespace on the control plane (one bucket per
   * tenant). Every instance's backups go below its own name there (Barman's server name). @default klutch-%s
   */
  readonly bucket?: string;
  /**
   * The Secret the platform keeps in each tenant namespace with that tenant's keys (`ACCESS_KEY_ID`,
   * `ACCESS_SECRET_KEY`) and, when the store's certificate is of a private CA, `ca.crt`. @default klutch-backup-store
   */
  readonly secret?: string;
  /** Whether the Secret has `ca.crt` to verify the store with (a private CA). @default true */
  readonly privateCA?: boolean;
  /** How long base backups and WAL are kept, CNPG's `retentionPolicy` (`7d`, `4w`, `3m`). @default 7d */
  readonly retention?: string;
  /**
   * When each instance takes a base backup, a cron expression of six fields (seconds first, as CNPG reads it); the
   * first is taken as soon as the instance is up. `false`: only on-demand `Backup` claims. @default daily at 00:00
   */
  readonly schedule?: string | false;
  /**
   * Seconds after which an instance that wrote anything switches to a new WAL segment, so it is archived (PostgreSQL's
   * `archive_timeout`): at most this much committed data is outside the archive, and a new instance's archiving —
   * which its first backup waits for — works this long after it starts. A claim's `archiveTimeout` overrides it.
   * A forced segment is 16 MB before compression (a few kB of it when idle). @default 60 (CNPG's own is 300)
   */
  readonly archiveTimeout?: number;
  /**
   * Whether a base backup starts with an immediate checkpoint instead of one spread over PostgreSQL's
   * `checkpoint_completion_target` (CNPG's `data.immediateCheckpoint`): a backup starts seconds sooner (11-13 s for a
   * small instance under load, measured), for a burst of writes at its start on a big one. @default false (CNPG's)
   */
  readonly immediateCheckpoint?: boolean;
}

export const DEFAULT_BACKUP_BUCKET = 'klutch-%s';
export const DEFAULT_BACKUP_SECRET = 'klutch-backup-store';
export const DEFAULT_BACKUP_RETENTION = '7d';
export const DEFAULT_BACKUP_SCHEDULE = '0 0 0 * * *';
/**
 * WAL segments archived, and fetched while recovering, at once (CNPG's `wal.maxParallel`; its default is 1). Barman
 * Cloud starts a Python process per segment, about 2-4 s of it start-up: one at a time, a burst of writes is archived
 * minutes after it was committed. bench/backup, 1,178 MiB loaded, a pair in the same hour: the backlog archived 92 s
 * after the load with 4, 283 s with 1, and the backup took 64 s, not 168 s (docs/benchmarks.md).
 */
export const WAL_MAX_PARALLEL = 4;
/** PostgreSQL's setting (and the key of the claim's `archiveTimeout` parameter on cnpg: apis/catalog/postgresql.ts). */
const ARCHIVE_TIMEOUT = 'archive_timeout';

/** PostgreSQL's advice: "a minute or so" (its docs on archive_timeout); CNPG's 5 minutes hold a new instance's backups. */
export const DEFAULT_ARCHIVE_TIMEOUT = 60;
/** The ScheduledBackup's name among the composite's resources (after `cnpg-postgresql`). */
export const CNPG_SCHEDULED_BACKUP_NAME = 'scheduled-backup';

/** S3's rule for bucket names (a namespace, a DNS label, fits it wherever `%s` is). */
const BUCKET = /^[a-z0-9][a-z0-9.-]*[a-z0-9]$/;
/** CNPG's pattern for retentionPolicy (api/v1 BackupConfiguration). */
const RETENTION = /^[1-9][0-9]*[dwm]$/;

/** Checks the offering's `backups`; `fail(field, problem, fix)` throws the definition's error. */
export function checkBackupStore(b: CnpgBackupStore, fail: (field: string, problem: string, fix: string) => never): void {
  let url: URL | undefined;
  try {
    url = new URL(b.endpointURL);
  } catch {
    url = undefined;
  }
  if (!url || !['https:', 'http:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.username)
    fail(
      'cnpg.backups.endpointURL',
      `"${b.endpointURL}" is not the URL of an S3 endpoint`,
      'write the scheme, host and port only, e.g. "https://s3.example.com:443"',
    );
  const bucket = b.bucket ?? DEFAULT_BACKUP_BUCKET;
  if (bucket.split('%s').length !== 2 || !BUCKET.test(bucket.replace('%s', 'ns')))
    fail(
      'cnpg.backups.bucket',
      `"${bucket}" is not a bucket name with one %s for the tenant's namespace`,
      'use lower-case letters, digits, dots and dashes around one %s, e.g. "klutch-%s"',
    );
  const retention = b.retention ?? DEFAULT_BACKUP_RETENTION;
  if (!RETENTION.test(retention))
    fail('cnpg.backups.retention', `"${retention}" is not a retention period`, 'write a number of days, weeks or months: "7d", "4w", "3m"');
  const archiveTimeout = b.archiveTimeout ?? DEFAULT_ARCHIVE_TIMEOUT;
  if (!Number.isInteger(archiveTimeout) || archiveTimeout < 1 || archiveTimeout > 86_400)
    fail(
      'cnpg.backups.archiveTimeout',
      `${archiveTimeout} is not a number of seconds from 1 to 86400`,
      'write whole seconds; PostgreSQL advises a minute or so (60): shorter fills the bucket with near-empty segments',
    );
  const schedule = b.schedule ?? DEFAULT_BACKUP_SCHEDULE;
  if (schedule !== false && schedule.trim().split(/\s+/).length !== 6)
    fail(
      'cnpg.backups.schedule',
      `"${schedule}" is not a cron expression of six fields`,
      'put the seconds first, as CloudNativePG reads it: "0 0 0 * * *" is daily at midnight',
    );
}

/** `s3://<bucket>/` with the longest bucket name S3 takes (63). */
const BUCKET_LIMIT = {
  bytes: 's3://'.length + 63 + 1,
  fix: "S3 takes bucket names of 63 characters at most: shorten the namespace or the offering's cnpg.backups.bucket",
};

/**
 * The tenant's bucket, endpoint and keys at `at` (a `barmanObjectStore`), each field only when `ifSet` is set when
 * given. The bucket comes from the claim's namespace (a v2 composite's own, which the v1 claim label overrides).
 */
function storeFields(b: CnpgBackupStore, at: string, ifSet?: string): FieldMapping[] {
  const secret = b.secret ?? DEFAULT_BACKUP_SECRET;
  const destination = { type: 'format', format: `s3://${b.bucket ?? DEFAULT_BACKUP_BUCKET}/` } as const;
  const fields: FieldMapping[] = [
    { from: 'metadata.namespace', to: `${at}.destinationPath`, transforms: [destination], limit: BUCKET_LIMIT },
    { from: CLAIM_NAMESPACE, to: `${at}.destinationPath`, transforms: [destination], limit: BUCKET_LIMIT },
    { to: `${at}.endpointURL`, value: b.endpointURL },
    ...((b.privateCA ?? true) ? [{ to: `${at}.endpointCA`, value: { name: secret, key: BACKUP_STORE_KEYS.ca } }] : []),
    { to: `${at}.s3Credentials.accessKeyId`, value: { name: secret, key: BACKUP_STORE_KEYS.accessKeyId } },
    { to: `${at}.s3Credentials.secretAccessKey`, value: { name: secret, key: BACKUP_STORE_KEYS.secretAccessKey } },
  ];
  return ifSet ? fields.map((f) => ({ ...f, ifSet })) : fields;
}

/** The Cluster's `spec.backup`: WAL archived and base backups stored in the tenant's bucket for the retention period. */
export function clusterBackupFields(b: CnpgBackupStore): FieldMapping[] {
  const at = 'spec.backup.barmanObjectStore';
  return [
    { to: 'spec.backup.retentionPolicy', value: b.retention ?? DEFAULT_BACKUP_RETENTION },
    ...storeFields(b, at),
    // Compressed in the Pod: fewer bytes over the network and in the bucket, for some CPU.
    { to: `${at}.wal.compression`, value: 'gzip' },
    { to: `${at}.wal.maxParallel`, value: WAL_MAX_PARALLEL },
    { to: `${at}.data.compression`, value: 'gzip' },
    ...(b.immediateCheckpoint ? [{ to: `${at}.data.immediateCheckpoint`, value: true }] : []),
    // A string, as CNPG takes settings; seconds when unitless. The claim's parameters are applied after the fields.
    { to: `spec.postgresql.parameters.${ARCHIVE_TIMEOUT}`, value: String(b.archiveTimeout ?? DEFAULT_ARCHIVE_TIMEOUT) },
  ];
}

/** The claim field that makes an instance a restore of another's backups (apis/dataservice.ts gives its schema). */
export const RESTORE_FROM = 'spec.restoreFrom';
/** The name of the source in the Cluster's `externalClusters` (CNPG recovers from an external cluster's archive). */
export const CNPG_RESTORE_SOURCE = 'origin';

/**
 * A new instance that recovers from another instance's backups in the tenant's bucket (`restoreFrom.instance`: its
 * Barman server name, which the source keeps after its claim is deleted, for the retention period), up to
 * `restoreFrom.pointInTime` or else the end of the archived WAL: CNPG's `bootstrap.recovery` from an external
 * cluster, with the application database and owner named as `initdb` names them, so bindings work the same. The
 * instance's own archive is under its own name; the source's is only read.
 */
export function clusterRecoveryFields(b: CnpgBackupStore): FieldMapping[] {
  const recovery = 'spec.bootstrap.recovery';
  const source = 'spec.externalClusters[0]';
  const ifSet = RESTORE_FROM;
  return [
    { to: `${recovery}.source`, value: CNPG_RESTORE_SOURCE, ifSet },
    { to: `${recovery}.database`, value: CNPG_APP_DATABASE, ifSet },
    { to: `${recovery}.owner`, value: CNPG_APP_DATABASE, ifSet },
    { from: `${RESTORE_FROM}.pointInTime`, to: `${recovery}.recoveryTarget.targetTime` },
    { to: `${source}.name`, value: CNPG_RESTORE_SOURCE, ifSet },
    { from: `${RESTORE_FROM}.instance`, to: `${source}.barmanObjectStore.serverName` },
    ...storeFields(b, `${source}.barmanObjectStore`, ifSet),
    { to: `${source}.barmanObjectStore.wal.maxParallel`, value: WAL_MAX_PARALLEL, ifSet },
  ];
}

/** The Cluster's `ContinuousArchiving` condition True, as the Object that wraps it observed it. */
export const ARCHIVING_WORKS = {
  at: 'status.atProvider.manifest.status.conditions',
  has: { type: 'ContinuousArchiving', status: 'True' },
  observed: true,
} as const;

/**
 * The instance claim shows CNPG's `ContinuousArchiving` beside DataServiceReady: an instance whose WAL cannot be
 * archived serves on, and without this its backups would stop unseen (the ScheduledBackup waits for archiving to work,
 * and a Backup claim waits with it). What to do, by what CNPG says.
 */
export function archivingCondition(b: CnpgBackupStore): ShownCondition {
  return { at: ARCHIVING_WORKS.at, type: 'ContinuousArchiving', advice: archivingAdvice(b.secret ?? DEFAULT_BACKUP_SECRET) };
}

/**
 * What to do when CNPG's ContinuousArchiving is False, by its words: on the instance claim's condition, and on a
 * Backup claim waiting for it (ARCHIVING_INSTANCE). `secret` is the tenant's object-store Secret.
 */
function archivingAdvice(secret: string): ErrorAdvice[] {
  // CNPG says only how Barman Cloud exited (its cloud_cli.py): 1 an operation that failed with the store reachable, 2 a
  // store it could not reach, 4 any other error (the store's refusal among them). Its words are in the instance's log.
  return [
    {
      // barman-cloud-check-wal-archive, which CNPG runs before a new cluster's first archive, refuses a place that
      // holds WAL ("Expected empty archive"), and exits 1.
      match: 'empty archive|not empty|exit status 1\\b',
      advice: `this instance has no backups. Barman Cloud refused its archive with the store reachable, which for a new instance means an instance of this name was deleted and its backups are still kept under the name, where CloudNativePG archives nothing for another instance ("Expected empty archive" in the instance's log). Delete the instance's claim and create it under a name of its own (the deleted instance's backups stay restorable with restoreFrom.instance); the name is free again once the platform operator has removed them from the bucket`,
    },
    {
      match:
        'exit status 2\\b|could not connect|EndpointConnectionError|connection refused|timed? ?out|name or service not known|no route to host|certificate',
      advice: `this instance is not backed up while it lasts: the object store could not be reached or verified; the platform operator checks that it runs, that the instance reaches the endpoint of the offering's backups and that the CA in Secret ${secret} issued its certificate`,
    },
    {
      match: '.',
      advice: `this instance is not backed up while it lasts: the object store answered with an error (the instance's log has its words); the platform operator checks the tenant's keys in Secret ${secret} in the instance's namespace on the control plane (the bind backend makes it again within 10 minutes) and the store's log`,
    },
  ];
}

/**
 * The instance's ScheduledBackup (`<claim>`, owned by its Cluster so it goes with it): a base backup on the offering's
 * schedule, the first at once, so the recoverable window starts with the instance. Composed once CNPG reports the
 * Cluster's WAL archiving working: CNPG starts a backup of a Cluster whose archiving does not work yet by waiting up
 * to ten minutes for it in the instance, and its backup controller runs one reconcile at a time, so every other
 * tenant's backup waits as long (docs/decisions/cnpg-backups.md).
 */
export function scheduledBackup(b: CnpgBackupStore, providerConfigName?: string): { v1: Companion; v2: Companion } | undefined {
  const schedule = b.schedule ?? DEFAULT_BACKUP_SCHEDULE;
  if (schedule === false) return undefined;
  const companion = kubernetesCompanion(CNPG_SCHEDULED_BACKUP_NAME, {
    resource: CNPG_SCHEDULED_BACKUP,
    providerConfigName,
    fields: [
      { from: CLAIM_NAME, to: 'metadata.name', required: true },
      { from: CLAIM_NAME, to: 'spec.cluster.name', required: true },
      { to: 'spec.schedule', value: schedule },
      { to: 'spec.method', value: 'barmanObjectStore' },
      { to: 'spec.immediate', value: true },
      { to: 'spec.backupOwnerReference', value: 'cluster' },
    ],
  });
  return { v1: { ...companion.v1, when: ARCHIVING_WORKS }, v2: { ...companion.v2, when: ARCHIVING_WORKS } };
}

/** Where the Object shows the Backup's phase and its error. */
export const CNPG_BACKUP_PHASE = 'status.atProvider.manifest.status.phase';
export const CNPG_BACKUP_ERROR = 'status.atProvider.manifest.status.error';

/** A Backup is done when CNPG says `completed` (api/v1 BackupPhaseCompleted). */
export const CNPG_BACKUP_READY = {
  policy: 'DeriveFromCelQuery',
  celQuery: "has(object.status) && has(object.status.phase) && object.status.phase == 'completed'",
} as const;

/**
 * What to do about CloudNativePG's and Barman Cloud's failures of a backup, by their words (CNPG's backup
 * controller; barman-cloud-backup's output, which names the store's S3 error code or the connection that failed).
 */
export const CNPG_BACKUP_ADVICE: readonly ErrorAdvice[] = [
  CNPG_OPERATOR_ADVICE,
  {
    match: 'has no backup section',
    advice:
      "this instance's offering keeps no backups: the platform operator gives the cnpg offering an object store (its backups); until then only instances of offerings that have one can be backed up",
  },
  {
    match: 'SignatureDoesNotMatch|InvalidAccessKeyId|AccessDenied|Forbidden|\\b403\\b',
    advice:
      "the object store refused the tenant's keys: the platform operator checks Secret klutch-backup-store in the instance's namespace on the control plane (the bind backend makes it again within 10 minutes), then create a new Backup claim",
  },
  {
    match:
      'could not connect|EndpointConnectionError|connection refused|timed? ?out|name or service not known|no route to host|certificate',
    advice:
      'the object store could not be reached or verified: the platform operator checks that it runs, that the instance reaches its endpoint and that the CA in klutch-backup-store issued its certificate; then create a new Backup claim',
  },
  {
    match: 'secrets? "[^"]*" not found',
    advice:
      "the instance's namespace has no object-store Secret yet: the platform operator gives the bind backend the store (--backup-store-endpoint), which makes it",
  },
];

/**
 * The reason of a Backup claim whose instance cannot archive its WAL to the object store (lib/claim-hold.ts
 * ARCHIVING_FAILING; backends do not import lib).
 */
const ARCHIVING_FAILING = 'ArchivingFailing';

/**
 * CNPG's Backup waits for its instance's Cluster to archive: CloudNativePG would start it by waiting for archiving in
 * its only backup worker, up to ten minutes, holding every other tenant's backups (docs/decisions/cnpg-backups.md).
 */
export const ARCHIVING_INSTANCE = {
  apiVersion: 'postgresql.cnpg.io/v1',
  kind: 'Cluster',
  labels: [{ key: INSTANCE_LABEL, from: 'spec.instanceRef' }],
  condition: 'ContinuousArchiving',
  says: 'archive its WAL',
  // What the instance claim's condition says, under a reason of its own: archiving that fails does not mend by waiting.
  advice: archivingAdvice(DEFAULT_BACKUP_SECRET).map((r) => ({ ...r, reason: ARCHIVING_FAILING })),
};

/** CloudNativePG's label naming an object's Cluster (pkg/utils ClusterLabelName). */
export const CNPG_CLUSTER_LABEL = 'cnpg.io/cluster';

/**
 * CloudNativePG takes one backup of a Cluster at a time, the oldest waiting one first (api/v1 BackupList
 * CanExecuteBackup); one behind another only says `pending`. The claim names the Backup ahead of it: a scheduled one
 * (labelled by CloudNativePG) or another claim's (labelled by this recipe), by the instance's label.
 */
export const CNPG_BACKUP_QUEUE = {
  ...CNPG_BACKUP,
  labels: [{ key: CNPG_CLUSTER_LABEL, from: 'spec.instanceRef' }],
  observedAt: 'status.atProvider.manifest',
  phaseAt: 'status.phase',
  // api/v1 BackupStatus IsExecuting, IsDone.
  running: ['started', 'running'],
  done: ['completed', 'failed'],
  startedAt: 'status.startedAt',
  says: 'CloudNativePG takes one backup of an instance at a time, the oldest first',
} as const;

/**
 * A `Backup` claim on cnpg: a CNPG Backup of the instance's Cluster (`spec.instanceRef`, in the claim's namespace: it
 * cannot name another tenant's) to the offering's object store. The claim shows CNPG's phase while it runs, its
 * status (backup id, start, stop, WAL range) in `status.managed`, and fails with CNPG's error: an instance without
 * backups, a store it cannot reach or whose keys it is refused.
 */
export function cnpgBackup(p: { readonly providerConfigName?: string } = {}): Recipe {
  const recipe = kubernetesObject({
    resource: CNPG_BACKUP,
    providerConfigName: p.providerConfigName,
    readiness: CNPG_BACKUP_READY,
    status: OBJECT_STATUS,
    errorPaths: [CNPG_BACKUP_ERROR],
    fields: [
      { from: 'spec.instanceRef', to: 'spec.cluster.name', required: true },
      // CloudNativePG's label of a Backup's Cluster, as its ScheduledBackups and its kubectl plugin set it: the
      // instance's backups are found by it (CNPG_BACKUP_QUEUE).
      { from: 'spec.instanceRef', to: `metadata.labels[${CNPG_CLUSTER_LABEL}]`, required: true },
      { to: 'spec.method', value: 'barmanObjectStore' },
    ],
  });
  return {
    ...recipe,
    failedStatePaths: [CNPG_BACKUP_PHASE],
    progressPaths: [CNPG_BACKUP_PHASE],
    errorAdvice: CNPG_BACKUP_ADVICE,
    waitsFor: ARCHIVING_INSTANCE,
    queue: CNPG_BACKUP_QUEUE,
  };
}

/** The catalog's Backup and Restore composites on each target, and the compositions of this backend they name. */
const COMPOSITES = 'anynines.com/v1';
export const CNPG_BACKUP_COMPOSITE = { kind: { v1: 'XBackup', v2: 'Backup' }, composition: 'cnpg-backup' } as const;
export const CNPG_RESTORE_COMPOSITE = { kind: { v1: 'XRestore', v2: 'Restore' }, composition: 'cnpg-restore' } as const;
/** On a Cluster made anew by a restore in place: the uid of the Restore composite it was made for. */
export const RESTORE_ANNOTATION = 'klutch.anynines.com/restore';
/** Where an instance keeps the restore it acts on: beside CNPG's status, so the claim shows it (`status.managed.restore`). */
export const RESTORE_STATUS = 'status.managed.restore';

/** A composite of this backend's `composition` that names the instance (`spec.instanceRef` is its claim's name). */
const ofInstance = (composition: string): RelatedMatch[] => [
  { path: 'spec.instanceRef', from: CLAIM_NAME },
  { path: 'spec.compositionRef.name', equals: composition },
];

/**
 * A `Restore` on `cnpg-restore` restores its instance in place (docs/decisions/cnpg-backups.md): CNPG restores only
 * by bootstrapping a Cluster from a backup, so the instance's function, once the Restore's backup (a `Backup` claim
 * of the same instance) is completed, deletes the Cluster (its Pods and volumes; the claim, its bindings and their
 * Secrets stay) and makes it again under its name from that CNPG Backup, with the data as of the backup
 * (`targetImmediate`: the archived WAL after it is not replayed). The new Cluster archives under the same server
 * name: PostgreSQL's recovery promotes onto a timeline of its own, so CNPG's check for an empty archive is skipped.
 */
export function cnpgRestoredBy(target: 'v1' | 'v2'): RestoredBy {
  const recovery = 'spec.bootstrap.recovery';
  return {
    restores: {
      apiVersion: COMPOSITES,
      kind: CNPG_RESTORE_COMPOSITE.kind[target],
      match: ofInstance(CNPG_RESTORE_COMPOSITE.composition),
      backupFrom: 'spec.backupRef',
    },
    backups: {
      apiVersion: COMPOSITES,
      kind: CNPG_BACKUP_COMPOSITE.kind[target],
      match: ofInstance(CNPG_BACKUP_COMPOSITE.composition),
      // CNPG's phase, which the Backup's Object copies to its composite (OBJECT_STATUS).
      done: { path: 'status.managed.phase', equals: 'completed' },
      idFrom: 'status.managed.backupId',
    },
    statusAt: RESTORE_STATUS,
    annotation: RESTORE_ANNOTATION,
    observedAt: 'status.atProvider.manifest',
    clear: ['spec.bootstrap', 'spec.externalClusters'],
    fields: [
      // The CNPG Backup of a Backup claim has the claim's name (cnpgBackup()).
      { from: 'backup', to: `${recovery}.backup.name`, required: true },
      // CNPG requires the id with targetImmediate (its webhook: "BackupID is missing"), the Backup's own.
      { from: 'backupId', to: `${recovery}.recoveryTarget.backupID`, required: true },
      { to: `${recovery}.recoveryTarget.targetImmediate`, value: true },
      { to: `${recovery}.database`, value: CNPG_APP_DATABASE },
      { to: `${recovery}.owner`, value: CNPG_APP_DATABASE },
      { to: 'metadata.annotations[cnpg.io/skipEmptyWalArchiveCheck]', value: 'enabled' },
    ],
  };
}

/**
 * The Restore's own composition: it makes nothing, it observes its instance's Cluster (a provider-kubernetes Object
 * with the `Observe` policy, which never changes or deletes what it observes), and is Ready once the Cluster is the
 * one made for it (RESTORE_ANNOTATION is its composite's uid) and healthy. Its status shows the Cluster's.
 */
export function cnpgRestore(p: { readonly providerConfigName?: string } = {}): Recipe {
  const healthy =
    "has(object.status) && has(object.status.phase) && object.status.phase == 'Cluster in healthy state' && " +
    'has(object.status.readyInstances) && object.status.readyInstances == object.spec.instances';
  const recipe = kubernetesObject({
    resource: { apiVersion: 'postgresql.cnpg.io/v1', kind: 'Cluster' },
    providerConfigName: p.providerConfigName,
    status: OBJECT_STATUS,
    fields: [{ from: 'spec.instanceRef', to: 'metadata.name', required: true }],
    wrapperFields: [
      { to: 'spec.managementPolicies', value: ['Observe'] },
      { to: 'spec.readiness.policy', value: 'DeriveFromCelQuery' },
      {
        // The uid is a UUID: nothing in it ends the CEL string.
        from: 'metadata.uid',
        to: 'spec.readiness.celQuery',
        required: true,
        transforms: [
          {
            type: 'format',
            // Not the Cluster made before while it terminates (the instance's new Object may already annotate it).
            format: `!has(object.metadata.deletionTimestamp) && has(object.metadata.annotations) && '${RESTORE_ANNOTATION}' in object.metadata.annotations && object.metadata.annotations['${RESTORE_ANNOTATION}'] == '%s' && ${healthy}`,
          },
        ],
      },
    ],
  });
  // CNPG's phase and its reason, as on the instance (backends/cnpg.ts CNPG_PHASE_PATHS).
  return { ...recipe, progressPaths: ['status.atProvider.manifest.status.phase', 'status.atProvider.manifest.status.phaseReason'] };
}
