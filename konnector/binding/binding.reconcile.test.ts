import type { V1CustomResourceDefinition, V1Secret } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import {
  BIND_API_VERSION,
  BINDING_FINALIZER,
  CLUSTER_BINDING_NAME,
  Kinds,
  type APIServiceBinding,
  type APIServiceBindingStatus,
  type APIServiceExport,
  type ClusterBinding,
  type Condition,
} from '../../exports/bind-api';
import { describeCheck } from '../../lib/app-cluster-access';
import { BACKEND_VERSION_ANNOTATION } from '../../lib/version';
import type { Obj } from '../kube/objects';
import { crdOf } from '../schema/schema';
import type { BindingDeps, BindingConnection, SyncerSpec } from './binding.deps';
import { reconcileBinding } from './binding.reconcile';

const NAME = 'postgresqlinstances.anynines.com';
const ref = { namespace: 'klutch-bind', name: NAME };
const secretRef = { namespace: 'klutch-bind', name: 'kubeconfig-abc', key: 'kubeconfig' } as const;
const ctx = { log: pino({ level: 'silent' }) };
const at = new Date('2026-01-01T12:00:00Z');

const binding = (o: { deleting?: boolean; finalizer?: boolean; status?: APIServiceBindingStatus } = {}): APIServiceBinding => ({
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceBinding,
  metadata: {
    ...ref,
    uid: 'u-binding',
    ...((o.finalizer ?? true) ? { finalizers: [BINDING_FINALIZER] } : {}),
    ...(o.deleting ? { deletionTimestamp: '2026-01-01T11:00:00Z' } : {}),
  },
  spec: {
    kubeconfigSecretRef: secretRef,
    permissionClaims: [
      { group: '', resource: 'secrets', version: 'v1', state: 'Accepted', selector: { owner: 'Provider' } },
      { group: '', resource: 'configmaps', version: 'v1', state: 'Rejected' },
      { group: '', resource: 'pods', version: 'v1', state: 'Accepted' },
    ],
  },
  ...(o.status ? { status: o.status } : {}),
});

const kubeconfigSecret = (): V1Secret => ({
  metadata: { ...secretRef },
  data: {
    kubeconfig: Buffer.from(
      stringify({
        apiVersion: 'v1',
        kind: 'Config',
        clusters: [{ name: 'p', cluster: { server: 'https://provider.example' } }],
        users: [{ name: 'p', user: { token: 't1' } }],
        contexts: [{ name: 'p', context: { cluster: 'p', user: 'p', namespace: 'cluster-x' } }],
        'current-context': 'p',
      }),
    ).toString('base64'),
  },
});

const exportOf = (plural = 'postgresqlinstances'): APIServiceExport => ({
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceExport,
  metadata: { name: NAME, namespace: 'cluster-x' },
  spec: {
    group: 'anynines.com',
    names: { kind: 'PostgresqlInstance', plural, singular: 'postgresqlinstance', listKind: 'PostgresqlInstanceList' },
    scope: 'Namespaced',
    informerScope: 'Namespaced',
    versions: [
      { name: 'v1alpha1', served: true, storage: false, schema: { openAPIV3Schema: { type: 'object' } } },
      {
        name: 'v1',
        served: true,
        storage: true,
        // A claim's: its status has conditions, so the konnector names what holds it in its Ready condition.
        schema: {
          openAPIV3Schema: { type: 'object', properties: { status: { type: 'object', properties: { conditions: { type: 'array' } } } } },
        },
        subresources: { status: {} },
      },
    ],
  },
});

/** The CRD the export makes, owned by `uid`, Established or not. */
const crd = (o: { uid?: string; established?: boolean; deleting?: boolean } = {}): V1CustomResourceDefinition => {
  const c = crdOf(exportOf(), binding()) as unknown as V1CustomResourceDefinition;
  c.metadata!.uid = 'u-crd';
  c.metadata!.ownerReferences![0]!.uid = o.uid ?? 'u-binding';
  if (o.deleting) c.metadata!.deletionTimestamp = new Date('2026-01-01T11:30:00Z');
  if (o.established ?? true)
    c.status = {
      acceptedNames: c.spec.names,
      storedVersions: ['v1'],
      conditions: ['Established', 'NamesAccepted'].map((type) => ({ type, status: 'True' })),
    } as V1CustomResourceDefinition['status'];
  return c;
};

