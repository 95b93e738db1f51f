import { Ready, Status, type RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { inputFor, type Recipe } from '../../recipe';
import { loadCatalog } from '../../harness/crossplane/catalog';
import {
  answer,
  claimLabels,
  compositeOf,
  demoComposites,
  demoInput,
  fatalMessages,
  requestOf,
} from '../../harness/crossplane/function-requests';
import { CNPG_INSTANCE_LABEL } from '../../backends/cnpg';
import { conditionHold, REFERENCE_NOT_FOUND } from '../../lib/claim-hold';
import {
  diagnose,
  DIAGNOSTICS_REQUIREMENT,
  diagnosticsSelector,
  errorElsewhere,
  ERRORS_FROM_REQUIREMENT,
  QUOTA_REQUIREMENT,
  VOLUMES_REQUIREMENT,
  WAITING_TTL,
} from './diagnostics';
import { runFunction, TTL } from './fn';
import { validateInput } from './validate-input';

type Obj = Record<string, any>;

/** A made-up backend: a Store whose operator runs Worker Pods labelled with the store's name. */
const input = demoInput('store', { apiVersion: 'demo.example.org/v1', kind: 'Store' }, 'kubernetes.crossplane.io/v1alpha2', {
  progressPaths: ['status.atProvider.manifest.status.phase'],
  diagnostics: {
    apiVersion: 'v1',
    kind: 'Pod',
    labels: [
      {
        key: 'demo.example.org/store',
        from: 'metadata.labels[crossplane.io/claim-name]',
        transforms: [{ type: 'format', format: 'store-%s' }],
      },
    ],
    conditions: [
      { type: 'PodScheduled', status: 'False', says: 'cannot be scheduled' },
      { type: 'ContainersReady', status: 'False' },
    ],
  },
});
const diagnostics = input.diagnostics!;
const WHERE = '(composition demo-store)';
// A tenant's labels on the namespaced composite: they must not point the function at another claim's or namespace's Pods.
const { v1: v1Store, v2: v2Store } = demoComposites('Store', claimLabels('mall', 'victim'));

const UNBOUND = "0/1 nodes are available: 1 node(s) didn't find available persistent volumes to bind.";
function pod(name: string, o: { ns?: string; store?: string; message?: string; type?: string; deleting?: boolean } = {}): Obj {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: o.ns ?? 'team-a',
      labels: { 'demo.example.org/store': `store-${o.store ?? 'shop'}` },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    status: {
      conditions: [
        { type: o.type ?? 'PodScheduled', status: 'False', reason: 'Unschedulable', message: o.message ?? UNBOUND },
        { type: 'Ready', status: 'False' },
      ],
    },
  };
}
/** The observed Object: not Ready, its Store in the phase "Starting". */
const waitingObject: Obj = {
  spec: { forProvider: { manifest: {} } },
  status: {
    atProvider: { manifest: { status: { phase: 'Starting' } } },
    conditions: [
      { type: 'Ready', status: 'False', reason: 'Creating' },
      { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
    ],
  },
};
const own = (r: RunFunctionResponse) => r.conditions.find((c) => c.type === 'DataServiceReady');

describe('diagnostics: why a resource waits, from objects its backend makes', () => {
  it('is part of the validated input; labels and conditions cannot be empty', () => {
    expect(validateInput(input)).toMatchObject({ ok: true });
    expect(validateInput({ ...input, diagnostics: { ...diagnostics, labels: [] } })).toMatchObject({
      ok: false,
      errors: [expect.stringContaining('diagnostics.labels')],
    });
    expect(validateInput({ ...input, diagnostics: { ...diagnostics, conditions: [{ type: 'PodScheduled' }] } })).toMatchObject({
      ok: false,
      errors: ['diagnostics.conditions[0].status: is required'],
    });
  });

  it("selects the kind by its labels in the claim's namespace (v1) or the composite's own, whatever its labels say (v2)", () => {
    const labels = { labels: { 'demo.example.org/store': 'store-shop' } };
    expect(diagnosticsSelector(diagnostics, v1Store, WHERE)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'team-a',
      matchLabels: labels,
    });
    expect(diagnosticsSelector(diagnostics, v2Store, WHERE)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      namespace: 'team-a',
      matchLabels: labels,
    });
    // A v1 composite made without a claim has nobody to tell: nothing is asked.
    expect(diagnosticsSelector(diagnostics, { metadata: { name: 'x' } }, WHERE)).toBeUndefined();
  });

  it("never speaks with another namespace's or another claim's Pod, or one being deleted, even when handed over", () => {
    const selector = diagnosticsSelector(diagnostics, v2Store, WHERE)!;
    const hostile = [
      pod('a-theirs', { ns: 'victim', message: 'victim namespace' }),
      pod('b-mall', { store: 'mall', message: 'another claim' }),
      pod('c-going', { deleting: true, message: 'being deleted' }),
      { ...pod('d-service'), kind: 'Service' },
    ];
    expect(diagnose(diagnostics, selector, hostile)).toBeUndefined();
    expect(diagnose(diagnostics, selector, [...hostile, pod('z-mine')])).toEqual({
      reason: 'Unschedulable',
      text: `Pod z-mine cannot be scheduled: ${UNBOUND}`,
    });
  });

  it('takes the first Pod by name with a saying condition, in the order the recipe prefers; a True one says nothing', () => {
    const selector = diagnosticsSelector(diagnostics, v1Store, WHERE)!;
    const scheduled = pod('a-fine');
    scheduled.status.conditions[0].status = 'True';
    const crashing = pod('b-crash', { type: 'ContainersReady', message: 'containers with unready status: [worker]' });
    expect(diagnose(diagnostics, selector, [scheduled, crashing, pod('c-unbound')])).toEqual({
      reason: 'Unschedulable',
      text: 'Pod b-crash has ContainersReady=False: containers with unready status: [worker]',
    });
    expect(diagnose(diagnostics, selector, [scheduled])).toBeUndefined();
  });
});

