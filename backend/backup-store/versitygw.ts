/**
 * The admin API of the Versity S3 Gateway (versitygw v1.2.0, `cmd/versitygw/admin.go`): PATCH requests on the S3
 * port, signed with SigV4 by the gateway's root (admin) keys, XML bodies of its `auth.Account` and
 * `auth.MutableProps`. Only what a backup tenant needs: a user of the role `user` (it reaches only the buckets it
 * owns and may make none) and a bucket that user owns.
 */
import aws4 from 'aws4';
import { Agent, request } from 'undici';

export interface StoreAdminOptions {
  /** `https://host:port` of the gateway (its S3 port, where the admin API answers too). */
  readonly endpoint: string;
  readonly accessKeyId: string;
  readonly secretAccessKey: string;
  /** PEM of the CA that issued the gateway's serving certificate; none: the system's. */
  readonly ca?: string;
  /** The region the gateway signs with. @default us-east-1 */
  readonly region?: string;
  /** Per request. @default 10 s */
  readonly timeoutMs?: number;
}

/** What the store answered to an admin request that did not succeed: S3's error document. */
class StoreAdminError extends Error {
  constructor(
    readonly operation: string,
    readonly status: number,
    readonly code: string,
    detail: string,
  ) {
    super(`object store admin ${operation}: ${status} ${code}${detail ? `: ${detail}` : ''}`);
    this.name = 'StoreAdminError';
  }
}

export interface StoreAdmin {
  /** Makes a user of the role `user`; `exists` when one has that access key already (its secret unchanged). */
  createUser(access: string, secret: string): Promise<'created' | 'exists'>;
  /** Sets the secret of the user with that access key. */
  setSecret(access: string, secret: string): Promise<void>;
  /** Makes `bucket` owned by the user `owner`; `owned`: it exists and is theirs; `taken`: it is someone else's. */
  createBucket(bucket: string, owner: string): Promise<'created' | 'owned' | 'taken'>;
  /** Every bucket of the store and its owner's access key. */
  listBuckets(): Promise<{ name: string; owner: string }[]>;
  /** Deletes the user with that access key (none: nothing to do). */
  deleteUser(access: string): Promise<void>;
  close(): Promise<void>;
}

/** An admin request's answer: its status and, for an error, S3's code and message. */
interface Answer {
  readonly status: number;
  readonly code: string;
  readonly message: string;
  /** The body of a successful answer. */
  readonly body: string;
}

const xmlText = (s: string): string => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

export function storeAdmin(o: StoreAdminOptions): StoreAdmin {
  const url = new URL(o.endpoint);
  const dispatcher = new Agent({
    connect: o.ca ? { ca: o.ca } : {},
    headersTimeout: o.timeoutMs ?? 10_000,
    bodyTimeout: o.timeoutMs ?? 10_000,
  });
  const call = async (operation: string, path: string, body: string, headers: Record<string, string> = {}): Promise<Answer> => {
    const signed = aws4.sign(
      { host: url.host, path, method: 'PATCH', service: 's3', region: o.region ?? 'us-east-1', headers: { ...headers }, body },
      { accessKeyId: o.accessKeyId, secretAccessKey: o.secretAccessKey },
    );
    const res = await request(new URL(path, url), {
      method: 'PATCH',
      headers: signed.headers as Record<string, string>,
      body,
      dispatcher,
    }).catch((e: unknown) => {
      throw new Error(`object store admin ${operation}: cannot reach ${o.endpoint}`, { cause: e });
    });
    const text = await res.body.text();
    if (res.statusCode < 400) return { status: res.statusCode, code: '', message: '', body: text };
    const code = /<Code>([^<]*)<\/Code>/.exec(text)?.[1] || `HTTP ${res.statusCode}`;
    return { status: res.statusCode, code, message: /<Message>([^<]*)<\/Message>/.exec(text)?.[1] ?? text.slice(0, 200), body: '' };
  };
  const fail = (operation: string, r: Answer): never => {
    throw new StoreAdminError(operation, r.status, r.code, r.message);
  };
  return {
    async createUser(access, secret) {
      const body =
        `<Account><Access>${xmlText(access)}</Access><Secret>${xmlText(secret)}</Secret><Role>user</Role>` +
        '<UserID>0</UserID><GroupID>0</GroupID><ProjectID>0</ProjectID></Account>';
      const r = await call('create-user', '/create-user', body);
      if (r.status < 400) return 'created';
      if (r.code === 'XAdminUserExists') return 'exists';
      return fail('create-user', r);
    },
    async setSecret(access, secret) {
      const body = `<MutableProps><Secret>${xmlText(secret)}</Secret></MutableProps>`;
      const r = await call('update-user', `/update-user?access=${encodeURIComponent(access)}`, body);
      if (r.status >= 400) fail('update-user', r);
    },
    async createBucket(bucket, owner) {
      const r = await call('create-bucket', `/${encodeURIComponent(bucket)}/create`, '', { 'x-vgw-owner': owner });
      if (r.status < 400) return 'created';
      if (r.code === 'BucketAlreadyOwnedByYou') return 'owned';
      if (r.code === 'BucketAlreadyExists') return 'taken';
      return fail('create-bucket', r);
    },
    async listBuckets() {
      const r = await call('list-buckets', '/list-buckets', '');
      if (r.status >= 400) fail('list-buckets', r);
      // Go's encoding/xml of s3response.ListBucketsResult: one <Buckets> element per bucket. Names and access keys
      // hold no character XML escapes (S3 bucket names; versitygw's keys), so none is unescaped.
      return [...r.body.matchAll(/<Buckets>\s*<Name>([^<]*)<\/Name>\s*<Owner>([^<]*)<\/Owner>\s*<\/Buckets>/g)].map((m) => ({
        name: m[1]!,
        owner: m[2]!,
      }));
    },
    async deleteUser(access) {
      const r = await call('delete-user', `/delete-user?access=${encodeURIComponent(access)}`, '');
      if (r.status >= 400 && r.code !== 'XAdminUserNotFound') fail('delete-user', r);
    },
    close: () => dispatcher.close(),
  };
}