const claim = (name: string, deleting = false): Obj => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: { name, namespace: 'apps', uid: `u-${name}`, ...(deleting ? { deletionTimestamp: '2026-01-01T11:59:00Z' } : {}) },
});

interface WorldOptions {
  binding?: APIServiceBinding;
  secret?: V1Secret | 'forbidden';
  /** The binding already holds a connection. */
  held?: boolean;
  synced?: boolean;
  connectError?: string;
  export?: APIServiceExport;
  crd?: V1CustomResourceDefinition;
  missing?: string[];
  syncerSynced?: boolean;
  /** The syncer's watch error. */
  syncerError?: string;
  objects?: Obj[];
  heartbeat?: BindingConnection['heartbeat'];
  refused?: { reason: 'KubeconfigUnsafe'; message: string };
  controlPlaneMode?: boolean;
  /** The release the ClusterBinding states for the control plane (the backend's stamp); this konnector is v0.5.0. */
  controlPlane?: string;
}

/** The reconcile's world as plain functions over plain values; every write is recorded in order. */
function world(o: WorldOptions = {}) {
  const writes: string[] = [];
  const status: APIServiceBindingStatus[] = [];
  const ready: (boolean | undefined)[] = [];
  const syncers: SyncerSpec[] = [];
  const cb: ClusterBinding = {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.ClusterBinding,
    metadata: {
      name: CLUSTER_BINDING_NAME,
      namespace: 'cluster-x',
      ...(o.controlPlane && { annotations: { [BACKEND_VERSION_ANNOTATION]: o.controlPlane } }),
    },
    spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'Provider X' },
  };
  const conn: BindingConnection = {
    server: 'https://provider.example',
    namespace: 'cluster-x',
    hasSynced: () => o.synced ?? true,
    lastError: () => o.connectError,
    clusterBinding: () => cb,
    exports: { get: (name, ns) => (ns === 'cluster-x' && name === NAME ? o.export : undefined) },
    heartbeat: o.heartbeat ?? { at: new Date('2026-01-01T11:59:00Z') },
    refusedRotations: new Map(o.refused ? [[`${secretRef.namespace}/${secretRef.name}`, { ...o.refused, target: {} as never }]] : []),
  };
  let held = o.held ?? false;
  const d: BindingDeps = {
    controlPlaneMode: o.controlPlaneMode ?? false,
    version: 'v0.5.0',
    now: () => at,
    getBinding: (r) => (r.namespace === ref.namespace && r.name === ref.name ? o.binding : undefined),
    getCrd: (name) => (name === NAME ? o.crd : undefined),
    readKubeconfigSecret: async (r) => (r.name === secretRef.name ? o.secret : undefined),
    connectionOf: () => (held ? conn : undefined),
    connect: async (_key, source, secret) => {
      writes.push(`connect ${source ? `${source.server}#${source.namespace}` : '(held)'} keeping ${secret.namespace}/${secret.name}`);
      held = true;
      return conn;
    },
    missingAccess: async () => o.missing ?? [],
    forgetAccess: (checks) => void writes.push(`forget ${checks.map(describeCheck).join(', ')}`),
    applyCrd: async (c) => void writes.push(`apply CRD ${c.metadata.name} owned by ${c.metadata.ownerReferences?.[0]?.uid}`),
    deleteCrd: async (name, uid) => void writes.push(`delete CRD ${name} uid ${uid}`),
    runSyncer: async (_key, spec) => {
      syncers.push(spec);
      return { hasSynced: () => o.syncerSynced ?? true, lastError: () => o.syncerError, consumerObjects: () => o.objects ?? [] };
    },
    deleteConsumerObject: async (r, obj) => void writes.push(`delete ${r.kind} ${obj.metadata.namespace}/${obj.metadata.name}`),
    release: async (key) => void writes.push(`release ${key}`),
    setFinalizers: async (_b, f) => void writes.push(`finalizers ${JSON.stringify(f)}`),
    writeStatus: async (r, s) => {
      writes.push(`status ${r.namespace}/${r.name}`);
      status.push(s);
    },
    setReady: (_r, v) => void ready.push(v),
  };
  const cond = (type: string) => status.at(-1)?.conditions?.find((c) => c.type === type);
  return { d, writes, status, ready, syncers, cond, run: () => reconcileBinding(d, ref, ctx) };
}

