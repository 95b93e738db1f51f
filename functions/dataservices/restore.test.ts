import type { RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { answer, compositeOf, fatalMessages, inputOf, requestOf, SETTINGS } from '../../harness/crossplane/function-requests';
import { inputFor, type Recipe } from '../../recipe';
import { get } from '../../lib/fieldpath';
import { RESTORE_ANNOTATION } from '../../backends/cnpg-backup';
import { runFunction } from './fn';
import { BACKUPS_REQUIREMENT, RESTORES_REQUIREMENT } from './restore';
import { RELATED_REQUIREMENT } from './related';

type Obj = Record<string, any>;

const catalog: Api[] = await loadCatalog();
const pg = catalog.find((a) => a.name === 'postgresql')!;
const restoreApi = catalog.find((a) => a.name === 'restore')!;
const backupApi = catalog.find((a) => a.name === 'backup')!;
const bindingApi = catalog.find((a) => a.name === 'servicebinding')!;
const input = inputOf(pg, 'cnpg');
const MAIN = 'cnpg-postgresql';
const MANIFEST = 'spec.forProvider.manifest';

/** The instance `pg` of team-a (v1), with what it keeps at status.managed.restore. */
function instance(kept?: Obj): Obj {
  const xr = compositeOf(pg, 'cnpg', { service: 'a9s-postgresql15', plan: 'postgresql-single-nano' }, { name: 'pg', namespace: 'team-a' });
  if (kept) xr.status = { managed: { restore: kept } };
  return xr;
}

/** The Cluster's Object as Crossplane observed it: made for `restoreUid` (or first made), ready or not. */
function clusterObject(desired: Obj, o: { ready: boolean; restoreUid?: string; terminating?: boolean }): Obj {
  const observed = structuredClone(desired);
  // The Cluster as it exists (provider-kubernetes' status.atProvider.manifest): the one made for the restore, or not.
  const live = structuredClone(observed.spec.forProvider.manifest);
  live.metadata.annotations = o.restoreUid ? { [RESTORE_ANNOTATION]: o.restoreUid } : {};
  if (o.terminating) live.metadata.deletionTimestamp = '2026-12-06T10:30:00Z';
  observed.status = {
    atProvider: { manifest: live },
    conditions: [{ type: 'Ready', status: o.ready ? 'True' : 'False', reason: o.ready ? 'Available' : 'Creating' }],
  };
  return observed;
}

const claimed = (api: Api, backend: 'cnpg', spec: Obj, name: string, o: { ns?: string; created?: string; deleting?: boolean } = {}) => {
  const xr: Obj = compositeOf(api, backend, spec, { name, namespace: o.ns ?? 'team-a' });
  xr.metadata.creationTimestamp = o.created ?? '2026-12-06T10:00:00Z';
  if (o.deleting) xr.metadata.deletionTimestamp = '2026-12-06T12:00:00Z';
  return xr;
};
const restoreOf = (name: string, backup: string, o: { instance?: string; ns?: string; created?: string; deleting?: boolean } = {}) =>
  claimed(restoreApi, 'cnpg', { backupRef: backup, instanceRef: o.instance ?? 'pg', serviceInstanceType: 'postgresql' }, name, o);
const backupOf = (name: string, phase: string, o: { instance?: string; ns?: string } = {}) => {
  const xr = claimed(backupApi, 'cnpg', { instanceRef: o.instance ?? 'pg', serviceInstanceType: 'postgresql' }, name, o);
  xr.status = { managed: { phase, ...(phase === 'completed' ? { backupId: `20261206T${name.length}00000` } : {}) } };
  return xr;
};
const bindingOf = (name: string) => claimed(bindingApi, 'cnpg', { instanceRef: 'pg', serviceInstanceType: 'postgresql' }, name);

/** One run: the instance, its observed Cluster Object (if any), and what Crossplane found for each requirement. */
function run(xr: Obj, observed: Obj | undefined, found: { restores: Obj[]; backups: Obj[]; bindings?: Obj[] }): RunFunctionResponse {
  const req = requestOf(input, xr, observed ? { [MAIN]: observed } : {});
  answer(req, RESTORES_REQUIREMENT, found.restores);
  answer(req, BACKUPS_REQUIREMENT, found.backups);
  answer(req, RELATED_REQUIREMENT, found.bindings ?? []);
  const rsp = runFunction(req);
  expect(fatalMessages(rsp)).toEqual([]);
  return rsp;
}
const cluster = (rsp: RunFunctionResponse): Obj | undefined => get(rsp.desired?.resources?.[MAIN]?.resource, MANIFEST) as Obj | undefined;
const kept = (rsp: RunFunctionResponse): Obj | undefined =>
  get(rsp.desired?.composite?.resource, 'status.managed.restore') as Obj | undefined;
const dataServiceReady = (rsp: RunFunctionResponse) => rsp.conditions.find((c) => c.type === 'DataServiceReady');

describe('a cnpg Restore in place (Recipe.restoredBy)', () => {
  const first = run(instance(), undefined, { restores: [], backups: [] });
  const made = clusterObject(first.desired!.resources![MAIN]!.resource as Obj, { ready: true });

  it('asks for the restores and backups of its own namespace; without one the Cluster is made by initdb, nothing kept', () => {
    expect(first.requirements?.extraResources?.[RESTORES_REQUIREMENT]).toEqual({
      apiVersion: 'anynines.com/v1',
      kind: 'XRestore',
      matchLabels: { labels: { 'crossplane.io/claim-namespace': 'team-a' } },
    });
    expect(first.requirements?.extraResources?.[BACKUPS_REQUIREMENT]?.kind).toBe('XBackup');
    expect(Object.keys(cluster(first)!.spec.bootstrap)).toEqual(['initdb']);
    expect(kept(first)).toBeUndefined();
  });

  it('waits for the backup to be completed, then leaves the Cluster out (Crossplane deletes it), keeping its roles', () => {
    const restore = restoreOf('undo', 'nightly');
    const roles = cluster(run(instance(), made, { restores: [], backups: [], bindings: [bindingOf('app'), bindingOf('old')] }))!.spec
      .managed.roles as Obj[];
    const withRoles = structuredClone(made);
    withRoles.spec.forProvider.manifest.spec.managed = { roles };
    // Not yet completed, or of another instance, or of another tenant: nothing happens but the wait, shown.
    for (const backups of [
      [backupOf('nightly', 'running')],
      [backupOf('nightly', 'completed', { instance: 'other' })],
      [backupOf('nightly', 'completed', { ns: 'team-b' })],
    ]) {
      const waits = run(instance(), withRoles, { restores: [restore], backups });
      expect(cluster(waits)?.spec.bootstrap.initdb).toBeDefined();
      expect(kept(waits)).toEqual({ waiting: expect.objectContaining({ name: 'undo', backup: 'nightly' }) });
    }
    const starts = run(instance(), withRoles, { restores: [restore], backups: [backupOf('nightly', 'completed')] });
    expect(cluster(starts), 'the Cluster left out').toBeUndefined();
    expect(kept(starts)).toMatchObject({
      name: 'undo',
      uid: restore.metadata.uid,
      backup: 'nightly',
      backupId: '20261206T700000',
      phase: 'Deleting',
      related: roles,
    });
    expect(dataServiceReady(starts)).toMatchObject({
      reason: 'Restoring',
      message: expect.stringContaining('restoring from backup nightly'),
    });
    expect(starts.desired?.composite?.ready).toBe(2); // READY_FALSE
  });

  it('makes the Cluster anew from the backup once the old one is gone, even if the Restore was deleted; Restored once ready', () => {
    const restore = restoreOf('undo', 'nightly');
    const deleting = {
      name: 'undo',
      uid: restore.metadata.uid,
      created: '2026-12-06T10:00:00Z',
      backup: 'nightly',
      backupId: '20261206T070000',
      phase: 'Deleting',
      message: '',
      related: [{ name: 'binding-gone', ensure: 'present', login: true }],
    };
    const anew = run(instance(deleting), undefined, { restores: [], backups: [], bindings: [bindingOf('app')] });
    const c = cluster(anew)!;
    expect(c.spec.bootstrap).toEqual({
      recovery: {
        backup: { name: 'nightly' },
        recoveryTarget: { backupID: '20261206T070000', targetImmediate: true },
        database: 'app',
        owner: 'app',
      },
    });
    expect(c.metadata.annotations).toMatchObject({
      [RESTORE_ANNOTATION]: restore.metadata.uid,
      'cnpg.io/skipEmptyWalArchiveCheck': 'enabled',
    });
    // A role the Cluster had before whose binding is gone stays revoked: the backup may hold it with LOGIN.
    const roles = c.spec.managed.roles as Obj[];
    expect(roles.find((r) => r.name === 'binding-gone')).toMatchObject({ login: false, disablePassword: true });
    expect(roles.find((r) => r.name === 'binding-app')).toMatchObject({ login: true });
    expect(kept(anew)).toMatchObject({ phase: 'Recovering' });

    // The new Object may find the Cluster made before still terminating (and annotate it): not the restored one, and
    // never left out again, which would delete the Cluster just made.
    const terminating = run(
      instance({ ...deleting, phase: 'Recovering' }),
      clusterObject(anew.desired!.resources![MAIN]!.resource as Obj, { ready: true, restoreUid: restore.metadata.uid, terminating: true }),
      { restores: [], backups: [] },
    );
    expect([kept(terminating)?.phase, cluster(terminating)?.spec.bootstrap.recovery.backup.name]).toEqual(['Recovering', 'nightly']);
    const recovering = run(
      instance({ ...deleting, phase: 'Recovering' }),
      clusterObject(anew.desired!.resources![MAIN]!.resource as Obj, { ready: false, restoreUid: restore.metadata.uid }),
      { restores: [], backups: [] },
    );
    expect(kept(recovering)).toMatchObject({ phase: 'Recovering' });
    expect(cluster(recovering)!.spec.bootstrap.recovery.backup.name).toBe('nightly');

    const done = run(
      instance({ ...deleting, phase: 'Recovering' }),
      clusterObject(anew.desired!.resources![MAIN]!.resource as Obj, { ready: true, restoreUid: restore.metadata.uid }),
      { restores: [restore], backups: [] },
    );
    expect(kept(done)).toMatchObject({ phase: 'Restored', message: expect.stringContaining('restored from backup nightly') });
    expect(kept(done)!.related).toBeUndefined();
    // No longer Restoring (here waiting for the companions this test does not observe).
    expect(dataServiceReady(done)?.reason).not.toBe('Restoring');
    // Kept so: the Cluster stays the one the backup made, and the same Restore is never acted on again.
    const later = run(
      instance(kept(done)),
      clusterObject(done.desired!.resources![MAIN]!.resource as Obj, { ready: true, restoreUid: restore.metadata.uid }),
      {
        restores: [restore, restoreOf('older', 'weekly', { created: '2026-12-06T09:00:00Z' })],
        backups: [backupOf('weekly', 'completed')],
      },
    );
    expect(cluster(later)!.spec.bootstrap.recovery.backup.name).toBe('nightly');
    expect(kept(later)).toMatchObject({ uid: restore.metadata.uid, phase: 'Restored' });
    // A newer one is taken up.
    const newer = restoreOf('again', 'weekly', { created: '2026-12-06T11:00:00Z' });
    const next = run(
      instance(kept(done)),
      clusterObject(done.desired!.resources![MAIN]!.resource as Obj, { ready: true, restoreUid: restore.metadata.uid }),
      { restores: [restore, newer], backups: [backupOf('weekly', 'completed')] },
    );
    expect([cluster(next), kept(next)?.name, kept(next)?.phase]).toEqual([undefined, 'again', 'Deleting']);
  });

  it('v2: asks for the namespaced Restore and Backup composites of its own namespace, whatever labels a tenant wrote', () => {
    const v2 = inputFor(pg.backends.cnpg as Recipe, { backend: 'cnpg', service: pg.name, settings: SETTINGS, target: 'v2' });
    const xr: Obj = {
      apiVersion: pg.apiVersion,
      kind: pg.kind,
      metadata: { name: 'pg', namespace: 'team-a', uid: 'uid-pg', labels: { 'crossplane.io/claim-namespace': 'team-b' } },
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-nano', compositionRef: { name: 'cnpg-postgresql' } },
    };
    const rsp = runFunction(requestOf(v2, xr));
    expect(fatalMessages(rsp)).toEqual([]);
    expect([RESTORES_REQUIREMENT, BACKUPS_REQUIREMENT].map((k) => rsp.requirements?.extraResources?.[k])).toEqual([
      { apiVersion: 'anynines.com/v1', kind: 'Restore', namespace: 'team-a', matchLabels: { labels: {} } },
      { apiVersion: 'anynines.com/v1', kind: 'Backup', namespace: 'team-a', matchLabels: { labels: {} } },
    ]);
  });

  it("never acts on another tenant's or another instance's Restore, nor on one being deleted", () => {
    const backups = [
      backupOf('nightly', 'completed'),
      backupOf('nightly', 'completed', { ns: 'team-b' }),
      backupOf('nightly', 'completed', { instance: 'other' }),
    ];
    for (const restore of [
      restoreOf('x', 'nightly', { ns: 'team-b' }),
      restoreOf('x', 'nightly', { instance: 'other' }),
      restoreOf('x', 'nightly', { deleting: true }),
    ]) {
      const r = run(instance(), made, { restores: [restore], backups });
      expect(
        cluster(r)?.spec.bootstrap.initdb,
        `${restore.metadata.labels['crossplane.io/claim-namespace']}/${restore.spec.instanceRef}`,
      ).toBeDefined();
      expect(kept(r)).toBeUndefined();
    }
  });
});
