import { describe, expect, it } from 'vitest';
import { Annotations, SYNCER_FIELD_MANAGER, SYNCER_FINALIZER } from '../../../../exports/bind-api';
import type { Obj } from '../../../kube/objects';
import type { ProviderNamespace } from '../../../names';
import { reconcileSpec, type SpecDeps } from './spec.reconcile';
import { needsApply, upstreamOf } from './upstream';

const claim = (o: Partial<Obj['metadata']> = {}, spec: unknown = { service: 'a9s-postgresql17', plan: 'small' }): Obj => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: {
    name: 'db',
    namespace: 'app',
    uid: 'u-consumer',
    resourceVersion: '7',
    labels: { team: 'a' },
    annotations: { note: 'x' },
    managedFields: [{ manager: 'kubectl' }],
    ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'o', uid: 'o' }],
    ...o,
  },
  spec,
  status: { ready: true },
});

/** A consumer and a provider side as plain maps, recording every write. */
function world(o: { consumer?: Obj; mapping?: ProviderNamespace; provider?: Obj; providerLive?: Obj | null } = {}) {
  const writes: string[] = [];
  const warnings: string[] = [];
  let consumer = o.consumer;
  let provider = o.provider;
  let live: Obj | undefined = o.providerLive === null ? undefined : (o.providerLive ?? provider);
  const deps: SpecDeps = {
    getConsumer: () => consumer,
    namespaces: { providerNamespace: () => o.mapping ?? { state: 'assigned', namespace: 'cluster-x-app' }, consumerNamespace: () => 'app' },
    ensureServiceNamespace: async (ns) => void writes.push(`create APIServiceNamespace ${ns}`),
    getProvider: () => provider,
    readProvider: async () => live,
    applyProvider: async (d) => {
      writes.push(`apply ${d.metadata.namespace}/${d.metadata.name}`);
      provider = live = d;
      return d;
    },
    deleteProvider: async (ns, name, uid) => {
      writes.push(`delete ${ns}/${name} uid=${uid}`);
      live = { ...live!, metadata: { ...live!.metadata, deletionTimestamp: 'now' } };
    },
    updateConsumerMeta: async (c, finalizers, annotations) => {
      writes.push(`consumer finalizers=[${finalizers.join(',')}] annotations=${JSON.stringify(annotations)}`);
      consumer = { ...c, metadata: { ...c.metadata, finalizers, annotations: { ...c.metadata.annotations, ...annotations } } };
      return consumer;
    },
    warn: (_c, reason, message) => void warnings.push(`${reason}: ${message}`),
  };
  return {
    deps,
    writes,
    warnings,
    get consumer() {
      return consumer;
    },
    setLive(v: Obj | undefined) {
      live = v;
    },
  };
}

const bound = (spec: unknown = { service: 'a9s-postgresql17', plan: 'small' }, managed?: Record<string, unknown>): Obj => ({
  ...upstreamOf(claim({ finalizers: [SYNCER_FINALIZER] }, spec), 'cluster-x-app'),
  metadata: {
    ...upstreamOf(claim({}, spec), 'cluster-x-app').metadata,
    uid: 'u-provider',
    managedFields: managed ? [{ manager: SYNCER_FIELD_MANAGER, operation: 'Apply', fieldsV1: managed }] : undefined,
  },
});
const owned = {
  'f:metadata': { 'f:labels': { 'f:team': {} }, 'f:annotations': { 'f:note': {}, [`f:${Annotations.bound}`]: {} } },
  'f:spec': { 'f:service': {}, 'f:plan': {} },
};

