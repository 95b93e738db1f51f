import type { RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { answer, compositeOf, fatalMessages, inputOf, requestOf } from '../../harness/crossplane/function-requests';
import { get } from '../../lib/fieldpath';
import {
  CNPG_ROTATED_SECRET_SUFFIX,
  CNPG_ROTATION_ANNOTATION,
  CREDENTIALS_RECEIVED,
  CNPG_BINDING_SECRET_SUFFIX,
  CNPG_INSTANCE_LABEL,
} from '../../backends/cnpg';
import { runFunction, TTL } from './fn';
import { ERRORS_FROM_REQUIREMENT, WAITING_TTL } from './diagnostics';
import { RELATED_REQUIREMENT } from './related';
import { durationMs, liveSlots } from './rotation';
import { Annotations } from '../../exports/bind-api';
import { credentialsReceipt } from '../../lib/credentials-receipt';

type Obj = Record<string, any>;

const catalog: Api[] = await loadCatalog();
const bindingApi = catalog.find((a) => a.name === 'servicebinding')!;
const pg = catalog.find((a) => a.name === 'postgresql')!;
const binding = inputOf(bindingApi, 'cnpg');
const MAIN = 'cnpg-servicebinding';
const SECOND = 'cnpg-servicebinding-rotated-secret';
const MANIFEST = 'spec.forProvider.manifest';
const T0 = Date.parse('2026-12-06T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** The binding `app` of team-a (v1) on instance `pg`, with `rotation` in its spec and what it keeps. */
function bindingXr(rotation?: Obj, kept?: Obj): Obj {
  const xr: Obj = compositeOf(
    bindingApi,
    'cnpg',
    { instanceRef: 'pg', serviceInstanceType: 'postgresql', ...(rotation ? { rotation } : {}) },
    {
      name: 'app',
      namespace: 'team-a',
    },
  );
  xr.metadata.creationTimestamp = iso(T0);
  if (kept) xr.status = { managed: { rotation: kept } };
  return xr;
}

/** An Object as Crossplane observed it: its desired manifest, applied, at `resourceVersion`. */
function observedObject(desired: Obj, resourceVersion: string): Obj {
  const o = structuredClone(desired);
  const live = structuredClone(o.spec.forProvider.manifest);
  live.metadata.resourceVersion = resourceVersion;
  // provider-kubernetes runs with --sanitize-secrets: the object as it exists shows no credentials.
  delete live.stringData;
  delete live.data;
  o.status = { atProvider: { manifest: live }, conditions: [{ type: 'Ready', status: 'True', reason: 'Available' }] };
  return o;
}

/** The instance's Cluster as CNPG reports it: the roles whose password it applied at a version, and reconciled. */
function clusterOf(applied: Record<string, string>, reconciled: string[]): Obj {
  return {
    apiVersion: 'postgresql.cnpg.io/v1',
    kind: 'Cluster',
    metadata: { name: 'pg', namespace: 'team-a', labels: { [CNPG_INSTANCE_LABEL]: 'pg' } },
    status: {
      managedRolesStatus: {
        byStatus: { reconciled },
        passwordStatus: Object.fromEntries(Object.entries(applied).map(([r, v]) => [r, { resourceVersion: v }])),
      },
    },
  };
}

function run(xr: Obj, observed: Record<string, Obj>, clusters: Obj[], now: number): RunFunctionResponse {
  const req = requestOf(binding, xr, observed);
  answer(req, ERRORS_FROM_REQUIREMENT, clusters);
  const real = Date.now;
  Date.now = () => now;
  try {
    const rsp = runFunction(req);
    expect(fatalMessages(rsp)).toEqual([]);
    return rsp;
  } finally {
    Date.now = real;
  }
}
const manifest = (rsp: RunFunctionResponse, name: string): Obj | undefined =>
  get(rsp.desired?.resources?.[name]?.resource, MANIFEST) as Obj;
const state = (rsp: RunFunctionResponse): Obj | undefined => get(rsp.desired?.composite?.resource, 'status.managed.rotation') as Obj;
/** The connection details of the binding's Object: key → the Secret read and its field. */
const creds = (rsp: RunFunctionResponse): Record<string, string> =>
  Object.fromEntries(
    (get(rsp.desired?.resources?.[MAIN]?.resource, 'spec.connectionDetails') as Obj[]).map((d) => [
      d.toConnectionSecretKey,
      `${d.name}:${d.fieldPath}`,
    ]),
  );

describe('a cnpg binding whose password rotates (Recipe.rotation)', () => {
  // Made with a request already there: that asks for nothing.
  const first = run(bindingXr({ requested: 'one' }), {}, [], T0);
  const firstPassword = manifest(first, MAIN)!.stringData.password;
  const madeA = observedObject(first.desired!.resources![MAIN]!.resource as Obj, '100');

  it('starts in its first slot: no second Secret, nothing stamped, the creds of binding-app', () => {
    expect(state(first)).toEqual({ generation: 0, requested: 'one' });
    expect(first.desired?.resources?.[SECOND]).toBeUndefined();
    expect(manifest(first, MAIN)!.metadata.annotations?.[CNPG_ROTATION_ANNOTATION]).toBeUndefined();
    expect(creds(first).username).toBe(`app${CNPG_BINDING_SECRET_SUFFIX}:data.username`);
  });

  // Asked: a new value of spec.rotation.requested.
  const asked = bindingXr({ requested: 'two' }, state(first));
  const rotating = run(asked, { [MAIN]: madeA }, [clusterOf({ 'binding-app': '100' }, ['binding-app'])], T0 + 60_000);

  it('on request, gives the second slot a new user and password and keeps publishing the first until that user works', () => {
    expect(state(rotating)).toEqual({ generation: 1, requested: 'two', rotatedAt: iso(T0 + 60_000) });
    const second = manifest(rotating, SECOND)!;
    expect(second.metadata).toMatchObject({ name: `app${CNPG_ROTATED_SECRET_SUFFIX}`, annotations: { [CNPG_ROTATION_ANNOTATION]: '1' } });
    expect(second.stringData.username).toBe('binding_app');
    expect(second.stringData.password).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(second.stringData.password).not.toBe(firstPassword);
    // The first slot's password stays: its user keeps working.
    expect(manifest(rotating, MAIN)!.stringData.password).toBe(firstPassword);
    expect(creds(rotating).password).toBe(`app${CNPG_BINDING_SECRET_SUFFIX}:data.password`);
    expect(rotating.meta?.ttl).toEqual(WAITING_TTL);
    expect(rotating.conditions.find((c) => c.type === 'DataServiceReady')?.message ?? '').not.toContain('rotated at');
  });

  const madeB = observedObject(rotating.desired!.resources![SECOND]!.resource as Obj, '205');
  const both = { [MAIN]: madeA, [SECOND]: madeB };

  it('waits while CNPG has not applied the new Secret as observed, or has not reconciled the new user', () => {
    for (const c of [
      clusterOf({ 'binding-app': '100', binding_app: '204' }, ['binding-app', 'binding_app']),
      clusterOf({ 'binding-app': '100', binding_app: '205' }, ['binding-app']),
    ]) {
      const r = run(bindingXr({ requested: 'two' }, state(rotating)), both, [c], T0 + 70_000);
      expect(state(r)?.retiresAt).toBeUndefined();
      expect(creds(r).username).toBe(`app${CNPG_BINDING_SECRET_SUFFIX}:data.username`);
    }
  });

  it("says in CNPG's words why the new user does not work, while the old one keeps working", () => {
    const c = clusterOf({ 'binding-app': '100' }, ['binding-app']);
    c.status.managedRolesStatus.cannotReconcile = { binding_app: ['could not perform CREATE ROLE on role binding_app: boom'] };
    const r = run(bindingXr({ requested: 'two' }, state(rotating)), both, [c], T0 + 70_000);
    expect(state(r)?.retiresAt).toBeUndefined();
    expect(r.conditions.find((x) => x.type === 'DataServiceReady')?.message).toBe(
      "cnpg servicebinding: rotating its credentials: the new user binding_app is not working yet (Cluster pg cannot reconcile binding_app: could not perform CREATE ROLE on role binding_app: boom); binding-app's credentials keep working meanwhile",
    );
  });

  const works = [clusterOf({ 'binding-app': '100', binding_app: '205' }, ['binding-app', 'binding_app'])];
  const switched = run(bindingXr({ requested: 'two', overlap: '2m' }, state(rotating)), both, works, T0 + 80_000);

  it('once the new user works, publishes its creds and keeps the old user for the overlap', () => {
    expect(state(switched)).toEqual({
      generation: 1,
      requested: 'two',
      rotatedAt: iso(T0 + 60_000),
      publishedAt: iso(T0 + 80_000),
      retiresAt: iso(T0 + 200_000),
    });
    const c = creds(switched);
    expect(c.username).toBe(`app${CNPG_ROTATED_SECRET_SUFFIX}:data.username`);
    expect(c.password).toBe(`app${CNPG_ROTATED_SECRET_SUFFIX}:data.password`);
    expect(c.database).toBe(`app${CNPG_BINDING_SECRET_SUFFIX}:data.database`);
    // The gate: the creds come once CNPG applied the new user's password.
    const gate = (get(switched.desired?.resources?.[MAIN]?.resource, 'spec.connectionDetails') as Obj[])[0]!;
    expect(gate.fieldPath).toBe('status.managedRolesStatus.passwordStatus[binding_app].resourceVersion');
    expect(switched.meta?.ttl).toEqual(TTL);
    // Looked at again when the overlap ends, if that is before the TTL.
    const near = run(bindingXr({ requested: 'two', overlap: '2m' }, state(switched)), both, works, T0 + 190_000);
    expect(near.meta?.ttl).toEqual({ seconds: 11, nanos: 0 });
    expect(switched.conditions.find((x) => x.type === 'DataServiceReady')?.message).toContain(
      `binding-app's keep working until ${iso(T0 + 200_000)}`,
    );
    // Both passwords as they were.
    expect(manifest(switched, MAIN)!.stringData.password).toBe(firstPassword);
    expect(manifest(switched, SECOND)!.stringData.password).toBe(manifest(rotating, SECOND)!.stringData.password);
  });

  it('bound through a konnector that writes receipts, keeps the old user until the new creds reached the app cluster', () => {
    expect(CREDENTIALS_RECEIVED, "the konnector's annotation").toBe(Annotations.credentialsReceived);
    // As the konnector computes it, from its copy's data (base64); the Objects' status holds none (--sanitize-secrets).
    const receipt = (o: Obj) => {
      const plain = get(o, 'spec.forProvider.manifest.stringData') as Record<string, string>;
      return credentialsReceipt(Object.fromEntries(Object.entries(plain).map(([k, v]) => [k, Buffer.from(v).toString('base64')])));
    };
    const withReceipt = (of: Obj, kept: Obj | undefined) => {
      const xr = bindingXr({ requested: 'two', overlap: '2m' }, kept);
      xr.metadata.annotations = { ...xr.metadata.annotations, [Annotations.credentialsReceived]: receipt(of) };
      return xr;
    };
    // Published at 80 s; the konnector's receipt still names the old creds (it is down, say): no end to the overlap.
    const published = run(withReceipt(madeA, state(rotating)), both, works, T0 + 80_000);
    expect(state(published)).toEqual({ generation: 1, requested: 'two', rotatedAt: iso(T0 + 60_000), publishedAt: iso(T0 + 80_000) });
    expect(creds(published).username).toBe(`app${CNPG_ROTATED_SECRET_SUFFIX}:data.username`);
    expect(published.conditions.find((x) => x.type === 'DataServiceReady')?.message).toBe(
      `cnpg servicebinding: its credentials were rotated at ${iso(T0 + 60_000)}: the konnector has yet to copy them into the app cluster; binding-app's keep working until 2m after they arrive`,
    );
    const dayLater = run(withReceipt(madeA, state(published)), both, works, T0 + 86_400_000);
    expect(state(dayLater)?.retiresAt).toBeUndefined();
    expect(liveSlots(state(dayLater) as never, T0 + 86_400_000).live).toEqual([0, 1]);
    // The receipt names the new creds at 300 s: the overlap runs from then.
    const arrived = run(withReceipt(madeB, state(published)), both, works, T0 + 300_000);
    expect(state(arrived)).toMatchObject({ publishedAt: iso(T0 + 80_000), retiresAt: iso(T0 + 420_000) });
    expect(creds(arrived).username).toBe(`app${CNPG_ROTATED_SECRET_SUFFIX}:data.username`);
    // A kept state of the release before publishedAt, mid-overlap, goes on as it was.
    const older = { generation: 1, requested: 'two', rotatedAt: iso(T0 + 60_000), retiresAt: iso(T0 + 200_000) };
    expect(state(run(withReceipt(madeA, older), both, works, T0 + 100_000))).toEqual(older);
  });

  it('a request during a rotation waits for its overlap to end, then rotates back to the first slot with a new password', () => {
    const early = run(bindingXr({ requested: 'three' }, state(switched)), both, works, T0 + 100_000);
    expect(state(early)?.generation).toBe(1);
    const later = run(bindingXr({ requested: 'three' }, state(switched)), both, works, T0 + 200_000);
    expect(state(later)).toEqual({ generation: 2, requested: 'three', rotatedAt: iso(T0 + 200_000) });
    const a = manifest(later, MAIN)!;
    expect(a.metadata.annotations[CNPG_ROTATION_ANNOTATION]).toBe('2');
    expect(a.stringData.password).not.toBe(firstPassword);
    // The second slot's user stays as it is until the first one's works again.
    expect(manifest(later, SECOND)!.stringData.password).toBe(manifest(rotating, SECOND)!.stringData.password);
    expect(creds(later).username).toBe(`app${CNPG_ROTATED_SECRET_SUFFIX}:data.username`);
  });

  it('rotates on a schedule, counted from the claim or the last rotation', () => {
    const due = run(bindingXr({ every: '1h' }, { generation: 0 }), { [MAIN]: madeA }, [], T0 + 3_600_000);
    expect(state(due)?.generation).toBe(1);
    const notYet = run(bindingXr({ every: '1h' }, { generation: 0 }), { [MAIN]: madeA }, [], T0 + 1_800_000);
    expect(state(notYet)?.generation).toBe(0);
    expect(notYet.meta?.ttl).toEqual(TTL);
  });

  it('refuses a duration it cannot read, naming the field', () => {
    const req = requestOf(binding, bindingXr({ overlap: '5 minutes' }), {});
    expect(fatalMessages(runFunction(req)).join()).toContain('cannot read spec.rotation.overlap');
  });
});

describe("the instance's roles of a rotating binding (RelatedList.rotation)", () => {
  const instance = inputOf(pg, 'cnpg');
  const xr = compositeOf(pg, 'cnpg', { service: 'a9s-postgresql15', plan: 'postgresql-single-nano' }, { name: 'pg', namespace: 'team-a' });
  const boundXr = (kept?: Obj) => bindingXr(undefined, kept);
  const roles = (kept: Obj | undefined, now: number) => {
    const req = requestOf(instance, xr, {});
    answer(req, RELATED_REQUIREMENT, [boundXr(kept)]);
    const real = Date.now;
    Date.now = () => now;
    try {
      const rsp = runFunction(req);
      expect(fatalMessages(rsp)).toEqual([]);
      return (get(rsp.desired?.resources?.['cnpg-postgresql']?.resource, `${MANIFEST}.spec.managed.roles`) as Obj[])
        .filter((r) => /^binding[-_]/.test(r.name))
        .map((r) => [r.name, r.login, r.passwordSecret?.name ?? null]);
    } finally {
      Date.now = real;
    }
  };

  it('lists one role before a rotation, both during its overlap, and revokes the old one after', () => {
    expect(roles(undefined, T0)).toEqual([['binding-app', true, `app${CNPG_BINDING_SECRET_SUFFIX}`]]);
    const rotating = { generation: 1, rotatedAt: iso(T0) };
    const both = [
      ['binding-app', true, `app${CNPG_BINDING_SECRET_SUFFIX}`],
      ['binding_app', true, `app${CNPG_ROTATED_SECRET_SUFFIX}`],
    ];
    expect(roles(rotating, T0 + 10_000)).toEqual(both);
    expect(roles({ ...rotating, retiresAt: iso(T0 + 60_000) }, T0 + 59_000)).toEqual(both);
    expect(roles({ ...rotating, retiresAt: iso(T0 + 60_000) }, T0 + 60_000)).toEqual([
      ['binding-app', false, null],
      ['binding_app', true, `app${CNPG_ROTATED_SECRET_SUFFIX}`],
    ]);
    expect(roles({ generation: 2, rotatedAt: iso(T0), retiresAt: iso(T0 + 60_000) }, T0 + 61_000)).toEqual([
      ['binding-app', true, `app${CNPG_BINDING_SECRET_SUFFIX}`],
      ['binding_app', false, null],
    ]);
  });

  it("an instance restored from this one's backups lists both users of its rotated binding revoked from the start", () => {
    const copy = compositeOf(
      pg,
      'cnpg',
      { service: 'a9s-postgresql15', plan: 'postgresql-single-nano', restoreFrom: { instance: 'pg' } },
      { name: 'pg-copy', namespace: 'team-a' },
    );
    const rolesOfCopy = (kept: Obj | undefined) => {
      const req = requestOf(instance, copy, {});
      answer(req, RELATED_REQUIREMENT, [boundXr(kept)]);
      const rsp = runFunction(req);
      expect(fatalMessages(rsp)).toEqual([]);
      return (get(rsp.desired?.resources?.['cnpg-postgresql']?.resource, `${MANIFEST}.spec.managed.roles`) as Obj[])
        .filter((r) => /^binding[-_]/.test(r.name))
        .map((r) => [r.name, r.login]);
    };
    // Its data holds the source's users with their passwords; the login group keeps them out, and so does this.
    expect(rolesOfCopy(undefined)).toEqual([['binding-app', false]]);
    expect(rolesOfCopy({ generation: 1, rotatedAt: iso(T0), retiresAt: iso(T0 + 60_000) })).toEqual([
      ['binding-app', false],
      ['binding_app', false],
    ]);
  });

  it('a state someone edited into nonsense counts as none: the first slot only', () => {
    expect(liveSlots(undefined, T0).live).toEqual([0]);
    expect(roles({ generation: -1 }, T0)).toEqual([['binding-app', true, `app${CNPG_BINDING_SECRET_SUFFIX}`]]);
    expect(roles({ generation: 1, retiresAt: 'soon' }, T0)).toEqual([['binding-app', true, `app${CNPG_BINDING_SECRET_SUFFIX}`]]);
  });
});

describe('durationMs', () => {
  it('reads minutes, hours and days, and names the field of anything else', () => {
    expect([durationMs('90m', 'f', ''), durationMs('12h', 'f', ''), durationMs('30d', 'f', '')]).toEqual([
      5_400_000, 43_200_000, 2_592_000_000,
    ]);
    for (const bad of ['0m', '1s', '1.5h', 5, ''])
      expect(() => durationMs(bad, 'spec.rotation.every', '(x)')).toThrow(/spec\.rotation\.every/);
  });
});
