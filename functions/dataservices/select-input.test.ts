import { Severity } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { selectionFor } from '../../compositions/selection';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { requestOf } from '../../harness/crossplane/function-requests';
import { runFunction } from './fn';
import { selectInput } from './select-input';

const apis: Api[] = await loadCatalog();
const pg = apis.find((a) => a.name === 'postgresql') as Api;
const selection = selectionFor(pg);
const spec = { service: 'a9s-postgresql14', plan: 'postgresql-single-nano' };
/** A namespaced (v2) composite written as a Klutch claim. */
const xr = (compositionRef?: unknown) => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: { name: 'pg', namespace: 'team-a' },
  spec: { ...spec, ...(compositionRef === undefined ? {} : { compositionRef }), crossplane: { compositionRef: { name: 'postgresql' } } },
});

describe('selectInput', () => {
  it.each([
    ['the composition spec.compositionRef names', { name: 'a9s-postgresql' }, 'a9s'],
    ['the other one', { name: 'a8s-postgresql' }, 'a8s'],
    ['the default when spec.compositionRef is left out', undefined, 'a8s'],
  ])('picks %s', (_, ref, backend) => {
    const r = selectInput(selection, xr(ref));
    expect(r.ok && (r.input as { backend: string }).backend).toBe(backend);
  });

  it('passes any other input through unchanged', () => {
    const input = selection.inputs['a8s-postgresql'];
    expect(selectInput(input, xr())).toEqual({ ok: true, input });
  });

  it.each([
    [
      'an unknown composition',
      { name: 'a7s-postgresql' },
      'spec.compositionRef.name is "a7s-postgresql", not one of a8s-postgresql, a9s-postgresql',
    ],
    ['a name that is not a string', { name: 7 }, 'spec.compositionRef.name is 7, not one of'],
  ])('refuses %s, naming the field and the choices', (_, ref, message) => {
    const r = selectInput(selection, xr(ref));
    expect(r.ok).toBe(false);
    expect(!r.ok && r.error).toContain(message);
  });

  it('refuses a Selection whose default is not among its inputs', () => {
    const r = selectInput({ ...selection, default: 'nope' }, xr());
    expect(!r.ok && r.error).toBe(
      'cannot validate the Selection input of data service postgresql: default "nope" is not one of the inputs (a8s-postgresql, a9s-postgresql, cnpg-postgresql)',
    );
  });
});

describe('the function with a Selection input', () => {
  it('composes on the backend the composite names: a Klutch claim as a v2 composite', () => {
    const a9s = runFunction(requestOf(selection as never, xr({ name: 'a9s-postgresql' }) as never));
    expect(Object.keys(a9s.desired?.resources ?? {})).toEqual(['a9s-postgresql']);
    // provider-anynines' MR is cluster-scoped: on v2 it is wrapped in a namespaced Object, named <namespace>.<name>.
    const mr = a9s.desired?.resources['a9s-postgresql']?.resource as Record<string, any>;
    expect([mr.apiVersion, mr.kind, mr.spec.forProvider.manifest.kind, mr.spec.forProvider.manifest.metadata.name]).toEqual([
      'kubernetes.m.crossplane.io/v1alpha1',
      'Object',
      'ServiceInstance',
      'team-a.pg',
    ]);
    const a8s = runFunction(requestOf(selection as never, xr() as never));
    const obj = a8s.desired?.resources['a8s-postgresql']?.resource as Record<string, any>;
    expect([obj.apiVersion, obj.kind, obj.spec.forProvider.manifest.kind]).toEqual([
      'kubernetes.m.crossplane.io/v1alpha1',
      'Object',
      'Postgresql',
    ]);
    expect(obj.spec.forProvider.manifest.metadata).toEqual({ name: 'pg', namespace: 'team-a' });
  });

  it('answers an unknown composition with a Fatal result, composing nothing', () => {
    const r = runFunction(requestOf(selection as never, xr({ name: 'a7s-postgresql' }) as never));
    expect(r.results.filter((x) => x.severity === Severity.SEVERITY_FATAL).map((x) => x.message)).toEqual([
      expect.stringContaining('cannot select the composition of data service postgresql: spec.compositionRef.name is "a7s-postgresql"'),
    ]);
    expect(r.desired?.resources).toEqual({});
  });
});
