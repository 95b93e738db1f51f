import { describe, expect, it } from 'vitest';
import { bindPath, BindResources, crdName } from './client';

describe('BindResources', () => {
  it("names every bind kind as Klutch's CRDs do (group, version, plural, kind)", () => {
    const names = Object.fromEntries(Object.entries(BindResources).map(([k, r]) => [k, `${r.kind} ${crdName(r)}/${r.version}`]));
    expect(names).toEqual({
      exports: 'APIServiceExport apiserviceexports.klutch.anynines.com/v1alpha1',
      exportRequests: 'APIServiceExportRequest apiserviceexportrequests.klutch.anynines.com/v1alpha1',
      serviceNamespaces: 'APIServiceNamespace apiservicenamespaces.klutch.anynines.com/v1alpha1',
      bindings: 'APIServiceBinding apiservicebindings.klutch.anynines.com/v1alpha1',
      clusterBindings: 'ClusterBinding clusterbindings.klutch.anynines.com/v1alpha1',
      appClusterBindings: 'AppClusterBinding appclusterbindings.klutch.anynines.com/v1alpha1',
      templates: 'APIServiceExportTemplate apiserviceexporttemplates.example-backend.klutch.anynines.com/v1alpha1',
    });
  });

  it('makes the collection path of a resource, in a namespace or across all', () => {
    expect(bindPath(BindResources.bindings)).toBe('/apis/klutch.anynines.com/v1alpha1/apiservicebindings');
    expect(bindPath(BindResources.exports, 'cluster-x')).toBe('/apis/klutch.anynines.com/v1alpha1/namespaces/cluster-x/apiserviceexports');
    expect(bindPath({ group: '', version: 'v1', plural: 'secrets' }, 'a')).toBe('/api/v1/namespaces/a/secrets');
  });
});
