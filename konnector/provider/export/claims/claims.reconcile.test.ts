import { describe, expect, it } from 'vitest';
import { Annotations } from '../../../../exports/bind-api';
import { credentialsReceipt } from '../../../../lib/credentials-receipt';
import type { Obj } from '../../../kube/objects';
import { claimOwner, copyOf, reconcileClaim, type ClaimDeps } from './claims.reconcile';

const secret = (namespace: string, name: string, data: Record<string, string>, annotations?: Record<string, string>): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name, namespace, uid: `u-${namespace}-${name}`, ...(annotations ? { annotations } : {}) },
  type: 'Opaque',
  data,
});
const twin: Obj = {
  apiVersion: 'anynines.com/v1',
  kind: 'ServiceBinding',
  metadata: { name: 'sb', namespace: 'app', uid: 'u-sb' },
  spec: {},
};

function world(o: {
  source?: Obj;
  target?: Obj;
  owned?: boolean;
  names?: string[];
  listed?: boolean;
  receipts?: boolean;
  hidden?: boolean;
}) {
  const writes: string[] = [];
  const receipts: string[] = [];
  const warnings: string[] = [];
  const deps: ClaimDeps = {
    from: 'Provider',
    names: o.names ?? ['*'],
    getSource: () => o.source,
    listed: () => o.listed ?? true,
    targetNamespace: () => 'app',
    ownerTwin: () => (o.owned === false ? undefined : twin),
    getTarget: () => o.target,
    writeTarget: async (d, existing) => {
      // A Secret of the name that the label watch does not show is another's: the controller writes nothing.
      if (o.hidden) return false;
      writes.push(`${existing ? 'update' : 'create'} ${d.metadata.namespace}/${d.metadata.name} ${JSON.stringify(d.data)}`);
      return true;
    },
    deleteTarget: async (ns, name) => void writes.push(`delete ${ns}/${name}`),
    deleteKlutchCopy: async (ns, name) => void writes.push(`delete Klutch's copy ${ns}/${name} if any`),
    warn: (_s, reason) => void warnings.push(reason),
    ...(o.receipts ? { acknowledge: async (s: Obj, r: string) => void receipts.push(`${s.metadata.name} ${r}`) } : {}),
  };
  return { deps, writes, warnings, receipts };
}

const creds = secret('p', 'sb-creds', { password: 'cw==' });
const copy = (data = { password: 'cw==' }) => copyOf(secret('p', 'sb-creds', data), 'app', twin, 'Provider');