describe('diagnostics through the function (the requirements loop)', () => {
  it('while the resource waits: asks for the Pods, then says why after the progress, with a short TTL', () => {
    const req = requestOf(input, v1Store, { 'demo-store': waitingObject });
    const first = runFunction(req);
    expect(fatalMessages(first)).toEqual([]);
    expect(first.requirements?.extraResources).toEqual({
      [DIAGNOSTICS_REQUIREMENT]: {
        apiVersion: 'v1',
        kind: 'Pod',
        namespace: 'team-a',
        matchLabels: { labels: { 'demo.example.org/store': 'store-shop' } },
      },
    });
    expect(first.meta?.ttl).toEqual(WAITING_TTL);
    expect(own(first)).toMatchObject({ status: Status.STATUS_CONDITION_FALSE, reason: 'Provisioning', message: 'demo store: Starting' });

    const second = runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [pod('worker-1'), pod('worker-0', { ns: 'victim' })]));
    expect(second.requirements).toEqual(first.requirements);
    expect(own(second)).toMatchObject({
      status: Status.STATUS_CONDITION_FALSE,
      reason: 'Unschedulable',
      message: `demo store: Starting; Pod worker-1 cannot be scheduled: ${UNBOUND}`,
    });
  });

  it("before the backend says anything, the message is the Pod's alone", () => {
    const silent = structuredClone(waitingObject);
    delete silent.status.atProvider;
    const r = runFunction(answer(requestOf(input, v1Store, { 'demo-store': silent }), DIAGNOSTICS_REQUIREMENT, [pod('worker-1')]));
    expect(own(r)).toMatchObject({ reason: 'Unschedulable', message: `demo store: Pod worker-1 cannot be scheduled: ${UNBOUND}` });
  });

  it('once the Pod is scheduled it goes back to the progress; once Ready it asks nothing and keeps the usual TTL', () => {
    const req = requestOf(input, v1Store, { 'demo-store': waitingObject });
    const scheduled = pod('worker-1');
    scheduled.status.conditions[0].status = 'True';
    expect(own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [scheduled])))).toMatchObject({
      reason: 'Provisioning',
      message: 'demo store: Starting',
    });
    const ready = structuredClone(waitingObject);
    ready.status.conditions[0] = { type: 'Ready', status: 'True', reason: 'Available' };
    const r = runFunction(requestOf(input, v1Store, { 'demo-store': ready }));
    expect(r.requirements?.extraResources?.[DIAGNOSTICS_REQUIREMENT]).toBeUndefined();
    expect(r.meta?.ttl).toEqual(TTL);
    expect(own(r)).toMatchObject({ status: Status.STATUS_CONDITION_TRUE, reason: 'Available' });
  });

  it('before the resource is observed, or while it fails, nothing is asked and the failure wins', () => {
    expect(runFunction(requestOf(input, v1Store)).requirements?.extraResources?.[DIAGNOSTICS_REQUIREMENT]).toBeUndefined();
    const failing = structuredClone(waitingObject);
    failing.status.conditions[1] = { type: 'Synced', status: 'False', reason: 'ReconcileError', message: 'forbidden' };
    const r = runFunction(answer(requestOf(input, v1Store, { 'demo-store': failing }), DIAGNOSTICS_REQUIREMENT, [pod('worker-1')]));
    expect(r.requirements?.extraResources?.[DIAGNOSTICS_REQUIREMENT]).toBeUndefined();
    expect(own(r)).toMatchObject({ reason: 'ReconcileError', message: 'demo store: forbidden' });
  });
});

const apis: Api[] = await loadCatalog();
const pg = apis.find((a) => a.name === 'postgresql') as Api;

