/**
 * The object side of the store's sweep (janitor.ts) with the store's root keys, through the AWS SDK's S3 client
 * (path-style, as versitygw serves): listing a bucket's prefixes and objects, and deleting them and the bucket.
 */
import { DeleteBucketCommand, DeleteObjectsCommand, ListObjectsV2Command, S3Client, type _Object } from '@aws-sdk/client-s3';
import { Agent } from 'node:https';

export interface StoreObjectsOptions {
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** PEM of the store's CA; none: the system's. */
  readonly ca?: string;
  /** @default us-east-1 */
  readonly region?: string;
}

export interface StoreObjects {
  prefixes(bucket: string): Promise<string[]>;
  newest(bucket: string, prefix: string): Promise<number | undefined>;
  /** Only objects written at or before `until` (ms): one written since the sweep decided stays. */
  deleteObjects(bucket: string, prefix: string, until: number): Promise<number>;
  deleteBucket(bucket: string): Promise<void>;
  close(): void;
}

export function storeObjects(o: StoreObjectsOptions): StoreObjects {
  const s3 = new S3Client({
    endpoint: o.endpoint,
    region: o.region ?? 'us-east-1',
    forcePathStyle: true,
    credentials: { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey },
    ...(o.ca ? { requestHandler: { httpsAgent: new Agent({ ca: o.ca }) } } : {}),
  });
  /** Every page of a listing of `bucket` under `prefix`, one page at a time. */
  async function* pages(bucket: string, prefix: string, delimiter?: string) {
    let token: string | undefined;
    do {
      const page = await s3.send(
        new ListObjectsV2Command({
          Bucket: bucket,
          Prefix: prefix,
          ...(delimiter ? { Delimiter: delimiter } : {}),
          ...(token ? { ContinuationToken: token } : {}),
        }),
      );
      yield page;
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token);
  }
  const keys = (objects: _Object[] | undefined) => (objects ?? []).flatMap((x) => (x.Key ? [{ Key: x.Key }] : []));
  return {
    async prefixes(bucket) {
      const out: string[] = [];
      for await (const page of pages(bucket, '', '/'))
        for (const p of page.CommonPrefixes ?? []) if (p.Prefix) out.push(p.Prefix.replace(/\/$/, ''));
      return out;
    },
    async newest(bucket, prefix) {
      let newest: number | undefined;
      for await (const page of pages(bucket, prefix))
        for (const x of page.Contents ?? []) {
          const at = x.LastModified?.getTime();
          if (at !== undefined && (newest === undefined || at > newest)) newest = at;
        }
      return newest;
    },
    async deleteObjects(bucket, prefix, until) {
      // The keys first, then the deletes: a listing is not continued past the deletes of its own pages. A page is
      // at most 1,000 keys, as many as one DeleteObjects takes.
      const batches: { Key: string }[][] = [];
      for await (const page of pages(bucket, prefix)) {
        const old = (page.Contents ?? []).filter((x) => (x.LastModified?.getTime() ?? Infinity) <= until);
        if (old.length) batches.push(keys(old));
      }
      let n = 0;
      for (const batch of batches) {
        const r = await s3.send(new DeleteObjectsCommand({ Bucket: bucket, Delete: { Objects: batch, Quiet: true } }));
        if (r.Errors?.length) {
          const e = r.Errors[0]!;
          throw new Error(`deleting ${e.Key} of bucket ${bucket}: ${e.Code} ${e.Message ?? ''}`.trim());
        }
        n += batch.length;
      }
      return n;
    },
    async deleteBucket(bucket) {
      await s3.send(new DeleteBucketCommand({ Bucket: bucket }));
    },
    close: () => s3.destroy(),
  };
}
