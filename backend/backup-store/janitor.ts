/**
 * What the backup tenants leave behind (issue 35, docs/decisions/backup-tenants.md "Sweeping"): CloudNativePG applies
 * an instance's retention only while its Cluster exists, so a deleted instance's backups, and a deleted provider
 * namespace's bucket, would stay in the store for ever. A sweep of the store removes them once nothing has been written
 * there for `keepMs` (`--backup-store-keep-deleted`): until then they can still be restored (`restoreFrom`).
 *
 * What it touches: only buckets of the tenant pattern (`--backup-store-bucket`) owned by a user whose access key is a
 * tenant's (tenant.ts); an operator's other buckets in the same store are never read. In a tenant whose namespace
 * lives, only the top-level prefixes (Barman's server names, one per instance) of which no CloudNativePG Cluster of
 * that name exists in the namespace; a tenant whose namespace is gone, or was made again (another uid, another access
 * key), goes whole: its objects, its bucket and its user.
 */

import { tenantAccessKey } from './tenant';

/** The access keys tenant.ts derives: `KK` and 18 upper-case hex digits. */
const TENANT_KEY = /^KK[0-9A-F]{18}$/;

export interface SweepDeps {
  /** Every bucket of the store with its owner's access key (the admin API's list). */
  buckets(): Promise<readonly { readonly name: string; readonly owner: string }[]>;
  /** The top-level prefixes of `bucket`, without their `/`. */
  prefixes(bucket: string): Promise<readonly string[]>;
  /** When the newest object under `prefix` (`''`: the whole bucket) was written, in ms; none: no object. */
  newest(bucket: string, prefix: string): Promise<number | undefined>;
  /**
   * Deletes the objects under `prefix` (`''`: the whole bucket) written at or before `until` (ms): one written since
   * the decision (an instance made anew under the name) stays. Returns how many went.
   */
  deleteObjects(bucket: string, prefix: string, until: number): Promise<number>;
  deleteBucket(bucket: string): Promise<void>;
  deleteUser(access: string): Promise<void>;
  /** The namespace's uid, read live; `null` when it does not exist. */
  namespaceUid(namespace: string): Promise<string | null>;
  /**
   * The names of the CloudNativePG Clusters in `namespace`, listed: throws when they cannot be listed (no CRD, no
   * access), which a missing Cluster's 404 could not tell apart.
   */
  clusters(namespace: string): Promise<ReadonlySet<string>>;
}

export interface SweepOptions {
  /** The tenants' bucket pattern, `%s` standing for the namespace (--backup-store-bucket). */
  readonly bucket: string;
  /** How long a deleted instance's or tenant's backups stay after the last object written there. */
  readonly keepMs: number;
  readonly now: number;
  /** Only these buckets (a test's own); none: every bucket of the pattern. */
  readonly only?: ReadonlySet<string>;
}

export interface SweepResult {
  /** `bucket/prefix/` or `bucket` (a whole tenant), and how many objects went. */
  readonly removed: readonly { readonly what: string; readonly objects: number }[];
}

/** The namespace a tenant bucket is named after, or undefined when `bucket` is not of the pattern. */
export function namespaceOfBucket(pattern: string, bucket: string): string | undefined {
  const [head, tail] = pattern.split('%s') as [string, string];
  if (!bucket.startsWith(head) || !bucket.endsWith(tail) || bucket.length <= head.length + tail.length) return undefined;
  return bucket.slice(head.length, bucket.length - tail.length);
}

/** One pass over the store; an error on one bucket is logged and the others are still swept. */
export async function sweepBackups(d: SweepDeps, o: SweepOptions, log: (message: string, err?: unknown) => void): Promise<SweepResult> {
  const removed: { what: string; objects: number }[] = [];
  const until = o.now - o.keepMs;
  const over = async (bucket: string, prefix: string) => {
    const newest = await d.newest(bucket, prefix);
    return newest !== undefined && newest <= until;
  };
  for (const { name: bucket, owner } of await d.buckets()) {
    if (o.only && !o.only.has(bucket)) continue;
    const namespace = namespaceOfBucket(o.bucket, bucket);
    if (namespace === undefined || !TENANT_KEY.test(owner)) continue;
    try {
      const uid = await d.namespaceUid(namespace);
      if (uid !== null && tenantAccessKey(uid) === owner) {
        const live = await d.clusters(namespace);
        for (const prefix of await d.prefixes(bucket)) {
          if (live.has(prefix) || !(await over(bucket, `${prefix}/`))) continue;
          removed.push({ what: `${bucket}/${prefix}/`, objects: await d.deleteObjects(bucket, `${prefix}/`, until) });
          log(`removed the backups of instance ${prefix} of namespace ${namespace}: nothing written there for the keep period`);
        }
        continue;
      }
      // The namespace is gone, or was made again (a new uid: another tenant, whose bucket this name cannot be until
      // this one goes). An empty bucket of a namespace that exists is left: nothing is lost by keeping it.
      const empty = (await d.newest(bucket, '')) === undefined;
      if (empty ? uid !== null : !(await over(bucket, ''))) continue;
      const objects = empty ? 0 : await d.deleteObjects(bucket, '', until);
      await d.deleteBucket(bucket);
      await d.deleteUser(owner);
      removed.push({ what: bucket, objects });
      log(`removed bucket ${bucket} and its user: namespace ${namespace} ${uid === null ? 'is gone' : 'was made again since'}`);
    } catch (e) {
      log(`sweeping bucket ${bucket} failed; the next sweep tries again`, e);
    }
  }
  return { removed };
}
