import type { RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { inputFor, type Recipe } from '../../recipe';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { answer, compositeOf, fatalMessages as fatals, requestOf, SETTINGS } from '../../harness/crossplane/function-requests';
import { ADOPT_REQUIREMENT, adoptWrapped } from './adopt';
import { composeResource } from './compose';
import { get } from '../../lib/fieldpath';
import { runFunction } from './fn';

type Obj = Record<string, any>;

const apis: Api[] = await loadCatalog();
const api = (name: string) => apis.find((a) => a.name === name) as Api;
const v2Input = (name: string) =>
  inputFor(api(name).backends.a9s as Recipe, { backend: 'a9s', service: name, settings: SETTINGS, target: 'v2' });

/** A v2 composite in team-b, as the claim `app-db` becomes after the move. */
function v2Composite(name: string, spec: Obj): Obj {
  const xr = compositeOf(api(name), 'a9s', spec);
  xr.metadata = { name: 'app-db', namespace: 'team-b' };
  xr.spec = { ...(xr.spec as Obj), claimRef: undefined };
  return xr;
}
const pgSpec = { service: 'a9s-postgresql15', plan: 'postgresql-single-small' };

/** A managed resource the v1 package composed for claim team-b/app-db (generated name, claim labels). */
const v1Mr = (name: string, providerConfig: string): Obj => ({
  apiVersion: 'dataservices.anynines.com/v1',
  kind: 'ServiceInstance',
  metadata: { name, labels: { 'crossplane.io/claim-name': 'app-db', 'crossplane.io/claim-namespace': 'team-b' } },
  spec: { providerConfigRef: { name: providerConfig } },
});

const MANIFEST_NAME = 'spec.forProvider.manifest.metadata.name';
const selector = {
  apiVersion: 'dataservices.anynines.com/v1',
  kind: 'ServiceInstance',
  matchLabels: { labels: { 'crossplane.io/claim-name': 'app-db', 'crossplane.io/claim-namespace': 'team-b' } },
};

describe('adoptWrapped: the v2 a9s Object wraps the MR the v1 package made for the same claim', () => {
  const compose = () => composeResource(v2Input('postgresql'), v2Composite('postgresql', pgSpec)).resource;

  it.each<{ name: string; found: Obj[] | undefined; want: { adopted?: string; name: string } }>([
    {
      name: 'not asked yet: asks for the claim-labelled objects of its kind, keeps its own name',
      found: undefined,
      want: { name: 'team-b.app-db' },
    },
    { name: 'none found: creates its own', found: [], want: { name: 'team-b.app-db' } },
    {
      name: 'found: wraps the one with its ProviderConfig (a MariaDB claim of the same name has a ServiceInstance too)',
      found: [v1Mr('app-db-x7k2p-4xq9z', 'postgresql-service-broker'), v1Mr('app-db-h2k8d-mm3rt', 'mariadb-service-broker')],
      want: { adopted: 'app-db-x7k2p-4xq9z', name: 'app-db-x7k2p-4xq9z' },
    },
    {
      name: "found another service's only: creates its own",
      found: [v1Mr('app-db-h2k8d-mm3rt', 'mariadb-service-broker')],
      want: { name: 'team-b.app-db' },
    },
  ])('$name', ({ found, want }) => {
    const composed = compose();
    const got = adoptWrapped(v2Input('postgresql'), composed, undefined, found, '(composition postgresql)');
    // The requirement stays while the wrapper is not composed: Crossplane stops calling when it no longer changes.
    expect(got).toEqual({ requirement: selector, ...(want.adopted ? { adopted: want.adopted } : {}) });
    expect(get(composed, MANIFEST_NAME)).toBe(want.name);
  });

  it('an existing wrapper keeps the name it wraps, and asks for nothing', () => {
    const composed = compose();
    const observed = { spec: { forProvider: { manifest: { metadata: { name: 'app-db-x7k2p-4xq9z' } } } } };
    expect(adoptWrapped(v2Input('postgresql'), composed, observed, undefined, '')).toEqual({ adopted: 'app-db-x7k2p-4xq9z' });
    expect(get(composed, MANIFEST_NAME)).toBe('app-db-x7k2p-4xq9z');
    const own = compose();
    expect(
      adoptWrapped(
        v2Input('postgresql'),
        own,
        { spec: { forProvider: { manifest: { metadata: { name: 'team-b.app-db' } } } } },
        undefined,
        '',
      ),
    ).toEqual({});
  });

  it('two candidates are refused, naming them and the fix', () => {
    const found = [v1Mr('b', 'postgresql-service-broker'), v1Mr('a', 'postgresql-service-broker')];
    expect(() => adoptWrapped(v2Input('postgresql'), compose(), undefined, found, '(composition postgresql)')).toThrow(
      'cannot adopt the ServiceInstance of claim team-b/app-db (composition postgresql): 2 carry its labels and ProviderConfig postgresql-service-broker (a, b); delete all but the one that holds the data',
    );
  });

  it("refuses to wrap the <namespace>.<name> of another data service's claim of the same name", () => {
    const found = [v1Mr('team-b.app-db', 'mariadb-service-broker')];
    expect(() => adoptWrapped(v2Input('postgresql'), compose(), undefined, found, '(composition postgresql)')).toThrow(
      "cannot create the ServiceInstance team-b.app-db (composition postgresql): it exists for another data service's claim named team-b/app-db (ProviderConfig mariadb-service-broker); give this claim another name",
    );
  });

  it('a recipe without adoptByClaimLabels (the v1 target, a8s) asks for nothing', () => {
    const input = inputFor(api('postgresql').backends.a9s as Recipe, { backend: 'a9s', service: 'postgresql', settings: SETTINGS });
    const composed = composeResource(input, compositeOf(api('postgresql'), 'a9s', pgSpec)).resource;
    expect(adoptWrapped(input, composed, undefined, [v1Mr('x', 'postgresql-service-broker')], '')).toEqual({});
    expect(get(composed, 'metadata.name')).toBeUndefined();
  });

  it('adoptByClaimLabels on a namespaced wrapped resource is refused', () => {
    const input = v2Input('postgresql');
    const bad = { ...input, wrapper: { ...input.wrapper!, clusterScoped: false } };
    expect(() => adoptWrapped(bad, compose(), undefined, undefined, '(composition x)')).toThrow(
      'wrapper.adoptByClaimLabels needs wrapper.clusterScoped',
    );
  });
});

describe('the function asks Crossplane, then wraps what it found (the requirements loop)', () => {
  const manifestName = (r: RunFunctionResponse) => get(r.desired?.resources['a9s-postgresql']?.resource, MANIFEST_NAME);

  it('first call: the requirement; second, with what Crossplane found: the same requirement and the adopted name', () => {
    const req = requestOf(v2Input('postgresql'), v2Composite('postgresql', pgSpec));
    const first = runFunction(req);
    expect(fatals(first)).toEqual([]);
    expect(first.requirements?.resources).toEqual({ [ADOPT_REQUIREMENT]: selector });
    const second = runFunction(
      answer(req, ADOPT_REQUIREMENT, [v1Mr('app-db-x7k2p-4xq9z', 'postgresql-service-broker')], 'requiredResources'),
    );
    expect(second.requirements).toEqual(first.requirements);
    expect(manifestName(second)).toBe('app-db-x7k2p-4xq9z');
  });

  it('once its Object exists, one call and no requirement', () => {
    const observed = {
      apiVersion: 'kubernetes.m.crossplane.io/v1alpha1',
      kind: 'Object',
      spec: { forProvider: { manifest: { metadata: { name: 'app-db-x7k2p-4xq9z' } } } },
    };
    const r = runFunction(requestOf(v2Input('postgresql'), v2Composite('postgresql', pgSpec), { 'a9s-postgresql': observed }));
    expect(fatals(r)).toEqual([]);
    expect(r.requirements).toBeUndefined();
    expect(manifestName(r)).toBe('app-db-x7k2p-4xq9z');
  });

  it('an ambiguous adoption is a Fatal result', () => {
    const req = requestOf(v2Input('postgresql'), v2Composite('postgresql', pgSpec));
    const found = ['a', 'b'].map((n) => v1Mr(n, 'postgresql-service-broker'));
    expect(fatals(runFunction(answer(req, ADOPT_REQUIREMENT, found, 'requiredResources')))).toEqual([
      expect.stringContaining('2 carry its labels and ProviderConfig postgresql-service-broker (a, b)'),
    ]);
  });
});
