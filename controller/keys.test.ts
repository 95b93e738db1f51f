import { describe, expect, it } from 'vitest';
import { byRef, objectKey, refKey, splitKey } from './keys';

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

describe('byRef', () => {
  it('hands the reconcile the split key and returns its result', async () => {
    const seen: unknown[] = [];
    const r = byRef(async (ref, ctx: string) => (seen.push([ref, ctx]), { requeueAfterMs: 5 }));
    expect(await r('ns/x', 'ctx')).toEqual({ requeueAfterMs: 5 });
    expect(await r('cluster-x', 'ctx')).toEqual({ requeueAfterMs: 5 });
    expect(seen).toEqual([
      [{ namespace: 'ns', name: 'x' }, 'ctx'],
      [{ name: 'cluster-x' }, 'ctx'],
    ]);
    expect(refKey({ namespace: 'ns', name: 'x' })).toBe('ns/x');
    expect(refKey({ name: 'x' })).toBe('x');
    await expect(r('a/b/c', 'ctx')).rejects.toMatchObject({
      name: 'TerminalError',
      message: '"a/b/c" is not a key: use <namespace>/<name> or <name>',
    });
  });
});
