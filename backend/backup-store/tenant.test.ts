import type { V1Namespace, V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { TerminalError } from '../../controller';
import { BACKUP_STORE_KEYS, DEFAULT_BACKUP_BUCKET, DEFAULT_BACKUP_SECRET } from '../../backends/cnpg-backup';
import { ensureBackupTenant, TENANT_ANNOTATION, TENANT_SECRET_KEYS, tenantAccessKey, type BackupTenantDeps } from './tenant';
import type { StoreAdmin } from './versitygw';

/** The store's users and buckets as versitygw keeps them (access → secret, bucket → owner). */
function store() {
  const users = new Map<string, string>();
  const buckets = new Map<string, string>();
  const admin: StoreAdmin = {
    createUser: async (access, secret) => (users.has(access) ? 'exists' : (users.set(access, secret), 'created')),
    setSecret: async (access, secret) => {
      if (!users.has(access)) throw new Error(`no user ${access}`);
      users.set(access, secret);
    },
    createBucket: async (bucket, owner) => {
      const had = buckets.get(bucket);
      if (had) return had === owner ? 'owned' : 'taken';
      buckets.set(bucket, owner);
      return 'created';
    },
    listBuckets: async () => [...buckets].map(([name, owner]) => ({ name, owner })),
    deleteUser: async (access) => void users.delete(access),
    close: async () => undefined,
  };
  return { users, buckets, admin };
}

/** A cluster of namespaces and Secrets behind the deps. */
function cluster(s: ReturnType<typeof store>, ca?: string) {
  const secrets = new Map<string, V1Secret>();
  const namespaces = new Map<string, V1Namespace>();
  const deps: BackupTenantDeps = {
    admin: s.admin,
    settings: { bucket: DEFAULT_BACKUP_BUCKET, secret: DEFAULT_BACKUP_SECRET, ...(ca ? { ca } : {}) },
    readSecret: async (ns, name) => secrets.get(`${ns}/${name}`),
    writeSecret: async (secret) => {
      const data = Object.fromEntries(Object.entries(secret.stringData ?? {}).map(([k, v]) => [k, Buffer.from(v).toString('base64')]));
      secrets.set(`${secret.metadata!.namespace}/${secret.metadata!.name}`, { metadata: secret.metadata, data });
    },
    readAnnotation: async (ns) => namespaces.get(ns)?.metadata?.annotations?.[TENANT_ANNOTATION],
    annotate: async (ns, access) => {
      const n = namespaces.get(ns)!;
      n.metadata!.annotations = { ...n.metadata!.annotations, [TENANT_ANNOTATION]: access };
    },
  };
  const namespace = (name: string, uid: string) => {
    const n: V1Namespace = { metadata: { name, uid } };
    namespaces.set(name, n);
    return n;
  };
  const read = (ns: string, key: string) => {
    const v = secrets.get(`${ns}/${DEFAULT_BACKUP_SECRET}`)?.data?.[key];
    return v === undefined ? undefined : Buffer.from(v, 'base64').toString();
  };
  return { deps, secrets, namespace, read };
}

describe('a backup tenant per provider namespace', () => {
  it('makes a user and its bucket in the store, then the Secret with its keys and the CA, then marks the namespace', async () => {
    const s = store();
    const c = cluster(s, 'CA PEM');
    const ns = c.namespace('kk-abcde-team-a', 'uid-1');
    expect(await ensureBackupTenant(c.deps, ns)).toBe('made');
    const access = tenantAccessKey('uid-1');
    expect(access).toMatch(/^KK[0-9A-F]{18}$/);
    expect(s.buckets.get('klutch-kk-abcde-team-a')).toBe(access);
    expect(c.read('kk-abcde-team-a', TENANT_SECRET_KEYS.accessKeyId)).toBe(access);
    expect(c.read('kk-abcde-team-a', TENANT_SECRET_KEYS.secretAccessKey)).toBe(s.users.get(access));
    expect(c.read('kk-abcde-team-a', TENANT_SECRET_KEYS.ca)).toBe('CA PEM');
    expect(ns.metadata?.annotations?.[TENANT_ANNOTATION]).toBe(access);
    // Done once: the next look changes nothing, also when it is given the namespace as a cache held it before.
    const secret = s.users.get(access);
    expect(await ensureBackupTenant(c.deps, { metadata: { name: 'kk-abcde-team-a', uid: 'uid-1' } })).toBe('ready');
    expect(s.users.get(access)).toBe(secret);
  });

  it("uses the cnpg backend's key names and defaults", () => {
    expect(TENANT_SECRET_KEYS).toEqual(BACKUP_STORE_KEYS);
  });

  it('makes the Secret again with new keys when it was deleted or overwritten, and the old secret stops working', async () => {
    const s = store();
    const c = cluster(s);
    const ns = c.namespace('kk-abcde-team-a', 'uid-1');
    await ensureBackupTenant(c.deps, ns);
    const access = tenantAccessKey('uid-1');
    const first = s.users.get(access);
    c.secrets.delete(`kk-abcde-team-a/${DEFAULT_BACKUP_SECRET}`);
    expect(await ensureBackupTenant(c.deps, ns)).toBe('made');
    const second = s.users.get(access);
    expect(second).not.toBe(first);
    expect(c.read('kk-abcde-team-a', TENANT_SECRET_KEYS.secretAccessKey)).toBe(second);
  });

  it("never takes keys from the Secret: one forged with another tenant's access key does not reset that tenant", async () => {
    const s = store();
    const c = cluster(s);
    const victim = c.namespace('kk-abcde-team-b', 'uid-b');
    await ensureBackupTenant(c.deps, victim);
    const victimAccess = tenantAccessKey('uid-b');
    const victimSecret = s.users.get(victimAccess);
    // The attacker's namespace has a Secret of that name before its tenant is made, naming the victim's access key.
    const attacker = c.namespace('kk-fghij-team-a', 'uid-a');
    await c.deps.writeSecret({
      metadata: {
        name: DEFAULT_BACKUP_SECRET,
        namespace: 'kk-fghij-team-a',
        labels: { 'app.kubernetes.io/managed-by': 'klutch-kit-backend' },
      },
      stringData: { [TENANT_SECRET_KEYS.accessKeyId]: victimAccess, [TENANT_SECRET_KEYS.secretAccessKey]: 'chosen-by-attacker' },
    });
    await ensureBackupTenant(c.deps, attacker);
    expect(s.users.get(victimAccess)).toBe(victimSecret);
    expect(c.read('kk-fghij-team-a', TENANT_SECRET_KEYS.accessKeyId)).toBe(tenantAccessKey('uid-a'));
    expect(s.buckets.get('klutch-kk-fghij-team-a')).toBe(tenantAccessKey('uid-a'));
  });

  it("refuses a later namespace of the same name the earlier one's bucket, naming what to do", async () => {
    const s = store();
    const c = cluster(s);
    await ensureBackupTenant(c.deps, c.namespace('kk-abcde-team-a', 'uid-1'));
    const again = c.namespace('kk-abcde-team-a', 'uid-2');
    c.secrets.clear();
    const e = await ensureBackupTenant(c.deps, again).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(TerminalError);
    expect(String(e)).toMatch(/bucket "klutch-kk-abcde-team-a" belongs to another tenant.*operator deletes or renames that bucket/);
    expect(s.buckets.get('klutch-kk-abcde-team-a')).toBe(tenantAccessKey('uid-1'));
    expect(c.secrets.size).toBe(0);
  });

  it('refuses a bucket name over 63 characters with the flag to change', async () => {
    const c = cluster(store());
    const e = await ensureBackupTenant(c.deps, c.namespace(`kk-abcde-${'x'.repeat(50)}`, 'u')).catch((x: unknown) => x);
    expect(String(e)).toMatch(/longer than the 63 characters S3 allows; use a shorter --backup-store-bucket/);
  });
});
