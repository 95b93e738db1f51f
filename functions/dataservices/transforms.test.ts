import { describe, expect, it } from 'vitest';
import type { Transform } from '../../recipe';
import { applyTransforms } from './transforms';

describe('applyTransforms', () => {
  it.each<{ name: string; value: unknown; transforms: Transform[]; want: unknown }>([
    {
      name: 'trimPrefix then toInteger (a8s version)',
      value: 'a9s-postgresql13',
      transforms: [{ type: 'trimPrefix', prefix: 'a9s-postgresql' }, { type: 'toInteger' }],
      want: 13,
    },
    {
      name: 'trimPrefix without the prefix keeps the value',
      value: 'pg13',
      transforms: [{ type: 'trimPrefix', prefix: 'a9s-' }],
      want: 'pg13',
    },
    { name: 'toInteger keeps an integer', value: 7, transforms: [{ type: 'toInteger' }], want: 7 },
    { name: 'lowercase (a8s log levels)', value: 'DEBUG1', transforms: [{ type: 'lowercase' }], want: 'debug1' },
    {
      name: 'format',
      value: 'postgresql',
      transforms: [{ type: 'format', format: '%s-service-broker' }],
      want: 'postgresql-service-broker',
    },
    { name: 'map', value: 'big', transforms: [{ type: 'map', map: { big: '100Gi' } }], want: '100Gi' },
    { name: 'no transforms', value: { a: 1 }, transforms: [], want: { a: 1 } },
  ])('$name', ({ value, transforms, want }) => expect(applyTransforms(value, transforms)).toEqual(want));

  it.each<{ name: string; value: unknown; transforms: Transform[]; want: string }>([
    {
      name: 'toInteger of a non-number',
      value: 'abc',
      transforms: [{ type: 'toInteger' }],
      want: 'transforms[0]: toInteger needs a decimal integer string, got "abc"',
    },
    {
      name: 'lowercase of a number',
      value: 1,
      transforms: [{ type: 'lowercase' }],
      want: 'transforms[0]: lowercase needs a string, got 1',
    },
    {
      name: 'map without the key',
      value: 'x',
      transforms: [
        { type: 'trimPrefix', prefix: 'a' },
        { type: 'map', map: { y: 1 } },
      ],
      want: 'transforms[1]: map has no entry for "x" (keys: y)',
    },
    {
      name: 'trimPrefix of an object',
      value: {},
      transforms: [{ type: 'trimPrefix', prefix: 'a' }],
      want: 'trimPrefix "a" needs a string',
    },
    { name: 'unknown type', value: 1, transforms: [{ type: 'upper' } as unknown as Transform], want: 'unknown transform type "upper"' },
  ])('fails on $name', ({ value, transforms, want }) => expect(() => applyTransforms(value, transforms)).toThrow(want));
});
