import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations, EXPORT_CONVERSION_ANNOTATION, type APIServiceExportTemplate } from '../exports/bind-api';
import { DeriveError, deriveExport } from './derive-export';
import { exportables, findExportable, type ExportableSource } from './exportable';

const crd = (plural: string, scope: 'Namespaced' | 'Cluster'): V1CustomResourceDefinition => ({
  metadata: { name: `${plural}.example.com` },
  spec: {
    group: 'example.com',
    scope,
    names: { kind: plural, plural },
    versions: [{ name: 'v1', served: true, storage: true }],
  },
});
const template = (plural: string): APIServiceExportTemplate =>
  ({
    apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
    kind: 'APIServiceExportTemplate',
    metadata: { name: plural, namespace: 'tpl' },
    spec: { APIServiceSelector: { group: 'example.com', resource: plural } },
  }) as APIServiceExportTemplate;
const src: ExportableSource = {
  templates: async () => [template('widgets'), template('gadgets')],
  crd: async (name) => ({ 'widgets.example.com': crd('widgets', 'Namespaced'), 'gadgets.example.com': crd('gadgets', 'Cluster') })[name],
};

describe('what the backend exports', () => {
  it('offers namespaced resources only: a cluster-scoped one could be written only through a grant reaching every consumer', async () => {
    expect((await exportables(src)).map((e) => e.resource)).toEqual(['widgets']);
    expect(await findExportable(src, 'example.com', 'widgets')).toBeDefined();
    expect(await findExportable(src, 'example.com', 'gadgets')).toBeUndefined();
  });

  it.each(['Namespaced', 'Cluster'] as const)(
    'refuses to derive an export of a cluster-scoped CRD (consumer scope %s), naming the CRD, template and fix',
    (scope) => {
      const derive = () => deriveExport(crd('gadgets', 'Cluster'), template('gadgets'), 'cluster-x', scope);
      expect(derive).toThrow(DeriveError);
      expect(derive).toThrow(/CRD gadgets\.example\.com is cluster-scoped.*APIServiceExportTemplate tpl\/gadgets/);
    },
  );

  it('derives a namespaced CRD with the informer scope of the consumer scope (Klutch’s konnector lists all namespaces with Cluster)', () => {
    expect(deriveExport(crd('widgets', 'Namespaced'), template('widgets'), 'cluster-x', 'Cluster').spec).toMatchObject({
      scope: 'Namespaced',
      informerScope: 'Cluster',
    });
    expect(deriveExport(crd('widgets', 'Namespaced'), template('widgets'), 'cluster-x', 'Namespaced').spec.informerScope).toBe(
      'Namespaced',
    );
  });
});

describe('versions an app cluster asks for (issue 36, item 2)', () => {
  // Synth's templates of an API with two versions: `backups` pins the oldest, `backups-v2` the newer.
  const twoVersions: V1CustomResourceDefinition = {
    metadata: { name: 'backups.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { kind: 'Backup', plural: 'backups' },
      versions: [
        { name: 'v1', served: true, storage: false },
        { name: 'v2', served: true, storage: true },
      ],
    },
  };
  const pinned = (name: string, version?: string): APIServiceExportTemplate =>
    ({
      ...template('backups'),
      metadata: { name, namespace: 'tpl' },
      spec: { APIServiceSelector: { group: 'example.com', resource: 'backups', ...(version ? { version } : {}) } },
    }) as APIServiceExportTemplate;
  const source = (templates: APIServiceExportTemplate[]): ExportableSource => ({
    templates: async () => templates,
    crd: async (name) => (name === 'backups.example.com' ? twoVersions : undefined),
  });
  const exported = async (s: ExportableSource, version?: string) => {
    const e = await findExportable(s, 'example.com', 'backups', version);
    if (!e) return undefined;
    const x = deriveExport(e.crd, e.template, 'cluster-x', 'Namespaced', e.version);
    return {
      template: e.template.metadata.name,
      versions: x.spec.versions.map((v) => v.name),
      kept: x.metadata.annotations?.['klutch-kit.anynines.com/version'],
    };
  };

  it('gives the oldest version by default and the pinned template of a version asked for; none for a version not served', async () => {
    const s = source([pinned('backups-v2', 'v2'), pinned('backups', 'v1')]);
    expect(await exported(s)).toEqual({ template: 'backups', versions: ['v1'], kept: undefined });
    expect(await exported(s, 'v2')).toEqual({ template: 'backups-v2', versions: ['v2'], kept: 'v2' });
    expect(await exported(s, 'v1')).toEqual({ template: 'backups', versions: ['v1'], kept: 'v1' });
    expect(await exported(s, 'v3')).toBeUndefined();
  });

  it('narrows a template that pins no version to the one asked for, so the app cluster gets one version', async () => {
    const s = source([pinned('backups')]);
    expect(await exported(s)).toMatchObject({ versions: ['v1', 'v2'] });
    expect(await exported(s, 'v2')).toEqual({ template: 'backups', versions: ['v2'], kept: 'v2' });
  });

  it("hands the template's conversion to an export of a version the control plane does not store, and to no other", () => {
    const conversion = JSON.stringify({ storageVersion: 'v2', conversions: [{ older: 'v1', newer: 'v2', moved: [] }] });
    const withConversion = (t: APIServiceExportTemplate) =>
      ({ ...t, metadata: { ...t.metadata, annotations: { [EXPORT_CONVERSION_ANNOTATION]: conversion } } }) as APIServiceExportTemplate;
    const of = (t: APIServiceExportTemplate, version?: string) =>
      deriveExport(twoVersions, t, 'cluster-x', 'Namespaced', version).metadata.annotations?.[EXPORT_CONVERSION_ANNOTATION];
    expect(of(withConversion(pinned('backups', 'v1')))).toBe(conversion);
    expect(of(withConversion(pinned('backups-v2', 'v2')))).toBeUndefined(); // stored as it is: nothing to convert
    expect(of(withConversion(pinned('backups')))).toBeUndefined(); // both versions, the storage one among them
    expect(of(pinned('backups', 'v1'))).toBeUndefined();
    // A changed conversion is a changed source: the export is derived again.
    const hash = (t: APIServiceExportTemplate) =>
      deriveExport(twoVersions, t, 'x', 'Namespaced').metadata.annotations?.[Annotations.sourceSpecHash];
    expect(hash(withConversion(pinned('backups', 'v1')))).not.toBe(hash(pinned('backups', 'v1')));
  });
});