describe('reconcileSpec: a new consumer object', () => {
  it('asks for an APIServiceNamespace first and writes nothing else', async () => {
    const w = world({ consumer: claim(), mapping: { state: 'missing' } });
    expect(await reconcileSpec(w.deps, 'app', 'db')).toEqual({ requeueAfterMs: 30_000 });
    expect(w.writes).toEqual(['create APIServiceNamespace app']);
  });

  it('waits while the backend has not assigned a provider namespace', async () => {
    const w = world({ consumer: claim(), mapping: { state: 'pending' } });
    expect(await reconcileSpec(w.deps, 'app', 'db')).toEqual({ requeueAfterMs: 30_000 });
    expect(w.writes).toEqual([]);
  });

  it('adds the finalizer and bound annotation before it applies the copy upstream', async () => {
    const w = world({ consumer: claim(), providerLive: null });
    expect(await reconcileSpec(w.deps, 'app', 'db')).toBeUndefined();
    expect(w.writes).toEqual([
      `consumer finalizers=[${SYNCER_FINALIZER}] annotations={"${Annotations.bound}":"true"}`,
      'apply cluster-x-app/db',
    ]);
  });

  it('copies labels, annotations and spec, and nothing that belongs to the app cluster', () => {
    expect(upstreamOf(claim(), 'cluster-x-app')).toEqual({
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'db', namespace: 'cluster-x-app', labels: { team: 'a' }, annotations: { note: 'x', [Annotations.bound]: 'true' } },
      spec: { service: 'a9s-postgresql17', plan: 'small' },
    });
  });

  it('never copies reserved labels or annotations up, keeping its own bound mark and the app kubernetes.io labels', () => {
    const c = claim({
      labels: { team: 'a', 'crossplane.io/claim-namespace': 'other', 'app.kubernetes.io/name': 'db', 'x.kubernetes.io/y': 'z' },
      annotations: {
        note: 'x',
        'crossplane.io/external-name': 'x',
        'kubectl.kubernetes.io/last-applied-configuration': '{}',
        [Annotations.bound]: 'true',
        [Annotations.resourceOwner]: 'Consumer',
      },
    });
    expect(upstreamOf(c, 'cluster-x-app').metadata).toEqual({
      name: 'db',
      namespace: 'cluster-x-app',
      labels: { team: 'a', 'app.kubernetes.io/name': 'db' },
      annotations: { note: 'x', [Annotations.bound]: 'true' },
    });
  });

  it('removes a reserved label an older konnector applied upstream, and then stays quiet', () => {
    const c = claim({ labels: { team: 'a', 'crossplane.io/claim-namespace': 'other' } });
    const old = bound(undefined, {
      ...owned,
      'f:metadata': { ...owned['f:metadata'], 'f:labels': { 'f:team': {}, 'f:crossplane.io/claim-namespace': {} } },
    });
    old.metadata.labels = { team: 'a', 'crossplane.io/claim-namespace': 'other' };
    expect(needsApply(upstreamOf(c, 'cluster-x-app'), old)).toBe(true);
    // After that apply: the key is gone from what it owns; the same key set upstream by another writer is theirs.
    const now = bound(undefined, owned);
    now.metadata.labels = { team: 'a', 'crossplane.io/claim-namespace': 'set-by-crossplane' };
    expect(needsApply(upstreamOf(c, 'cluster-x-app'), now)).toBe(false);
  });

  it('refuses to take over an upstream object it did not create, and says so on the consumer object', async () => {
    const foreign = { ...bound(), metadata: { ...bound().metadata, annotations: {} } };
    const w = world({
      consumer: claim({ finalizers: [SYNCER_FINALIZER], annotations: { [Annotations.bound]: 'true' } }),
      provider: foreign,
    });
    expect(await reconcileSpec(w.deps, 'app', 'db')).toBeUndefined();
    expect(w.writes).toEqual([]);
    expect(w.warnings[0]).toMatch(/^UpstreamConflict: PostgresqlInstance cluster-x-app\/db already exists on the provider/);
  });
});