const summary = (conditions: readonly Condition[] | undefined) =>
  Object.fromEntries((conditions ?? []).map((c) => [c.type, `${c.status}${c.reason ? ` ${c.reason}` : ''}`]));

describe('reconcileBinding: bound', () => {
  it('takes a new binding to its CRD: finalizer first, then the CRD from the export, then one status write', async () => {
    const w = world({ binding: binding({ finalizer: false }), secret: kubeconfigSecret(), export: exportOf() });
    expect(await w.run()).toEqual({ requeueAfterMs: 10_000 });
    expect(w.writes).toEqual([
      `finalizers ["${BINDING_FINALIZER}"]`,
      'connect https://provider.example#cluster-x keeping klutch-bind/kubeconfig-abc',
      `apply CRD ${NAME} owned by u-binding`,
      `status klutch-bind/${NAME}`,
    ]);
    expect(summary(w.status[0]?.conditions)).toEqual({
      Connected: 'True Connected',
      Heartbeating: 'True Heartbeating',
      InformersSynced: 'Unknown Waiting',
      KubeconfigCurrent: 'True KubeconfigCurrent',
      Ready: 'Unknown Establishing',
      SchemaInSync: 'Unknown Establishing',
      SecretValid: 'True SecretValid',
    });
    expect(w.status[0]?.providerPrettyName).toBe('Provider X');
    expect(w.ready).toEqual([false]);
  });

  it('is Ready once the CRD is served and the syncer listed, syncing the storage version and only the claims it copies', async () => {
    const w = world({ binding: binding(), secret: kubeconfigSecret(), export: exportOf(), crd: crd() });
    expect(await w.run()).toEqual({ requeueAfterMs: 60_000 });
    expect(w.syncers).toEqual([
      {
        resource: { group: 'anynines.com', version: 'v1', resource: 'postgresqlinstances', kind: 'PostgresqlInstance', namespaced: true },
        statusSubresource: true,
        statusConditions: true,
        claims: [{ group: '', resource: 'secrets', version: 'v1', state: 'Accepted', selector: { owner: 'Provider' } }],
      },
    ]);
    expect(w.cond('Ready')).toMatchObject({ status: 'True', reason: 'AllConditionsTrue' });
    expect(w.ready).toEqual([true]);
    expect(w.writes.filter((x) => x.startsWith('apply'))).toEqual([]);
  });

  it('asks its access checks again after a watch that had listed failed (the grant may be gone), not otherwise', async () => {
    const bound = { binding: binding(), secret: kubeconfigSecret(), export: exportOf(), crd: crd() };
    const failing = world({ ...bound, syncerError: 'forbidden' });
    await failing.run();
    expect(failing.writes.filter((x) => x.startsWith('forget'))).toEqual([
      'forget get postgresqlinstances.anynines.com, list postgresqlinstances.anynines.com, watch postgresqlinstances.anynines.com, ' +
        'patch postgresqlinstances.anynines.com, delete postgresqlinstances.anynines.com, ' +
        'patch postgresqlinstances.anynines.com/status, update customresourcedefinitions.apiextensions.k8s.io (postgresqlinstances.anynines.com), ' +
        'patch customresourcedefinitions.apiextensions.k8s.io (postgresqlinstances.anynines.com), ' +
        'delete customresourcedefinitions.apiextensions.k8s.io (postgresqlinstances.anynines.com), ' +
        'get secrets, list secrets, watch secrets, create secrets, update secrets, delete secrets',
    ]);
    const working = world(bound);
    await working.run();
    expect(working.writes.filter((x) => x.startsWith('forget'))).toEqual([]);
    // Errors before the first list are the set-up's (the provider's RBAC not there yet): nothing is asked again.
    const starting = world({ ...bound, syncerSynced: false, syncerError: 'forbidden' });
    await starting.run();
    expect(starting.cond('InformersSynced')).toMatchObject({ status: 'False', reason: 'WatchFailed', message: 'forbidden' });
    expect(starting.writes.filter((x) => x.startsWith('forget'))).toEqual([]);
  });

  it('writes no status when the cached one says the same (as the API server hands it back, keys sorted)', async () => {
    const first = world({ binding: binding(), secret: kubeconfigSecret(), export: exportOf(), crd: crd() });
    await first.run();
    const cached = JSON.parse(
      JSON.stringify(first.status[0], (_k, v: unknown) =>
        v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v,
      ),
    ) as APIServiceBindingStatus;
    const again = world({ binding: binding({ status: cached }), secret: kubeconfigSecret(), export: exportOf(), crd: crd() });
    expect(await again.run()).toEqual({ requeueAfterMs: 60_000 });
    expect(again.writes).toEqual(['connect https://provider.example#cluster-x keeping klutch-bind/kubeconfig-abc']);
  });

  it('waits for a valid kubeconfig Secret without connecting, naming the Secret and the fix', async () => {
    const w = world({ binding: binding(), secret: undefined, export: exportOf() });
    expect(await w.run()).toEqual({ requeueAfterMs: 30_000 });
    expect(w.writes).toEqual([`status klutch-bind/${NAME}`]);
    expect(w.cond('SecretValid')).toMatchObject({ status: 'False', reason: 'SecretNotFound', severity: 'Error' });
    expect(w.cond('SecretValid')?.message).toContain('Secret klutch-bind/kubeconfig-abc (spec.kubeconfigSecretRef) does not exist');
    expect(summary(w.status[0]?.conditions)).toMatchObject({ Connected: 'Unknown Waiting', Ready: 'False SecretNotFound' });
    const forbidden = world({ binding: binding(), secret: 'forbidden' });
    await forbidden.run();
    expect(forbidden.cond('SecretValid')).toMatchObject({ status: 'False', reason: 'SecretForbidden' });
  });

  it('keeps serving on the connection it holds when the Secret goes (no data lost), and says the Secret is gone', async () => {
    const w = world({ binding: binding(), secret: undefined, held: true, export: exportOf(), crd: crd() });
    expect(await w.run()).toEqual({ requeueAfterMs: 10_000 });
    expect(w.writes[0]).toBe('connect (held) keeping klutch-bind/kubeconfig-abc');
    expect(w.syncers).toHaveLength(1);
    expect(summary(w.status[0]?.conditions)).toMatchObject({ InformersSynced: 'True InformersSynced', Ready: 'False SecretNotFound' });
  });

  it('says the provider is unreachable, naming it, and decides nothing after the connection', async () => {
    const w = world({
      binding: binding(),
      secret: kubeconfigSecret(),
      synced: false,
      connectError: 'connect ECONNREFUSED',
      export: exportOf(),
    });
    await w.run();
    expect(w.cond('Connected')).toMatchObject({
      status: 'False',
      reason: 'ProviderUnreachable',
      message: 'cannot reach the provider https://provider.example (namespace cluster-x): connect ECONNREFUSED',
    });
    expect(summary(w.status[0]?.conditions)).toMatchObject({ SchemaInSync: 'Unknown Waiting', Heartbeating: 'Unknown Waiting' });
    expect(w.syncers).toEqual([]);
  });

  it('is not Ready once a listed connection is cut off, naming the provider and the error; keeps syncing from its caches', async () => {
    const w = world({
      binding: binding(),
      secret: kubeconfigSecret(),
      connectError: 'connect ECONNREFUSED 10.0.0.1:6443',
      export: exportOf(),
      crd: crd(),
    });
    expect(await w.run()).toEqual({ requeueAfterMs: 10_000 });
    expect(w.cond('Ready')).toMatchObject({
      status: 'False',
      reason: 'ProviderUnreachable',
      message:
        'lost the provider https://provider.example (namespace cluster-x): connect ECONNREFUSED 10.0.0.1:6443; the konnector retries, and until it answers no change or status of a claim travels',
    });
    expect([w.cond('SchemaInSync')?.status, w.syncers.length]).toEqual(['True', 1]);
    // The watch runs again: Connected, and Ready.
    const back = world({ binding: binding(), secret: kubeconfigSecret(), export: exportOf(), crd: crd() });
    await back.run();
    expect([back.cond('Connected')?.status, back.cond('Ready')?.status]).toEqual(['True', 'True']);
  });

  it('refuses an export that describes another resource than its name, before any access check or CRD', async () => {
    const w = world({ binding: binding(), secret: kubeconfigSecret(), export: exportOf('users'), missing: ['get users'] });
    expect(await w.run()).toEqual({ requeueAfterMs: 30_000 });
    expect(w.cond('SchemaInSync')).toMatchObject({ status: 'False', reason: 'ExportNameMismatch' });
    expect(w.writes.some((x) => x.startsWith('apply'))).toBe(false);
  });

  it('says which access is missing and how to grant it, and makes no CRD it could not manage', async () => {
    const w = world({
      binding: binding(),
      secret: kubeconfigSecret(),
      export: exportOf(),
      missing: ['list postgresqlinstances.anynines.com'],
    });
    expect(await w.run()).toEqual({ requeueAfterMs: 10_000 });
    expect(w.cond('InformersSynced')).toMatchObject({ status: 'False', reason: 'Forbidden' });
    expect(w.cond('InformersSynced')?.message).toBe(
      "the konnector may not list postgresqlinstances.anynines.com in this cluster; grant it access to postgresqlinstances.anynines.com: run kubectl bind with the bind backend's URL again (it grants the konnector each API it binds), or ask this cluster's administrator to",
    );
    expect(w.writes.some((x) => x.startsWith('apply'))).toBe(false);
    const cp = world({ binding: binding(), secret: kubeconfigSecret(), export: exportOf(), missing: ['list x'], controlPlaneMode: true });
    await cp.run();
    // Read in the app cluster too: the ClusterRole by its name there, and whom to ask.
    expect(cp.cond('InformersSynced')?.message).toBe(
      'the kubeconfig the platform holds for this cluster (its AppClusterBinding) may not list x; bind its user to ClusterRole klutch-control-plane-konnector, which the platform operator provides with the release (it covers every API of the catalog), or ask them',
    );
  });

  it('says the export is missing, and what to run', async () => {
    const w = world({ binding: binding(), secret: kubeconfigSecret() });
    await w.run();
    expect(w.cond('SchemaInSync')).toMatchObject({ status: 'False', reason: 'ExportNotFound' });
    expect(w.cond('SchemaInSync')?.message).toContain('run kubectl bind for it');
  });

  it('is not Ready while the heartbeat fails or the provider rotated a kubeconfig it refused', async () => {
    const failing = world({
      binding: binding(),
      secret: kubeconfigSecret(),
      export: exportOf(),
      crd: crd(),
      heartbeat: { error: 'forbidden' },
    });
    await failing.run();
    expect(failing.cond('Ready')).toMatchObject({ status: 'False', reason: 'HeartbeatFailed', message: 'forbidden' });
    const refused = world({
      binding: binding(),
      secret: kubeconfigSecret(),
      export: exportOf(),
      crd: crd(),
      refused: { reason: 'KubeconfigUnsafe', message: 'users[p].user.exec runs a program' },
    });
    await refused.run();
    expect(refused.cond('KubeconfigCurrent')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'KubeconfigUnsafe' });
  });

  it('is not Ready, and says what to do, while the control plane runs an older release than this konnector; keeps syncing', async () => {
    const bound = (controlPlane?: string) =>
      world({ binding: binding(), secret: kubeconfigSecret(), export: exportOf(), crd: crd(), controlPlane });
    const older = bound('v0.4.9');
    await older.run();
    expect(older.cond('Ready')).toMatchObject({ status: 'False', severity: 'Warning', reason: 'KonnectorNewer' });
    expect(older.cond('Ready')?.message).toMatch(
      /^this konnector \(v0\.5\.0\) is newer than the control plane \(v0\.4\.9\), which is not supported: upgrade the control plane first, or run the konnector of v0\.4\.9/,
    );
    expect([older.cond('InformersSynced')?.status, older.syncers.length]).toEqual(['True', 1]);
    // The same release, a newer control plane (the supported skew): Ready, the releases named.
    for (const v of ['v0.5.0', 'v0.6.0']) {
      const w = bound(v);
      await w.run();
      expect([w.cond('Ready')?.status, w.cond('ControlPlaneVersion')?.message]).toEqual(['True', `control plane ${v}, konnector v0.5.0`]);
    }
    // No release stated (Klutch's backend) or none that parses: nothing compared, no condition — and a warning of an
    // earlier stamp does not stay on the binding.
    for (const v of [undefined, 'main']) {
      const w = world({
        binding: { ...binding(), status: { conditions: older.status.at(-1)?.conditions } },
        secret: kubeconfigSecret(),
        export: exportOf(),
        crd: crd(),
        controlPlane: v,
      });
      await w.run();
      expect([w.cond('Ready')?.status, w.cond('ControlPlaneVersion')]).toEqual(['True', undefined]);
    }
  });

  it('releases the connection of a binding that is gone, and writes nothing', async () => {
    const w = world({});
    expect(await w.run()).toBeUndefined();
    expect(w.writes).toEqual([`release klutch-bind/${NAME}`]);
    expect(w.ready).toEqual([undefined]);
  });
});

