/**
 * A backup tenant per provider namespace (issue 35, docs/decisions/backup-tenants.md): the cnpg backend's instances
 * in namespace `<ns>` archive to bucket `klutch-<ns>` with the keys of Secret `klutch-backup-store` there
 * (backends/cnpg-backup.ts). The backend makes both in the platform's object store through its admin API: a user of
 * the role `user` whose access key is derived from the namespace's uid, so a later namespace of the same name is
 * another tenant and never gets an earlier one's bucket, and a bucket only that user owns.
 *
 * What the backend trusts: only the namespace (which it made) and the store. The Secret in the namespace is written,
 * never read for keys — a consumer may write Secrets in its provider namespaces — and a Secret found there that is not
 * the one the backend wrote is replaced with new keys. The namespace's annotation records that the store has the
 * user and bucket, written last, so a restart in between repeats the steps (each is idempotent).
 */
import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import { createHash, randomBytes } from 'node:crypto';
import { TerminalError } from '../../controller';
import { Labels, MANAGED_BY } from '../labels';
import type { StoreAdmin } from './versitygw';

/** The keys of a tenant's Secret: CloudNativePG's names for S3 keys and the store's CA (backends/cnpg-backup.ts). */
export const TENANT_SECRET_KEYS = { accessKeyId: 'ACCESS_KEY_ID', secretAccessKey: 'ACCESS_SECRET_KEY', ca: 'ca.crt' } as const;
/** On a provider namespace: the access key of its tenant, once the store has its user and bucket. */
export const TENANT_ANNOTATION = 'klutch.anynines.com/backup-store-tenant';

export interface BackupStoreSettings {
  /** The bucket of a namespace's backups, `%s` standing for the namespace (as the cnpg offering's `backups.bucket`). */
  readonly bucket: string;
  /** The Secret made in each provider namespace (as the offering's `backups.secret`). */
  readonly secret: string;
  /** PEM of the store's CA, put into each Secret as `ca.crt`; none: the store has a public certificate. */
  readonly ca?: string;
}

export interface BackupTenantDeps {
  readonly admin: StoreAdmin;
  readonly settings: BackupStoreSettings;
  /** The Secret `name` in `namespace`, read live (none: undefined). */
  readSecret(namespace: string, name: string): Promise<V1Secret | undefined>;
  /** Creates the Secret or replaces the one of its name. */
  writeSecret(secret: V1Secret): Promise<void>;
  /**
   * TENANT_ANNOTATION of the namespace, read live: a cached namespace may not show the annotation written a moment
   * ago, and a second look would then make new keys after the Secret was read.
   */
  readAnnotation(namespace: string): Promise<string | undefined>;
  /** Sets TENANT_ANNOTATION on the namespace. */
  annotate(namespace: string, access: string): Promise<void>;
}

/** The tenant's access key: 20 characters, as S3 keys are, from the namespace's uid (one per namespace ever made). */
export function tenantAccessKey(uid: string): string {
  return `KK${createHash('sha256').update(`klutch-kit backup tenant\n${uid}`).digest('hex').slice(0, 18).toUpperCase()}`;
}

/** The bucket of namespace `ns`; throws when it is no S3 bucket name (over 63 characters). */
function tenantBucket(settings: Pick<BackupStoreSettings, 'bucket'>, ns: string): string {
  const bucket = settings.bucket.replace('%s', ns);
  if (bucket.length > 63)
    throw new TerminalError(
      `namespace ${ns}: its backup bucket "${bucket}" would be longer than the 63 characters S3 allows; use a shorter --backup-store-bucket or consumer namespace`,
    );
  return bucket;
}

const decode = (s: V1Secret | undefined, key: string): string | undefined => {
  const v = s?.data?.[key];
  return v === undefined ? undefined : Buffer.from(v, 'base64').toString('utf8');
};

/** Whether `secret` is the one this backend wrote for `access` (and the CA it would write now). */
function isOurs(secret: V1Secret | undefined, access: string, settings: BackupStoreSettings): boolean {
  return (
    secret?.metadata?.labels?.[Labels.managedBy] === MANAGED_BY &&
    decode(secret, TENANT_SECRET_KEYS.accessKeyId) === access &&
    Boolean(decode(secret, TENANT_SECRET_KEYS.secretAccessKey)) &&
    decode(secret, TENANT_SECRET_KEYS.ca) === settings.ca
  );
}

/**
 * Makes sure provider namespace `ns` is a tenant of the store: its user and bucket there, its keys in its Secret.
 * Returns what it did, for the log; throws a TerminalError when the bucket belongs to someone else.
 */
export async function ensureBackupTenant(d: BackupTenantDeps, ns: V1Namespace): Promise<'ready' | 'made'> {
  const name = ns.metadata!.name!;
  const access = tenantAccessKey(ns.metadata!.uid!);
  const bucket = tenantBucket(d.settings, name);
  const secret = await d.readSecret(name, d.settings.secret);
  if (isOurs(secret, access, d.settings) && (await d.readAnnotation(name)) === access) return 'ready';

  // New keys each time the Secret is not known good: the secret is never read back from the namespace.
  const secretKey = randomBytes(30).toString('base64url').slice(0, 40);
  if ((await d.admin.createUser(access, secretKey)) === 'exists') await d.admin.setSecret(access, secretKey);
  if ((await d.admin.createBucket(bucket, access)) === 'taken')
    throw new TerminalError(
      `namespace ${name}: the object store's bucket "${bucket}" belongs to another tenant (an earlier namespace of this name keeps its backups there); backups of this namespace fail until an operator deletes or renames that bucket once its retention is over`,
    );
  await d.writeSecret({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: d.settings.secret, namespace: name, labels: { [Labels.managedBy]: MANAGED_BY } },
    type: 'Opaque',
    stringData: {
      [TENANT_SECRET_KEYS.accessKeyId]: access,
      [TENANT_SECRET_KEYS.secretAccessKey]: secretKey,
      ...(d.settings.ca !== undefined ? { [TENANT_SECRET_KEYS.ca]: d.settings.ca } : {}),
    },
  });
  await d.annotate(name, access);
  return 'made';
}