describe('the cnpg instance recipe', () => {
  const spec = { service: 'a9s-postgresql15', plan: 'postgresql-single-small' };
  const cluster: Obj = {
    spec: { forProvider: { manifest: {} } },
    status: {
      atProvider: { manifest: { status: { phase: 'Setting up primary', phaseReason: 'Creating primary instance pg-1' } } },
      conditions: [{ type: 'Ready', status: 'False', reason: 'Creating' }],
    },
  };
  /** The input and a composite of claim `pg` in team-d on `target`, its spec `withSpec`, its labels `labels` (v2). */
  const onTarget = (target: 'v1' | 'v2', withSpec: Obj = spec, labels: Record<string, string> = {}) => ({
    input: inputFor(pg.backends.cnpg as Recipe, { backend: 'cnpg', service: 'postgresql', target }),
    composite:
      target === 'v1'
        ? compositeOf(pg, 'cnpg', withSpec, { name: 'pg', namespace: 'team-d' })
        : { apiVersion: pg.apiVersion, kind: pg.kind, metadata: { name: 'pg', namespace: 'team-d', labels }, spec: withSpec },
  });
  const cnpgPod = (name: string, ns: string, clusterName: string) => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, namespace: ns, labels: { 'cnpg.io/cluster': clusterName, 'cnpg.io/jobRole': 'initdb' } },
    status: { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable', message: UNBOUND }] },
  });

  it.each(['v1', 'v2'] as const)(
    "%s: says why its initdb Pod cannot be scheduled, from its own namespace's Pods of its Cluster only",
    (target) => {
      // A tenant's labels on the v2 composite must not point the function at another claim's Pods.
      const { input, composite } = onTarget(target, spec, claimLabels('other', 'victim'));
      const req = requestOf(input, composite, { 'cnpg-postgresql': cluster });
      const first = runFunction(req);
      expect(fatalMessages(first)).toEqual([]);
      expect(first.requirements?.extraResources?.[DIAGNOSTICS_REQUIREMENT]).toEqual({
        apiVersion: 'v1',
        kind: 'Pod',
        namespace: 'team-d',
        matchLabels: { labels: { 'cnpg.io/cluster': 'pg' } },
      });
      const theirs = [cnpgPod('pg-1-initdb-aaaaa', 'victim', 'pg'), cnpgPod('other-1-initdb-bbbbb', 'team-d', 'other')];
      expect(own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, theirs)))?.message).toBe(
        'cnpg postgresql: Setting up primary: Creating primary instance pg-1',
      );
      expect(
        own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [...theirs, cnpgPod('pg-1-initdb-x7k2p', 'team-d', 'pg')]))),
      ).toMatchObject({
        reason: 'Unschedulable',
        message: `cnpg postgresql: Setting up primary: Creating primary instance pg-1; Pod pg-1-initdb-x7k2p cannot be scheduled: ${UNBOUND}`,
      });
    },
  );

  it.each(['v1', 'v2'] as const)(
    "%s: names its namespace's ResourceQuota that refuses its volume while none is made, in the API server's words",
    (target) => {
      const { input, composite } = onTarget(target);
      // CNPG has made nothing yet: no phase, no volume (its refused PersistentVolumeClaim is only in its log).
      const silent = { ...cluster, status: { ...cluster.status, atProvider: { manifest: { status: {} } } } };
      const req = () => requestOf(input, composite, { 'cnpg-postgresql': structuredClone(silent) });
      const first = runFunction(req());
      expect(fatalMessages(first)).toEqual([]);
      expect(first.requirements?.extraResources?.[QUOTA_REQUIREMENT]).toEqual({
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        namespace: 'team-d',
        matchLabels: { labels: {} },
      });
      const size = (first.desired?.resources?.['cnpg-postgresql']?.resource as Obj).spec.forProvider.manifest.spec.storage.size;
      expect(size).toMatch(/^\d+Gi$/);
      const quota = (name: string, hard: Obj, used: Obj, ns = 'team-d') => ({
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name, namespace: ns },
        spec: { hard },
        status: { hard, used },
      });
      const with_ = (...quotas: Obj[]) => own(runFunction(answer(req(), QUOTA_REQUIREMENT, quotas)));
      // Another namespace's full quota, and one of its own with room, say nothing.
      const roomy = quota('a-roomy', { 'requests.storage': '100Gi', persistentvolumeclaims: '10' }, { 'requests.storage': '0' });
      const theirs = quota('klutch-claims', { 'requests.storage': '1Gi' }, { 'requests.storage': '0' }, 'victim');
      expect(with_(roomy, theirs)).toMatchObject({ reason: 'Provisioning' });
      const full = quota('klutch-claims', { 'requests.storage': '1Gi', 'count/postgresqlinstances.anynines.com': '5' }, {});
      const said = with_(roomy, theirs, full);
      expect(said).toMatchObject({ status: Status.STATUS_CONDITION_FALSE, reason: 'QuotaExceeded' });
      // After what else it waits for (here its NetworkPolicy, which the request has not observed).
      expect(said?.message).toMatch(
        `; its volume of ${size} cannot be made: exceeded quota: klutch-claims, requested: requests.storage=${size}, used: requests.storage=0, limited: requests.storage=1Gi`,
      );
      // The control plane's hop, with what to do: the claim in the app cluster says so (lib/claim-hold.ts).
      expect(conditionHold({ type: 'DataServiceReady', status: 'False', reason: said!.reason, message: said!.message })).toMatchObject({
        hop: 'control plane',
        todo: expect.stringContaining('ask the platform operator for more'),
      });
      // A count of volumes used up, and one per storage class that the instance does not use.
      expect(with_(quota('volumes', { persistentvolumeclaims: '2' }, { persistentvolumeclaims: '2' }))?.message).toContain(
        'exceeded quota: volumes, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=2, limited: persistentvolumeclaims=2',
      );
      expect(with_(quota('fast', { 'fast.storageclass.storage.k8s.io/requests.storage': '0' }, {}))).toMatchObject({
        reason: 'Provisioning',
      });
      // Once CNPG has made its one volume, the quota is not asked (a full quota of a made instance refuses nothing of it).
      const made = structuredClone(silent) as Obj;
      made.status.atProvider.manifest.status = { phase: 'Setting up primary', pvcCount: 1 };
      const after = runFunction(answer(requestOf(input, composite, { 'cnpg-postgresql': made }), QUOTA_REQUIREMENT, [full]));
      expect(after.requirements?.extraResources?.[QUOTA_REQUIREMENT]).toBeUndefined();
      expect(own(after)).toMatchObject({ reason: 'Provisioning' });
    },
  );

  it.each(['v1', 'v2'] as const)(
    "%s: names the ResourceQuota that refuses a replica's volume once the primary's is made, and none once all are",
    (target) => {
      const { input, composite } = onTarget(target, { ...spec, plan: 'postgresql-replica-small' });
      const madeSoFar = (pvcCount: number) => {
        const c = structuredClone(cluster) as Obj;
        c.status.atProvider.manifest.status = { phase: 'Creating a new replica', pvcCount };
        return requestOf(input, composite, { 'cnpg-postgresql': c });
      };
      const first = runFunction(madeSoFar(1));
      expect(first.requirements?.extraResources?.[QUOTA_REQUIREMENT]).toMatchObject({ kind: 'ResourceQuota', namespace: 'team-d' });
      const manifest = (first.desired?.resources?.['cnpg-postgresql']?.resource as Obj).spec.forProvider.manifest;
      expect(manifest.spec.instances).toBe(3);
      const size = manifest.spec.storage.size as string;
      // The primary's volume is counted in the quota's use; the second replica's is the one refused, in the words the
      // API server will use then (the first replica's counted too).
      const hard = { persistentvolumeclaims: '2', 'requests.storage': '100Gi' };
      const quota = { apiVersion: 'v1', kind: 'ResourceQuota', metadata: { name: 'volumes', namespace: 'team-d' } };
      const used = (n: number) => ({ ...quota, spec: { hard }, status: { hard, used: { persistentvolumeclaims: String(n) } } });
      expect(own(runFunction(answer(madeSoFar(1), QUOTA_REQUIREMENT, [used(1)])))).toMatchObject({
        reason: 'QuotaExceeded',
        message: expect.stringContaining(
          `its volume of ${size} for instance 3 of 3 cannot be made: exceeded quota: volumes, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=2, limited: persistentvolumeclaims=2`,
        ),
      });
      // Storage, from nothing made: room for two volumes, the third's refused with the two before it counted.
      const two = `${2 * parseInt(size, 10)}Gi`;
      const storage = { ...quota, spec: { hard: { 'requests.storage': two } }, status: { hard: { 'requests.storage': two }, used: {} } };
      expect(own(runFunction(answer(madeSoFar(0), QUOTA_REQUIREMENT, [storage])))?.message).toContain(
        `its volume of ${size} for instance 3 of 3 cannot be made: exceeded quota: volumes, requested: requests.storage=${size}, used: requests.storage=${two}, limited: requests.storage=${two}`,
      );
      expect(own(runFunction(answer(madeSoFar(2), QUOTA_REQUIREMENT, [used(2)])))?.message).toContain(
        `its volume of ${size} for instance 3 of 3 cannot be made: exceeded quota: volumes, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=2`,
      );
      // The quota is why the first replica's join Pod cannot be scheduled: the claim names the quota, not the Pod.
      const join = {
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name: 'pg-2-join-x7k2p', namespace: 'team-d', labels: { 'cnpg.io/cluster': 'pg', 'cnpg.io/jobRole': 'join' } },
        status: {
          conditions: [
            {
              type: 'PodScheduled',
              status: 'False',
              reason: 'Unschedulable',
              message: '0/1 nodes are available: persistentvolumeclaim "pg-2" not found.',
            },
          ],
        },
      };
      const full = {
        ...quota,
        spec: { hard: { persistentvolumeclaims: '1' } },
        status: { hard: { persistentvolumeclaims: '1' }, used: { persistentvolumeclaims: '1' } },
      };
      expect(own(runFunction(answer(answer(madeSoFar(1), DIAGNOSTICS_REQUIREMENT, [join]), QUOTA_REQUIREMENT, [full])))).toMatchObject({
        reason: 'QuotaExceeded',
        message: expect.stringContaining(`its volume of ${size} for instance 2 of 3 cannot be made: exceeded quota: volumes`),
      });
      // Without a quota in the way, the Pod's words are the cause.
      expect(own(runFunction(answer(answer(madeSoFar(1), DIAGNOSTICS_REQUIREMENT, [join]), QUOTA_REQUIREMENT, [])))).toMatchObject({
        reason: 'Unschedulable',
      });
      // All three made: nothing left for a quota to refuse, and it is not asked.
      const all = runFunction(answer(madeSoFar(3), QUOTA_REQUIREMENT, [used(3)]));
      expect(all.requirements?.extraResources?.[QUOTA_REQUIREMENT]).toBeUndefined();
      expect(own(all)).toMatchObject({ reason: 'Provisioning' });
      expect(all.requirements?.extraResources?.[VOLUMES_REQUIREMENT]).toBeUndefined();
    },
  );

  it.each(['v1', 'v2'] as const)(
    "%s: counts the volume CNPG made before its Cluster's count says so, and never names it as refused",
    (target) => {
      const { input, composite } = onTarget(target, { ...spec, plan: 'postgresql-replica-small' });
      // CNPG made the primary's volume (the quota counts it) and has not yet written its pvcCount.
      const c = structuredClone(cluster) as Obj;
      c.status.atProvider.manifest.status = { phase: 'Setting up primary' };
      const req = requestOf(input, composite, { 'cnpg-postgresql': c });
      const first = runFunction(req);
      expect(first.requirements?.extraResources?.[VOLUMES_REQUIREMENT]).toEqual({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: 'team-d',
        matchLabels: { labels: { 'cnpg.io/cluster': 'pg' } },
      });
      const hard = { persistentvolumeclaims: '1' };
      const full = {
        apiVersion: 'v1',
        kind: 'ResourceQuota',
        metadata: { name: 'volumes', namespace: 'team-d' },
        spec: { hard },
        status: { hard, used: { persistentvolumeclaims: '1' } },
      };
      const pvc = (name: string, ns: string, cluster: string) => ({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: { name, namespace: ns, labels: { 'cnpg.io/cluster': cluster } },
      });
      const withQuota = answer(req, QUOTA_REQUIREMENT, [full]);
      // Another namespace's or another claim's volume of the name is not this one's.
      expect(
        own(runFunction(answer(withQuota, VOLUMES_REQUIREMENT, [pvc('pg-1', 'victim', 'pg'), pvc('other-1', 'team-d', 'other')])))?.message,
      ).toContain('for instance 1 of 3 cannot be made');
      const said = own(runFunction(answer(withQuota, VOLUMES_REQUIREMENT, [pvc('pg-1', 'team-d', 'pg')])));
      expect(said).toMatchObject({
        reason: 'QuotaExceeded',
        message: expect.stringContaining(
          'for instance 2 of 3 cannot be made: exceeded quota: volumes, requested: persistentvolumeclaims=1, used: persistentvolumeclaims=1',
        ),
      });
      // The requirements stay as they were asked (the Cluster's own count decides): Crossplane's loop settles.
      expect(runFunction(answer(withQuota, VOLUMES_REQUIREMENT, [pvc('pg-1', 'team-d', 'pg')])).requirements?.extraResources).toMatchObject(
        {
          [QUOTA_REQUIREMENT]: first.requirements?.extraResources?.[QUOTA_REQUIREMENT],
          [VOLUMES_REQUIREMENT]: first.requirements?.extraResources?.[VOLUMES_REQUIREMENT],
        },
      );
    },
  );

  it("says that its Pod cannot start for an image the registry lacks, in the kubelet's words, not the Ready condition's", () => {
    const input = inputFor(pg.backends.cnpg as Recipe, { backend: 'cnpg', service: 'postgresql', target: 'v1' });
    const req = requestOf(input, compositeOf(pg, 'cnpg', spec, { name: 'pg', namespace: 'team-d' }), { 'cnpg-postgresql': cluster });
    const pulling = (reason: string) => ({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'pg-1-initdb-x7k2p', namespace: 'team-d', labels: { 'cnpg.io/cluster': 'pg' } },
      status: {
        phase: 'Pending',
        conditions: [
          { type: 'PodScheduled', status: 'True' },
          { type: 'Ready', status: 'False', reason: 'ContainersNotReady', message: 'containers with unready status: [initdb]' },
        ],
        initContainerStatuses: [
          {
            name: 'bootstrap-controller',
            state: { waiting: { reason, message: 'Back-off pulling image "registry.example/postgresql:15"' } },
          },
        ],
      },
    });
    expect(own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [pulling('ImagePullBackOff')])))).toMatchObject({
      reason: 'ImagePullBackOff',
      message:
        'cnpg postgresql: Setting up primary: Creating primary instance pg-1; Pod pg-1-initdb-x7k2p cannot start: container bootstrap-controller is waiting: ImagePullBackOff: Back-off pulling image "registry.example/postgresql:15"',
    });
    // A container waiting for a reason that is only progress (being created) says nothing.
    expect(own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [pulling('ContainerCreating')])))?.message).toBe(
      'cnpg postgresql: Setting up primary: Creating primary instance pg-1',
    );
  });

  it.each(['v1', 'v2'] as const)(
    '%s: says that its recovery Pod failed and what to check, before CNPG gives up on the Job minutes later',
    (target) => {
      const restoring = { ...spec, restoreFrom: { instance: 'orders', pointInTime: '2020-01-01T00:00:00Z' } };
      const { input, composite } = onTarget(target, restoring);
      const req = requestOf(input, composite, { 'cnpg-postgresql': cluster });
      // A failed recovery Pod (restartPolicy Never): no message on its conditions, its container's exit in its status.
      const failedPod = (name: string, ns = 'team-d', exitCode = 1) => ({
        apiVersion: 'v1',
        kind: 'Pod',
        metadata: { name, namespace: ns, labels: { 'cnpg.io/cluster': 'pg', 'cnpg.io/jobRole': 'full-recovery' } },
        status: {
          phase: 'Failed',
          conditions: [{ type: 'Ready', status: 'False', reason: 'PodFailed' }],
          containerStatuses: [{ name: 'full-recovery', state: { terminated: { exitCode, reason: 'Error' } } }],
        },
      });
      const said = own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [failedPod('pg-1-full-recovery-q2x9z')])));
      expect(said).toMatchObject({ status: Status.STATUS_CONDITION_FALSE, reason: 'PodFailed' });
      expect(said?.message).toMatch(
        /^cnpg postgresql: Setting up primary: Creating primary instance pg-1; Pod pg-1-full-recovery-q2x9z failed: container full-recovery exited with 1 \(Error\); the restore from spec\.restoreFrom failed: restoreFrom\.pointInTime must lie between /,
      );
      // Another namespace's failed Pod of a Cluster of the same name says nothing here.
      expect(own(runFunction(answer(req, DIAGNOSTICS_REQUIREMENT, [failedPod('pg-1-full-recovery-aaaaa', 'victim')])))?.message).toBe(
        'cnpg postgresql: Setting up primary: Creating primary instance pg-1',
      );
      // CNPG's verdict once it gives up on the Job: the claim fails with CNPG's words and the same advice.
      const unrecoverable = structuredClone(cluster) as any;
      unrecoverable.status.atProvider.manifest.status = {
        phase: 'Cluster is unrecoverable and needs manual intervention',
        phaseReason:
          'Instance creation failed for the following jobs: pg-1-full-recovery. Check the job logs to investigate the cause of the failure.',
      };
      const failed = own(runFunction(requestOf(input, composite, { 'cnpg-postgresql': unrecoverable })));
      expect(failed).toMatchObject({ status: Status.STATUS_CONDITION_FALSE, reason: 'ProvisioningFailed' });
      expect(failed?.message).toContain(
        'pg-1-full-recovery. Check the job logs to investigate the cause of the failure.; the restore from spec.restoreFrom failed',
      );
    },
  );
});