describe('reconcileSpec: changes', () => {
  const synced = () => claim({ finalizers: [SYNCER_FINALIZER], annotations: { note: 'x', [Annotations.bound]: 'true' } });

  it('writes nothing when the copy is up to date, even with fields other writers added upstream', async () => {
    const p = bound(undefined, owned);
    (p.spec as Record<string, unknown>).resourceRef = { name: 'xpg-1' };
    const w = world({ consumer: synced(), provider: p });
    await reconcileSpec(w.deps, 'app', 'db');
    expect(w.writes).toEqual([]);
  });

  it.each([
    ['a changed field', { service: 'a9s-postgresql17', plan: 'big' }],
    ['a removed field', { service: 'a9s-postgresql17' }],
  ])('applies %s', async (_what, spec) => {
    const w = world({ consumer: { ...synced(), spec }, provider: bound(undefined, owned) });
    await reconcileSpec(w.deps, 'app', 'db');
    expect(w.writes).toEqual(['apply cluster-x-app/db']);
  });

  it('does not apply again what it applied moments ago while the provider cache lags behind', async () => {
    const w = world({ consumer: synced(), provider: undefined, providerLive: null });
    w.deps.justApplied = (d) => d.metadata.namespace === 'cluster-x-app';
    await reconcileSpec(w.deps, 'app', 'db');
    expect(w.writes).toEqual([]);
  });

  it.each([
    ['quota', 'exceeded quota: klutch-claims, requested: count/postgresqlinstances.anynines.com=1', 'QuotaExceeded'],
    [
      'admission policy',
      "ValidatingAdmissionPolicy 'p' with binding 'p' denied request: a consumer may not set spec.resourceRef",
      'UpstreamRefused',
    ],
  ])('says on the app object why the provider refused it (%s) and tries again later', async (_what, message, reason) => {
    const w = world({ consumer: { ...synced(), spec: { plan: 'big' } }, provider: bound(undefined, owned) });
    w.deps.applyProvider = async () => {
      throw Object.assign(new Error('refused'), { code: 403, body: { message } });
    };
    expect(await reconcileSpec(w.deps, 'app', 'db')).toEqual({ requeueAfterMs: expect.any(Number) });
    expect(w.warnings).toEqual([
      `${reason}: the provider refused PostgresqlInstance app/db: ${message}; ${reason === 'QuotaExceeded' ? 'delete one you no longer need or ask the platform operator for more' : 'change the object in this cluster as the message says'}`,
    ]);
  });

  it("names the control plane on a refused new claim's Ready condition; an existing copy's status speaks for itself", async () => {
    const message = 'exceeded quota: klutch-claims, requested: count/postgresqlinstances.anynines.com=1';
    const refuse = async () => {
      throw Object.assign(new Error('refused'), { code: 403, body: { message } });
    };
    const fresh = world({ consumer: synced(), provider: undefined, providerLive: null });
    const held: unknown[] = [];
    fresh.deps.hold = async (_c, h) => void held.push(h);
    fresh.deps.applyProvider = refuse;
    await reconcileSpec(fresh.deps, 'app', 'db');
    expect(held).toEqual([
      {
        hop: 'control plane',
        reason: 'QuotaExceeded',
        said: `the provider refused PostgresqlInstance app/db: ${message}`,
        todo: 'delete one you no longer need or ask the platform operator for more',
      },
    ]);
    const existing = world({ consumer: { ...synced(), spec: { plan: 'big' } }, provider: bound(undefined, owned) });
    existing.deps.hold = async (_c, h) => void held.push(h);
    existing.deps.applyProvider = refuse;
    await reconcileSpec(existing.deps, 'app', 'db');
    expect(held).toHaveLength(1);
  });

  it('leaves any other error to the retry of the controller', async () => {
    const w = world({ consumer: { ...synced(), spec: { plan: 'big' } }, provider: bound(undefined, owned) });
    w.deps.applyProvider = async () => {
      throw Object.assign(new Error('nope'), { code: 403, body: { message: 'forbidden: RBAC' } });
    };
    await expect(reconcileSpec(w.deps, 'app', 'db')).rejects.toThrow('nope');
    expect(w.warnings).toEqual([]);
  });

  it('applies when it cannot tell what it owns upstream (no managedFields)', () => {
    expect(needsApply(upstreamOf(synced(), 'cluster-x-app'), bound())).toBe(true);
  });
});

describe('reconcileSpec: deletion', () => {
  const deleting = () =>
    claim({
      finalizers: ['other', SYNCER_FINALIZER],
      annotations: { [Annotations.bound]: 'true' },
      deletionTimestamp: '2025-01-01T00:00:00Z',
    });

  it('deletes the copy upstream and keeps the finalizer until the copy is gone', async () => {
    const w = world({ consumer: deleting(), provider: bound() });
    expect(await reconcileSpec(w.deps, 'app', 'db')).toEqual({ requeueAfterMs: 30_000 });
    expect(w.writes).toEqual(['delete cluster-x-app/db uid=u-provider']);
    w.setLive(undefined);
    expect(await reconcileSpec(w.deps, 'app', 'db')).toBeUndefined();
    expect(w.writes.slice(1)).toEqual(['consumer finalizers=[other] annotations={}']);
  });

  it('trusts the API server over a cache that has not seen the copy yet', async () => {
    const w = world({ consumer: deleting(), provider: undefined, providerLive: bound() });
    await reconcileSpec(w.deps, 'app', 'db');
    expect(w.writes).toEqual(['delete cluster-x-app/db uid=u-provider']);
  });

  it('releases at once when nothing was ever created upstream', async () => {
    const w = world({ consumer: deleting(), mapping: { state: 'missing' } });
    await reconcileSpec(w.deps, 'app', 'db');
    expect(w.writes).toEqual(['consumer finalizers=[other] annotations={}']);
  });

  it('leaves an object without its finalizer alone', async () => {
    const w = world({ consumer: claim({ deletionTimestamp: 'now', finalizers: ['other'] }), provider: bound() });
    await reconcileSpec(w.deps, 'app', 'db');
    expect(w.writes).toEqual([]);
  });
});
