import { describe, expect, it } from 'vitest';
import { namespaceOfBucket, sweepBackups, type SweepDeps } from './janitor';
import { tenantAccessKey } from './tenant';

const HOUR = 3_600_000;
const NOW = Date.parse('2026-12-07T12:00:00Z');
const KEEP = 720 * HOUR;

/** A store of buckets (objects by key, with their time), its users, and a cluster of namespaces and Clusters. */
function world() {
  const buckets = new Map<string, { owner: string; objects: Map<string, number> }>();
  const users = new Set<string>();
  const namespaces = new Map<string, string>();
  const clusters = new Map<string, Set<string>>();
  const unlistable = new Set<string>();
  const deps: { -readonly [K in keyof SweepDeps]: SweepDeps[K] } = {
    buckets: async () => [...buckets].map(([name, b]) => ({ name, owner: b.owner })),
    prefixes: async (bucket) => [...new Set([...buckets.get(bucket)!.objects.keys()].map((k) => k.split('/')[0]!))],
    newest: async (bucket, prefix) => {
      const times = [...buckets.get(bucket)!.objects].filter(([k]) => k.startsWith(prefix)).map(([, t]) => t);
      return times.length ? Math.max(...times) : undefined;
    },
    deleteObjects: async (bucket, prefix, until) => {
      const objects = buckets.get(bucket)!.objects;
      const gone = [...objects].filter(([k, t]) => k.startsWith(prefix) && t <= until).map(([k]) => k);
      for (const k of gone) objects.delete(k);
      return gone.length;
    },
    deleteBucket: async (bucket) => {
      if (buckets.get(bucket)?.objects.size) throw new Error('BucketNotEmpty');
      buckets.delete(bucket);
    },
    deleteUser: async (access) => void users.delete(access),
    namespaceUid: async (ns) => namespaces.get(ns) ?? null,
    clusters: async (ns) => {
      if (unlistable.has(ns)) throw new Error(`clusters.postgresql.cnpg.io is forbidden in ${ns}`);
      return clusters.get(ns) ?? new Set();
    },
  };
  /** A provider namespace that is a tenant: its user and bucket `klutch-<ns>`. */
  const tenant = (ns: string, uid: string, objects: Record<string, number> = {}) => {
    namespaces.set(ns, uid);
    const owner = tenantAccessKey(uid);
    users.add(owner);
    buckets.set(`klutch-${ns}`, { owner, objects: new Map(Object.entries(objects)) });
    return owner;
  };
  const keys = (bucket: string) => [...(buckets.get(bucket)?.objects.keys() ?? [])].sort();
  const sweep = (o: { only?: Set<string> } = {}) => {
    const said: string[] = [];
    return sweepBackups(deps, { bucket: 'klutch-%s', keepMs: KEEP, now: NOW, ...o }, (m, e) =>
      said.push(e ? `${m}: ${(e as Error).message}` : m),
    ).then((r) => ({ ...r, said }));
  };
  return { deps, buckets, users, namespaces, clusters, unlistable, tenant, keys, sweep };
}

const old = NOW - KEEP - HOUR;
const recent = NOW - KEEP + HOUR;

