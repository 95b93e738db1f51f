import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import type { APIServiceExportTemplate } from '../exports/bind-api';
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
