import { describe, expect, it } from 'vitest';
import { base62, clusterId, sessionId } from './ids';

describe('ids', () => {
  // Expected values computed with Go: new(big.Int).SetBytes(sha256.Sum224([]byte(uid))[:]).Text(62), as Klutch's CLI.
  it.each([
    ['6f1c2e8a-3b4d-4e5f-9a0b-1c2d3e4f5a6b', '7uRCpM'],
    ['00000000-0000-0000-0000-000000000000', '6EbPoz'],
  ])('the cluster id of namespace UID %s is %s, as Klutch computes it', (uid, id) => {
    expect(clusterId(uid)).toBe(id);
  });

  it('writes base62 like Go’s big.Int.Text(62)', () => {
    expect(base62(0n)).toBe('0');
    expect(base62(61n)).toBe('Z');
    expect(base62(62n)).toBe('10');
    expect(base62(62n ** 3n - 1n)).toBe('ZZZ');
  });

  it('session ids are 6 base62 characters, fresh each time', () => {
    const ids = Array.from({ length: 50 }, sessionId);
    for (const id of ids) expect(id).toMatch(/^[0-9a-zA-Z]{6}$/);
    expect(new Set(ids).size).toBe(50);
  });
});
