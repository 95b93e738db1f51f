import { describe, expect, it } from 'vitest';
import { s } from './schema';

describe('schema builder', () => {
  it('writes structural OpenAPI with CEL rules and their messages', () => {
    const schema = s.object(
      {
        size: s.integer({ minimum: 1, maximum: 10, default: 3 }).immutable(),
        tags: s.array(s.string({ pattern: '^[a-z]+$' }), { listType: 'set' }),
        extra: s.freeform(),
      },
      { required: ['size'] },
    );
    expect(schema.toJSON()).toEqual({
      type: 'object',
      required: ['size'],
      properties: {
        size: {
          type: 'integer',
          minimum: 1,
          maximum: 10,
          default: 3,
          'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'Value is immutable' }],
        },
        tags: { type: 'array', items: { type: 'string', pattern: '^[a-z]+$' }, 'x-kubernetes-list-type': 'set' },
        extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
      },
    });
  });

  it.each<[string, () => unknown, string]>([
    [
      'a required property that does not exist',
      () => s.object({ a: s.string() }, { required: ['b'] }),
      'required property "b" is not among its properties [a]',
    ],
    ['minimum above maximum', () => s.integer({ minimum: 5, maximum: 1 }), 'minimum (5) is greater than maximum (1)'],
    ['a default outside the enum', () => s.string({ enum: ['a'], default: 'b' }), 'default "b" is not one of its enum values'],
    ['an invalid pattern', () => s.string({ pattern: '(' }), 'is not a valid regular expression'],
    ['a map list without keys', () => s.array(s.object({}), { listType: 'map' }), 'needs listMapKeys'],
  ])('refuses %s', (_, build, message) => {
    expect(build).toThrow(message);
  });

  it('never shares state between copies', () => {
    const base = s.string();
    const ruled = base.withRule('size(self) > 0', 'must not be empty');
    expect(base.toJSON()['x-kubernetes-validations']).toBeUndefined();
    expect(ruled.toJSON()['x-kubernetes-validations']).toHaveLength(1);
  });
});