describe('the sweep of the backup store', () => {
  it("removes a deleted instance's backups once nothing was written there for the keep period, and no live instance's", async () => {
    const w = world();
    w.tenant('team-a', 'uid-a', {
      'orders/base/1/data.tar': old,
      'orders/wals/0001/000000010000000000000001.gz': old,
      'live/base/1/data.tar': old - HOUR,
      'lately/base/1/data.tar': old,
      'lately/wals/0001/000000010000000000000009.gz': recent,
    });
    w.clusters.set('team-a', new Set(['live']));
    const r = await w.sweep();
    expect(r.removed).toEqual([{ what: 'klutch-team-a/orders/', objects: 2 }]);
    // A live instance whose backups are all old keeps them (CloudNativePG's retention is its own); one deleted lately
    // keeps them whole, the old base backup too: a restore needs the base and the WAL after it.
    expect(w.keys('klutch-team-a')).toEqual([
      'lately/base/1/data.tar',
      'lately/wals/0001/000000010000000000000009.gz',
      'live/base/1/data.tar',
    ]);
    expect(r.said).toEqual(['removed the backups of instance orders of namespace team-a: nothing written there for the keep period']);
  });

  it('removes the bucket and user of a provider namespace that is gone or was made again, after the keep period', async () => {
    const w = world();
    const gone = w.tenant('team-gone', 'uid-gone', { 'orders/base/1/data.tar': old });
    const remade = w.tenant('team-b', 'uid-b-first', { 'x/base/1/data.tar': old });
    const lately = w.tenant('team-lately', 'uid-lately', { 'x/base/1/data.tar': recent });
    const empty = w.tenant('team-empty', 'uid-empty');
    w.namespaces.delete('team-gone');
    w.namespaces.delete('team-lately');
    w.namespaces.delete('team-empty');
    // team-b deleted and made again: a new uid, another tenant, whose bucket this old one holds the name of.
    w.namespaces.set('team-b', 'uid-b-second');
    const r = await w.sweep();
    expect(r.removed).toEqual([
      { what: 'klutch-team-gone', objects: 1 },
      { what: 'klutch-team-b', objects: 1 },
      { what: 'klutch-team-empty', objects: 0 },
    ]);
    expect([...w.buckets.keys()]).toEqual(['klutch-team-lately']);
    expect([gone, remade, empty].some((u) => w.users.has(u))).toBe(false);
    expect(w.users.has(lately)).toBe(true);
    expect(r.said).toContain('removed bucket klutch-team-b and its user: namespace team-b was made again since');
  });

  it("touches no bucket but a tenant's: another name, another owner, an empty one of a namespace that lives", async () => {
    const w = world();
    w.buckets.set('operator-archive', { owner: 'ADMINKEY', objects: new Map([['orders/x', old]]) });
    w.buckets.set('klutch-someone', { owner: 'SOMEONEELSE', objects: new Map([['orders/x', old]]) });
    w.tenant('team-c', 'uid-c-first');
    w.namespaces.set('team-c', 'uid-c-second');
    const r = await w.sweep();
    expect(r.removed).toEqual([]);
    expect([...w.buckets.keys()].sort()).toEqual(['klutch-someone', 'klutch-team-c', 'operator-archive']);
  });

  it('skips a tenant whose Clusters cannot be listed, says so, and sweeps the others; only the buckets it is given', async () => {
    const w = world();
    w.tenant('team-a', 'uid-a', { 'orders/base/1/data.tar': old });
    w.tenant('team-d', 'uid-d', { 'orders/base/1/data.tar': old });
    w.tenant('team-e', 'uid-e', { 'orders/base/1/data.tar': old });
    w.unlistable.add('team-a');
    const r = await w.sweep({ only: new Set(['klutch-team-a', 'klutch-team-d']) });
    expect(r.removed).toEqual([{ what: 'klutch-team-d/orders/', objects: 1 }]);
    expect(w.keys('klutch-team-a')).toEqual(['orders/base/1/data.tar']);
    expect(w.keys('klutch-team-e')).toEqual(['orders/base/1/data.tar']);
    expect(r.said[0]).toBe(
      'sweeping bucket klutch-team-a failed; the next sweep tries again: clusters.postgresql.cnpg.io is forbidden in team-a',
    );
  });

  it('leaves what is written after it decided: an instance made anew under the name archives on', async () => {
    const w = world();
    w.tenant('team-a', 'uid-a', { 'orders/base/1/data.tar': old });
    const newest = w.deps.newest;
    w.deps.newest = async (bucket, prefix) => {
      const at = await newest(bucket, prefix);
      w.buckets.get(bucket)!.objects.set('orders/wals/0001/000000010000000000000001.gz', NOW);
      return at;
    };
    const r = await w.sweep();
    expect(r.removed).toEqual([{ what: 'klutch-team-a/orders/', objects: 1 }]);
    expect(w.keys('klutch-team-a')).toEqual(['orders/wals/0001/000000010000000000000001.gz']);
  });

  it('reads the namespace from a bucket name by the pattern', () => {
    expect(namespaceOfBucket('klutch-%s', 'klutch-team-a')).toBe('team-a');
    expect(namespaceOfBucket('backups-%s-pg', 'backups-team-a-pg')).toBe('team-a');
    expect(namespaceOfBucket('klutch-%s', 'klutch-')).toBeUndefined();
    expect(namespaceOfBucket('klutch-%s', 'other-team-a')).toBeUndefined();
    expect(namespaceOfBucket('backups-%s-pg', 'backups-team-a')).toBeUndefined();
  });
});
