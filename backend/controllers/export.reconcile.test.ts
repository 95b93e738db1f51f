import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Annotations, type APIServiceExport, type APIServiceExportTemplate } from '../../exports/bind-api';
import { deriveExport } from '../derive-export';
import { covers, reconcileExport, type ExportDeps } from './export.reconcile';

describe('covers', () => {
  it('passes server defaults, not a changed, added or removed claim', () => {
    const want = { group: 'g', permissionClaims: [{ resource: 'secrets', selector: { names: ['x'] } }] };
    expect(covers(want, { ...want, informerScope: 'Namespaced' })).toBe(true);
    expect(covers(want, { group: 'g', permissionClaims: [{ resource: 'secrets', selector: { names: ['x'], owner: 'Provider' } }] })).toBe(
      true,
    );
    expect(covers(want, { group: 'g', permissionClaims: [{ resource: 'secrets', selector: { names: ['*'] } }] })).toBe(false);
    expect(covers(want, { group: 'g', permissionClaims: [...want.permissionClaims, { resource: 'configmaps' }] })).toBe(false);
    expect(covers(want, { group: 'g', permissionClaims: [] })).toBe(false);
  });
});

const ref = { namespace: 'cluster-x', name: 'postgresqlinstances.anynines.com' };
const ctx = { log: pino({ level: 'silent' }) };
const crd = (served = true): V1CustomResourceDefinition => ({
  metadata: { name: ref.name },
  spec: {
    group: 'anynines.com',
    scope: 'Namespaced',
    names: { kind: 'PostgresqlInstance', plural: 'postgresqlinstances' },
    versions: [{ name: 'v1', served, storage: true }],
  },
});
const template = (claims: unknown[] = []): APIServiceExportTemplate =>
  ({
    apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportTemplate',
    metadata: { name: 'pg', namespace: 'tpl' },
    spec: { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' }, permissionClaims: claims },
  }) as APIServiceExportTemplate;
const secrets = [{ group: '', resource: 'secrets', selector: { names: ['x'] } }];

function world(o: { exp?: APIServiceExport; crd?: V1CustomResourceDefinition; template?: APIServiceExportTemplate }) {
  const writes: string[] = [];
  const d: ExportDeps = {
    consumerScope: 'Namespaced',
    getExport: () => o.exp,
    getCrd: () => o.crd,
    exportable: async (group, resource) =>
      o.template && o.crd ? { group, resource, kind: 'PostgresqlInstance', template: o.template, crd: o.crd } : undefined,
    deleteExport: async (r) => void writes.push(`delete ${r.namespace}/${r.name}`),
    replaceExport: async (e) =>
      void writes.push(
        `replace ${e.metadata.namespace}/${e.metadata.name} claims=${e.spec.permissionClaims?.length ?? 0} rv=${e.metadata.resourceVersion}`,
      ),
  };
  return { d, writes };
}
const live = (t: APIServiceExportTemplate): APIServiceExport => {
  const e = deriveExport(crd(), t, 'cluster-x', 'Namespaced');
  return { ...e, metadata: { ...e.metadata, resourceVersion: '7' } };
};

describe('reconcileExport', () => {
  it('leaves an export that is what its CRD and template derive', async () => {
    const w = world({ exp: live(template(secrets)), crd: crd(), template: template(secrets) });
    expect(await reconcileExport(w.d, ref, ctx)).toBeUndefined();
    expect(w.writes).toEqual([]);
  });

  it('puts back an export whose template changed or that someone edited, from its resourceVersion', async () => {
    const changed = world({ exp: live(template()), crd: crd(), template: template(secrets) });
    await reconcileExport(changed.d, ref, ctx);
    const tampered = live(template(secrets));
    const edited = world({
      exp: {
        ...tampered,
        spec: { ...tampered.spec, permissionClaims: [...(tampered.spec.permissionClaims ?? []), { group: '', resource: 'configmaps' }] },
      } as APIServiceExport,
      crd: crd(),
      template: template(secrets),
    });
    await reconcileExport(edited.d, ref, ctx);
    expect([...changed.writes, ...edited.writes]).toEqual([
      'replace cluster-x/postgresqlinstances.anynines.com claims=1 rv=7',
      'replace cluster-x/postgresqlinstances.anynines.com claims=1 rv=7',
    ]);
    expect(live(template()).metadata.annotations?.[Annotations.sourceSpecHash]).not.toBe(
      live(template(secrets)).metadata.annotations?.[Annotations.sourceSpecHash],
    );
  });

  it('deletes the export when its CRD is gone; without a template, or with a CRD it cannot derive from, leaves it', async () => {
    const noCrd = world({ exp: live(template()) });
    await reconcileExport(noCrd.d, ref, ctx);
    const noTemplate = world({ exp: live(template()), crd: crd() });
    await reconcileExport(noTemplate.d, ref, ctx);
    const underivable = world({ exp: live(template()), crd: crd(false), template: template(secrets) });
    await reconcileExport(underivable.d, ref, ctx);
    expect([...noCrd.writes, ...noTemplate.writes, ...underivable.writes]).toEqual(['delete cluster-x/postgresqlinstances.anynines.com']);
  });
});

describe('an export of the version its request asked for (issue 36, item 2)', () => {
  it('is re-derived in that version, not moved back to the default template', async () => {
    const both = crd();
    both.spec.versions = [
      { name: 'v1', served: true, storage: false },
      { name: 'v2', served: true, storage: true },
    ];
    const v2 = deriveExport(both, template(), 'cluster-x', 'Namespaced', 'v2');
    const asked: (string | undefined)[] = [];
    const w = world({ exp: { ...v2, metadata: { ...v2.metadata, resourceVersion: '7' } }, crd: both, template: template() });
    const exportable = w.d.exportable;
    w.d = {
      ...w.d,
      exportable: async (g, r, v) => {
        asked.push(v);
        const e = await exportable(g, r);
        return e && { ...e, ...(v ? { version: v } : {}) };
      },
    };
    expect(await reconcileExport(w.d, ref, ctx)).toBeUndefined();
    expect(asked).toEqual(['v2']);
    expect(w.writes).toEqual([]);
  });
});