/** The same made-up backend, whose Store reports a problem of each of its tenants in a map of its status. */
const tenantInput = demoInput('store', { apiVersion: 'demo.example.org/v1', kind: 'Tenant' }, 'kubernetes.crossplane.io/v1alpha2', {
  errorsFrom: {
    apiVersion: 'demo.example.org/v1',
    kind: 'Store',
    labels: [{ key: 'demo.example.org/store', from: 'spec.storeRef' }],
    from: 'metadata.labels[crossplane.io/claim-name]',
    at: 'status.tenantErrors[tenant-%s]',
    says: 'cannot serve tenant-%s',
    reason: 'TenantRefused',
  },
});
const errorsFrom = tenantInput.errorsFrom!;
const { v1: v1Tenant, v2: v2Tenant } = demoComposites('Tenant', claimLabels('mall', 'victim'));
for (const xr of [v1Tenant, v2Tenant]) xr.spec = { ...(xr.spec as Obj), storeRef: 'shop' };
/** The observed Object: Ready (its own object exists), as a binding's Secret is. */
const readyObject: Obj = {
  spec: { forProvider: { manifest: {} } },
  status: {
    conditions: [
      { type: 'Ready', status: 'True', reason: 'Available' },
      { type: 'Synced', status: 'True', reason: 'ReconcileSuccess' },
    ],
  },
};
function store(name: string, errors: Record<string, unknown>, o: { ns?: string; label?: string; deleting?: boolean } = {}): Obj {
  return {
    apiVersion: 'demo.example.org/v1',
    kind: 'Store',
    metadata: {
      name,
      namespace: o.ns ?? 'team-a',
      labels: { 'demo.example.org/store': o.label ?? 'shop' },
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    status: { tenantErrors: errors },
  };
}
const REFUSED = ['could not perform update-membership on role tenant-shop: role "owner" is a member of role "tenant-shop"'];

describe('errorsFrom: an error another object reports about the resource', () => {
  it('is part of the validated input; labels cannot be empty, the reason is a CamelCase word', () => {
    expect(validateInput(tenantInput)).toMatchObject({ ok: true });
    expect(validateInput({ ...tenantInput, errorsFrom: { ...errorsFrom, labels: [] } })).toMatchObject({
      ok: false,
      errors: [expect.stringContaining('errorsFrom.labels')],
    });
    expect(validateInput({ ...tenantInput, errorsFrom: { ...errorsFrom, reason: 'not a reason' } })).toMatchObject({ ok: false });
    const { at: _at, ...noAt } = errorsFrom;
    expect(validateInput({ ...tenantInput, errorsFrom: noAt })).toMatchObject({ ok: false, errors: ['errorsFrom.at: is required'] });
  });

  it("reads only its own namespace's object with its labels, not being deleted, at the path named after the claim", () => {
    for (const xr of [v1Tenant, v2Tenant]) {
      const hostile = [
        store('a-theirs', { 'tenant-shop': ['victim namespace'] }, { ns: 'victim' }),
        store('b-other', { 'tenant-shop': ['another store'] }, { label: 'other' }),
        store('c-going', { 'tenant-shop': ['being deleted'] }, { deleting: true }),
        { ...store('d-kind', { 'tenant-shop': ['another kind'] }), kind: 'Shop' },
        store('e-other-tenant', { 'tenant-mall': ['another tenant'] }),
      ];
      const none = errorElsewhere(errorsFrom, xr, hostile, WHERE);
      expect(none).toEqual({
        selector: {
          apiVersion: 'demo.example.org/v1',
          kind: 'Store',
          namespace: 'team-a',
          matchLabels: { labels: { 'demo.example.org/store': 'shop' } },
        },
      });
      expect(errorElsewhere(errorsFrom, xr, [...hostile, store('shop', { 'tenant-shop': [...REFUSED, ' '] })], WHERE).said).toEqual({
        reason: 'TenantRefused',
        text: `Store shop cannot serve tenant-shop: ${REFUSED[0]}`,
      });
      // A string is said as it is; an empty list or string says nothing.
      expect(errorElsewhere(errorsFrom, xr, [store('shop', { 'tenant-shop': 'gone wrong' })], WHERE).said?.text).toBe(
        'Store shop cannot serve tenant-shop: gone wrong',
      );
      expect(errorElsewhere(errorsFrom, xr, [store('shop', { 'tenant-shop': [] })], WHERE).said).toBeUndefined();
      expect(errorElsewhere(errorsFrom, xr, [store('shop', { 'tenant-shop': '' })], WHERE).said).toBeUndefined();
    }
    // Without the field its labels come from, nothing is asked.
    expect(errorElsewhere(errorsFrom, { ...v2Tenant, spec: {} }, [], WHERE)).toEqual({});
  });
});

describe('errorsFrom through the function (the requirements loop)', () => {
  it('asks once observed, even Ready; fails with the reason and the words of the object, short TTL; recovers when they go', () => {
    expect(runFunction(requestOf(tenantInput, v1Tenant)).requirements?.extraResources?.[ERRORS_FROM_REQUIREMENT]).toBeUndefined();
    const req = requestOf(tenantInput, v1Tenant, { 'demo-store': readyObject });
    const first = runFunction(req);
    expect(fatalMessages(first)).toEqual([]);
    expect(first.requirements?.extraResources).toEqual({
      [ERRORS_FROM_REQUIREMENT]: {
        apiVersion: 'demo.example.org/v1',
        kind: 'Store',
        namespace: 'team-a',
        matchLabels: { labels: { 'demo.example.org/store': 'shop' } },
      },
    });
    expect(own(first)).toMatchObject({ status: Status.STATUS_CONDITION_TRUE, reason: 'Available' });
    expect(first.meta?.ttl).toEqual(TTL);

    const failing = runFunction(answer(req, ERRORS_FROM_REQUIREMENT, [store('shop', { 'tenant-shop': REFUSED })]));
    expect(failing.requirements).toEqual(first.requirements);
    expect(own(failing)).toMatchObject({
      status: Status.STATUS_CONDITION_FALSE,
      reason: 'TenantRefused',
      message: `demo store: Store shop cannot serve tenant-shop: ${REFUSED[0]}`,
    });
    expect(Object.values(failing.desired?.resources ?? {}).map((r) => r.ready)).toEqual([Ready.READY_FALSE]);
    expect(failing.meta?.ttl).toEqual(WAITING_TTL);

    const recovered = runFunction(answer(req, ERRORS_FROM_REQUIREMENT, [store('shop', {})]));
    expect(own(recovered)).toMatchObject({ status: Status.STATUS_CONDITION_TRUE, reason: 'Available' });
    expect(Object.values(recovered.desired?.resources ?? {}).map((r) => r.ready)).toEqual([Ready.READY_TRUE]);
    expect(recovered.meta?.ttl).toEqual(TTL);
  });

  it("fails a resource still in progress too; the resource's own failure wins", () => {
    const refusing = [store('shop', { 'tenant-shop': REFUSED })];
    const waiting = runFunction(
      answer(requestOf(tenantInput, v2Tenant, { 'demo-store': waitingObject }), ERRORS_FROM_REQUIREMENT, refusing),
    );
    expect(own(waiting)).toMatchObject({ reason: 'TenantRefused' });
    const failing = structuredClone(readyObject);
    failing.status.conditions[1] = { type: 'Synced', status: 'False', reason: 'ReconcileError', message: 'forbidden' };
    const r = runFunction(answer(requestOf(tenantInput, v2Tenant, { 'demo-store': failing }), ERRORS_FROM_REQUIREMENT, refusing));
    expect(own(r)).toMatchObject({ reason: 'ReconcileError', message: 'demo store: forbidden' });
  });
});

describe('the cnpg binding recipe', () => {
  const sb = apis.find((a) => a.name === 'servicebinding') as Api;
  const spec = { instanceRef: 'pg', serviceInstanceType: 'postgresql' };
  const secretObject: Obj = structuredClone(readyObject);
  const cnpgCluster = (
    name: string,
    ns: string,
    errors?: Record<string, string[]>,
    byStatus: Record<string, string[]> = { reconciled: ['binding-app'] },
  ) => ({
    apiVersion: 'postgresql.cnpg.io/v1',
    kind: 'Cluster',
    metadata: { name, namespace: ns, labels: { [CNPG_INSTANCE_LABEL]: name } },
    status: { managedRolesStatus: { ...(errors ? { cannotReconcile: errors } : {}), byStatus } },
  });
  const CNPG_SAYS = 'could not perform update-membership on role binding-app: role "app" is a member of role "binding-app"';

  it.each(['v1', 'v2'] as const)(
    "%s: fails with RoleNotReconciled in CNPG's words while its instance's Cluster cannot reconcile its role, then recovers",
    (target) => {
      const input = inputFor(sb.backends.cnpg as Recipe, { backend: 'cnpg', service: 'servicebinding', target });
      const composite =
        target === 'v1'
          ? compositeOf(sb, 'cnpg', spec, { name: 'app', namespace: 'team-a' })
          : {
              apiVersion: sb.apiVersion,
              kind: sb.kind,
              metadata: { name: 'app', namespace: 'team-a', labels: claimLabels('other', 'victim') },
              spec,
            };
      const req = requestOf(input, composite, { 'cnpg-servicebinding': secretObject });
      const first = runFunction(req);
      expect(fatalMessages(first)).toEqual([]);
      expect(first.requirements?.extraResources?.[ERRORS_FROM_REQUIREMENT]).toEqual({
        apiVersion: 'postgresql.cnpg.io/v1',
        kind: 'Cluster',
        namespace: 'team-a',
        matchLabels: { labels: { [CNPG_INSTANCE_LABEL]: 'pg' } },
      });
      // Another namespace's Cluster of the same name, another instance's Cluster, another binding's role: not this one's.
      const theirs = [
        cnpgCluster('pg', 'victim', { 'binding-app': ['victim'] }),
        cnpgCluster('other', 'team-a', { 'binding-app': ['other'] }),
        cnpgCluster('pg', 'team-a', { 'binding-app-2': ['another binding'] }),
      ];
      expect(own(runFunction(answer(req, ERRORS_FROM_REQUIREMENT, theirs)))).toMatchObject({ reason: 'Available' });
      const failing = runFunction(answer(req, ERRORS_FROM_REQUIREMENT, [cnpgCluster('pg', 'team-a', { 'binding-app': [CNPG_SAYS] })]));
      expect(own(failing)).toMatchObject({
        status: Status.STATUS_CONDITION_FALSE,
        reason: 'RoleNotReconciled',
        message: `cnpg servicebinding: Cluster pg cannot reconcile role binding-app: ${CNPG_SAYS}`,
      });
      // CNPG cleared the error but has yet to grant the role's memberships (its next pass): not Ready, and says so.
      const pending = { 'pending-reconciliation': ['binding-app'], reconciled: ['app'] };
      const granting = runFunction(answer(req, ERRORS_FROM_REQUIREMENT, [cnpgCluster('pg', 'team-a', undefined, pending)]));
      expect(own(granting)).toMatchObject({
        status: Status.STATUS_CONDITION_FALSE,
        reason: 'Provisioning',
        message: 'cnpg servicebinding: Cluster pg has yet to reconcile role binding-app',
      });
      expect(Object.values(granting.desired?.resources ?? {}).map((r) => r.ready)).toEqual([Ready.READY_FALSE]);
      expect(granting.meta?.ttl).toEqual(WAITING_TTL);
      // Another binding's role pending, or another namespace's: this one is Available.
      const others = [
        cnpgCluster('pg', 'team-a', undefined, { 'pending-reconciliation': ['binding-app-2'], reconciled: ['binding-app'] }),
        cnpgCluster('pg', 'victim', undefined, pending),
      ];
      expect(own(runFunction(answer(req, ERRORS_FROM_REQUIREMENT, others)))).toMatchObject({ reason: 'Available' });
      expect(own(runFunction(answer(req, ERRORS_FROM_REQUIREMENT, [cnpgCluster('pg', 'team-a')])))).toMatchObject({
        status: Status.STATUS_CONDITION_TRUE,
        reason: 'Available',
      });
    },
  );

  it.each(['v1', 'v2'] as const)(
    "%s: a binding whose instance has no Cluster in its namespace says its spec.instanceRef is the cause, the control plane's hop",
    (target) => {
      const input = inputFor(sb.backends.cnpg as Recipe, { backend: 'cnpg', service: 'servicebinding', target });
      const orphan = { ...spec, instanceRef: 'nobody' };
      const composite =
        target === 'v1'
          ? compositeOf(sb, 'cnpg', orphan, { name: 'app', namespace: 'team-a' })
          : { apiVersion: sb.apiVersion, kind: sb.kind, metadata: { name: 'app', namespace: 'team-a' }, spec: orphan };
      // What provider-kubernetes says when the Object cannot read the instance's Secret.
      const cannotRead: Obj = structuredClone(readyObject);
      cannotRead.status.conditions = [
        { type: 'Ready', status: 'False', reason: 'Unavailable' },
        {
          type: 'Synced',
          status: 'False',
          reason: 'ReconcileError',
          message: 'cannot resolve resource references: cannot get referenced resource: secrets "nobody-app" not found',
        },
      ];
      const req = requestOf(input, composite, { 'cnpg-servicebinding': cannotRead });
      // Not asked yet: nothing is said of the reference, the Object's own failure stands.
      expect(own(runFunction(req))).toMatchObject({ reason: 'ReconcileError' });
      // Crossplane found no Cluster of "nobody" here (another namespace's, another instance's are not it).
      const elsewhere = [cnpgCluster('nobody', 'victim'), cnpgCluster('pg', 'team-a')];
      const r = runFunction(answer(req, ERRORS_FROM_REQUIREMENT, elsewhere));
      const said = own(r);
      expect(said).toMatchObject({
        status: Status.STATUS_CONDITION_FALSE,
        reason: REFERENCE_NOT_FOUND,
        message:
          'cnpg servicebinding: spec.instanceRef names the PostgresqlInstance "nobody", which has no database in this namespace: create it, or set spec.instanceRef to the name of one it has (an instance made a moment ago has its database within minutes)',
      });
      expect(r.meta?.ttl).toEqual(WAITING_TTL);
      expect(conditionHold({ type: 'DataServiceReady', status: 'False', reason: said!.reason!, message: said!.message! })).toMatchObject({
        hop: 'control plane',
      });
      // Its Cluster there (being made): the Object's own words again, the data service's hop.
      expect(own(runFunction(answer(req, ERRORS_FROM_REQUIREMENT, [cnpgCluster('nobody', 'team-a')])))).toMatchObject({
        reason: 'ReconcileError',
      });
      // A binding that works says nothing of it, whatever Crossplane found.
      expect(
        own(runFunction(answer(requestOf(input, composite, { 'cnpg-servicebinding': secretObject }), ERRORS_FROM_REQUIREMENT, []))),
      ).toMatchObject({ reason: 'Available' });
    },
  );
});
