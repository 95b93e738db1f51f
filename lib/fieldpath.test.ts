import { describe, expect, it } from 'vitest';
import { get, join, parse, set } from './fieldpath';

describe('parse', () => {
  it.each([
    {
      name: 'dotted fields',
      path: 'spec.parameters.maxConnections',
      want: [{ field: 'spec' }, { field: 'parameters' }, { field: 'maxConnections' }],
    },
    {
      name: 'a bracketed key with dots and slashes',
      path: 'metadata.labels[crossplane.io/claim-name]',
      want: [{ field: 'metadata' }, { field: 'labels' }, { field: 'crossplane.io/claim-name' }],
    },
    {
      name: 'an index then a field',
      path: 'spec.items[0].name',
      want: [{ field: 'spec' }, { field: 'items' }, { index: 0 }, { field: 'name' }],
    },
    {
      name: 'brackets after brackets',
      path: 'a.b[key.with.dots][0]',
      want: [{ field: 'a' }, { field: 'b' }, { field: 'key.with.dots' }, { index: 0 }],
    },
    {
      name: 'kebab and snake keys',
      path: 'p.tls-protocols.pg_log',
      want: [{ field: 'p' }, { field: 'tls-protocols' }, { field: 'pg_log' }],
    },
  ])('$name', ({ path, want }) => expect(parse(path)).toEqual(want));

  it.each([
    { name: 'empty', path: '' },
    { name: 'unclosed bracket', path: 'a[b' },
    { name: 'empty brackets', path: 'a[]' },
    { name: 'double dot', path: 'a..b' },
    { name: 'trailing dot', path: 'a.' },
    { name: 'stray closing bracket', path: 'a]b' },
  ])('rejects $name, naming the path', ({ path }) => expect(() => parse(path)).toThrow(`field path "${path}"`));
});

describe('get', () => {
  const obj = {
    spec: { items: [{ name: 'n0' }], parameters: { 'a.b': 1, zero: 0, no: false } },
    metadata: { labels: { 'crossplane.io/claim-name': 'c' } },
  };
  it.each([
    ['spec.items[0].name', 'n0'],
    ['metadata.labels[crossplane.io/claim-name]', 'c'],
    ['spec.parameters[a.b]', 1],
    ['spec.parameters.zero', 0],
    ['spec.parameters.no', false],
    ['spec.items[1].name', undefined],
    ['spec.items.name', undefined],
    ['spec.parameters[0]', undefined],
    ['spec.missing.deeper', undefined],
    ['spec.parameters.toString', undefined],
  ])('%s → %j', (path, want) => expect(get(obj, path)).toEqual(want));
});

describe('set', () => {
  it.each([
    { name: 'creates objects', path: 'spec.forProvider.planName', value: 'p', want: { spec: { forProvider: { planName: 'p' } } } },
    { name: 'creates arrays and pads with null', path: 'a.list[1].x', value: 1, want: { a: { list: [null, { x: 1 }] } } },
    {
      name: 'bracketed keys',
      path: 'metadata.labels[klutch.io/instance-type]',
      value: 'pg',
      want: { metadata: { labels: { 'klutch.io/instance-type': 'pg' } } },
    },
  ])('$name', ({ path, value, want }) => {
    const o = {};
    set(o, path, value);
    expect(o).toEqual(want);
  });

  it('keeps sibling fields', () => {
    const o = { spec: { a: 1 } };
    set(o, 'spec.b', 2);
    expect(o).toEqual({ spec: { a: 1, b: 2 } });
  });

  it.each([
    { name: 'a field through a string', obj: { spec: 'x' }, path: 'spec.a', want: 'spec is not an object' },
    { name: 'an index into an object', obj: { spec: {} }, path: 'spec[0]', want: 'spec is not an array' },
    { name: '__proto__', obj: {}, path: '__proto__.polluted', want: 'names __proto__' },
  ])('refuses $name', ({ obj, path, want }) => expect(() => set(obj as Record<string, unknown>, path, 1)).toThrow(want));
});

it('join puts bracketed keys without a dot', () => {
  expect(join('spec.forProvider.parameters', 'max_connections')).toBe('spec.forProvider.parameters.max_connections');
  expect(join('metadata.labels', '[a.b]')).toBe('metadata.labels[a.b]');
});