describe('reconcileBinding: deleted', () => {
  const deleted = (o: WorldOptions) =>
    world({ binding: binding({ deleting: true }), secret: kubeconfigSecret(), export: exportOf(), ...o });

  it('deletes the objects of the API first and says how many wait for their provider copies', async () => {
    const w = deleted({ crd: crd(), objects: [claim('a'), claim('b', true)] });
    expect(await w.run()).toEqual({ requeueAfterMs: 5_000 });
    expect(w.writes.slice(1)).toEqual(['delete PostgresqlInstance apps/a', `status klutch-bind/${NAME}`]);
    expect(w.cond('Deleting')).toMatchObject({
      status: 'False',
      severity: 'Info',
      message: 'deleting: 2 PostgresqlInstance object(s) wait for their provider copies to be deleted',
    });
    expect(w.ready).toEqual([undefined]);
  });

  it('deletes nothing while the syncer is not running (no claim orphaned upstream)', async () => {
    const w = deleted({ crd: crd(), syncerSynced: false, objects: [claim('a')] });
    expect(await w.run()).toEqual({ requeueAfterMs: 5_000 });
    expect(w.writes.filter((x) => x.startsWith('delete'))).toEqual([]);
    expect(w.cond('Deleting')?.message).toContain('the syncer is not running');
  });

  it('never makes its CRD again while deleted', async () => {
    const outdated = crd();
    outdated.spec.versions = outdated.spec.versions.slice(0, 1);
    const w = deleted({ crd: outdated });
    await w.run();
    expect(w.writes.some((x) => x.startsWith('apply'))).toBe(false);
    expect(w.cond('SchemaInSync')).toMatchObject({ status: 'Unknown', reason: 'CustomResourceDefinitionDeleting' });
  });

  it('deletes the CRD it owns once its objects are gone, and waits for it', async () => {
    const w = deleted({ crd: crd(), objects: [] });
    expect(await w.run()).toEqual({ requeueAfterMs: 2_000 });
    expect(w.writes.slice(1)).toEqual([`delete CRD ${NAME} uid u-crd`]);
    const going = deleted({ crd: crd({ deleting: true }), objects: [] });
    await going.run();
    expect(going.writes.filter((x) => x.startsWith('delete'))).toEqual([]);
  });

  it('once the CRD is gone (or was never its own), stops syncing and drops its finalizer', async () => {
    for (const w of [deleted({}), deleted({ crd: crd({ uid: 'someone-else' }) })]) {
      expect(await w.run()).toBeUndefined();
      expect(w.writes).toEqual([`release klutch-bind/${NAME}`, 'finalizers []']);
    }
  });
});
