import { describe, expect, it } from 'vitest';
import { objectKey, splitKey } from './keys';

describe('keys', () => {
  it.each([
    [{ metadata: { name: 'x', namespace: 'ns' } }, 'ns/x', { namespace: 'ns', name: 'x' }],
    [{ metadata: { name: 'crd.example.com' } }, 'crd.example.com', { name: 'crd.example.com' }],
  ])('%j ↔ %s', (obj, key, ref) => {
    expect(objectKey(obj)).toBe(key);
    expect(splitKey(key)).toEqual(ref);
  });

  it('refuses what is not a key', () => {
    expect(() => objectKey({ metadata: {} })).toThrow('without metadata.name');
    for (const k of ['a/b/c', '/x', 'x/']) expect(() => splitKey(k)).toThrow(`"${k}" is not a key`);
  });
});