describe('reconcileClaim', () => {
  it("looks for a copy Klutch's konnector made (not in the label watch) only when the source is gone", async () => {
    const gone = world({});
    await reconcileClaim(gone.deps, 'p', 'sb-creds');
    expect(gone.writes).toEqual(["delete Klutch's copy app/sb-creds if any"]);
    const unowned = world({ source: creds, owned: false });
    await reconcileClaim(unowned.deps, 'p', 'sb-creds');
    expect(unowned.writes).toEqual([]);
  });

  it('keeps a copy while the provider side is still listing, and deletes it once its source is known gone', async () => {
    // A konnector just started (or upgraded) reads the app cluster's copies before the provider's sources: deleting
    // then made every `<binding>-creds` a new object, with the same data, on each restart.
    for (const o of [{}, { source: creds, owned: false }]) {
      const listing = world({ ...o, target: copy(), listed: false });
      expect(await reconcileClaim(listing.deps, 'p', 'sb-creds')).toEqual({ requeueAfterMs: expect.any(Number) });
      expect(listing.writes).toEqual([]);
      const known = world({ ...o, target: copy() });
      await reconcileClaim(known.deps, 'p', 'sb-creds');
      expect(known.writes).toEqual(['delete app/sb-creds']);
    }
    const unknown = world({ listed: false });
    await reconcileClaim(unknown.deps, 'p', 'sb-creds');
    expect(unknown.writes).toEqual([]); // not even the look for Klutch's copy
  });

  it('copies a Secret owned by a bound object down, owned by its twin and marked as the provider’s', async () => {
    const w = world({ source: creds });
    await reconcileClaim(w.deps, 'p', 'sb-creds');
    expect(w.writes).toEqual(['create app/sb-creds {"password":"cw=="}']);
    expect(copy().metadata).toEqual({
      name: 'sb-creds',
      namespace: 'app',
      labels: { [Annotations.resourceOwner]: 'Provider' },
      annotations: { [Annotations.resourceOwner]: 'Provider' },
      ownerReferences: [{ apiVersion: 'anynines.com/v1', kind: 'ServiceBinding', name: 'sb', uid: 'u-sb' }],
    });
  });

  it('leaves reserved labels and annotations of the source behind, and adds its own marks', () => {
    const src = secret(
      'p',
      'sb-creds',
      { password: 'cw==' },
      {
        'crossplane.io/composition-resource-name': 'x',
        [Annotations.resourceOwner]: 'Consumer',
        note: 'n',
      },
    );
    src.metadata.labels = { 'crossplane.io/claim-namespace': 'other', 'kubernetes.io/service-account.name': 'sa', team: 'a' };
    const c = copyOf(src, 'app', twin, 'Provider');
    expect(c.metadata.labels).toEqual({ team: 'a', [Annotations.resourceOwner]: 'Provider' });
    expect(c.metadata.annotations).toEqual({ note: 'n', [Annotations.resourceOwner]: 'Provider' });
  });

  it('follows updates and writes nothing while the copy is current', async () => {
    const changed = world({ source: secret('p', 'sb-creds', { password: 'bmV3' }), target: copy() });
    await reconcileClaim(changed.deps, 'p', 'sb-creds');
    expect(changed.writes).toEqual(['update app/sb-creds {"password":"bmV3"}']);
    const same = world({ source: creds, target: copy() });
    await reconcileClaim(same.deps, 'p', 'sb-creds');
    expect(same.writes).toEqual([]);
  });

  it('says which credentials reached the app cluster once the copy holds them, and only then', async () => {
    const b64 = (v: string) => Buffer.from(v).toString('base64');
    const data = { username: b64('binding-sb'), password: b64('new') };
    const receipt = credentialsReceipt(data);
    const fresh = world({ source: secret('p', 'sb-creds', data), target: copy(), receipts: true });
    await reconcileClaim(fresh.deps, 'p', 'sb-creds');
    expect(fresh.writes).toEqual([`update app/sb-creds ${JSON.stringify(data)}`]);
    expect(fresh.receipts).toEqual([`sb-creds ${receipt}`]);
    // A copy current already is said again (the deps write only what changed upstream): a konnector that restarted.
    const current = world({ source: secret('p', 'sb-creds', data), target: copy(data), receipts: true });
    await reconcileClaim(current.deps, 'p', 'sb-creds');
    expect([current.writes, current.receipts]).toEqual([[], [`sb-creds ${receipt}`]]);
    // Nothing said for a copy not made (another's Secret holds the name), nor for a Secret without a user and password.
    const theirs = world({ source: secret('p', 'sb-creds', data), target: secret('app', 'sb-creds', {}), receipts: true });
    await reconcileClaim(theirs.deps, 'p', 'sb-creds');
    expect([theirs.writes, theirs.receipts, theirs.warnings]).toEqual([[], [], ['ClaimConflict']]);
    const hidden = world({ source: secret('p', 'sb-creds', data), hidden: true, receipts: true });
    await reconcileClaim(hidden.deps, 'p', 'sb-creds');
    expect([hidden.writes, hidden.receipts]).toEqual([[], []]);
    const other = world({ source: creds, receipts: true });
    await reconcileClaim(other.deps, 'p', 'sb-creds');
    expect([other.writes.length, other.receipts]).toEqual([1, []]);
  });

  it('deletes the copy when the source is gone', async () => {
    const w = world({ source: undefined, target: copy() });
    await reconcileClaim(w.deps, 'p', 'sb-creds');
    expect(w.writes).toEqual(['delete app/sb-creds']);
  });

  it.each([
    ['not owned by a bound object', { owned: false }],
    ['not named by the claim', { names: ['other'] }],
  ])('moves nothing %s', async (_what, o) => {
    const w = world({ source: creds, ...o });
    await reconcileClaim(w.deps, 'p', 'sb-creds');
    expect(w.writes).toEqual([]);
  });

  it('never overwrites or deletes an app object of the same name it did not make', async () => {
    const mine = secret('app', 'sb-creds', { password: 'YXBw' });
    const w = world({ source: creds, target: mine });
    await reconcileClaim(w.deps, 'p', 'sb-creds');
    expect(w.writes).toEqual([]);
    expect(w.warnings).toEqual(['ClaimConflict']);
    const gone = world({ source: undefined, target: mine });
    await reconcileClaim(gone.deps, 'p', 'sb-creds');
    expect(gone.writes).toEqual([]);
  });
});

describe('claimOwner', () => {
  const owned = (name: string, refs: Obj['metadata']['ownerReferences']): Obj => ({
    ...secret('p', name, {}),
    metadata: { name, namespace: 'p', ownerReferences: refs },
  });
  it('is the bound object an ownerReference names, with its uid to check', () => {
    const s = owned('anything', [{ apiVersion: 'anynines.com/v1', kind: 'ServiceBinding', name: 'sb', uid: 'u-sb' }]);
    expect(claimOwner(s, 'ServiceBinding', 'anynines.com')).toEqual({ name: 'sb', uid: 'u-sb' });
    // Named in another version of the group (an owner written in v2 of an app cluster's v1): the same owner.
    const v2 = owned('anything', [{ apiVersion: 'anynines.com/v2', kind: 'ServiceBinding', name: 'sb', uid: 'u-sb' }]);
    expect(claimOwner(v2, 'ServiceBinding', 'anynines.com')).toEqual({ name: 'sb', uid: 'u-sb' });
    expect(claimOwner(s, 'ServiceBinding', 'other.anynines.com')).toBeUndefined();
  });
  it('is the claim <name> of the connection Secret <name>-creds that Crossplane writes owned by the composed resource', () => {
    const s = owned('sb-creds', [{ apiVersion: 'kubernetes.crossplane.io/v1alpha2', kind: 'Object', name: 'sb-x7k2p-4xq9z', uid: 'u-o' }]);
    expect(claimOwner(s, 'ServiceBinding', 'anynines.com')).toEqual({ name: 'sb' });
  });
  it('is nothing for another Secret of the namespace', () => {
    expect(claimOwner(owned('db-password', undefined), 'ServiceBinding', 'anynines.com')).toBeUndefined();
    expect(claimOwner(owned('-creds', undefined), 'ServiceBinding', 'anynines.com')).toBeUndefined();
    const other = owned('x', [{ apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', name: 'pg', uid: 'u-pg' }]);
    expect(claimOwner(other, 'ServiceBinding', 'anynines.com')).toBeUndefined();
  });
});
