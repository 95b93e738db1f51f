import { describe, expect, it } from 'vitest';
import type { Api } from '../../apis/api';
import { inputFor, type Recipe } from '../../recipe';
import { loadCatalog } from '../../harness/crossplane/catalog';
import { compositeOf, fatalMessages, requestOf } from '../../harness/crossplane/function-requests';
import { expiryOf, ttlUntil } from './expiry';
import { runFunction, TTL } from './fn';

const apis = await loadCatalog();
const sb = apis.find((a) => a.name === 'servicebinding') as Api;
const input = inputFor(sb.backends.cnpg as Recipe, { backend: 'cnpg', service: 'servicebinding' });
const binding = (expiresAt?: string) =>
  compositeOf(
    sb,
    'cnpg',
    { instanceRef: 'pg', serviceInstanceType: 'postgresql', ...(expiresAt ? { expiresAt } : {}) },
    { name: 'app', namespace: 'team-a' },
  );
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

describe('expiry helpers', () => {
  it('reads an RFC 3339 time, none where the field is empty, and names a field that is not a time', () => {
    expect(expiryOf({ spec: { expiresAt: '2026-12-05T12:00:00Z' } }, 'spec.expiresAt', 'here')).toBe(Date.parse('2026-12-05T12:00:00Z'));
    expect(expiryOf({ spec: {} }, 'spec.expiresAt', 'here')).toBeUndefined();
    expect(() => expiryOf({ spec: { expiresAt: 'soon' } }, 'spec.expiresAt', 'here')).toThrow(
      'cannot read spec.expiresAt here: "soon" is not an RFC 3339 time',
    );
  });

  it('cuts the TTL to a second past the time left, never lengthens it', () => {
    expect(ttlUntil(TTL, 20_500, 0)).toEqual({ seconds: 22, nanos: 0 });
    expect(ttlUntil(TTL, 3_600_000, 0)).toBe(TTL);
    expect(ttlUntil(TTL, undefined, 0)).toBe(TTL);
    expect(ttlUntil(TTL, 0, 10)).toBe(TTL);
  });
});

describe('a cnpg binding with spec.expiresAt, through the function', () => {
  it('before the time: composed, looked at again when it comes; after: not composed (Crossplane deletes it), Expired', () => {
    const soon = Date.now() + 30_000;
    const live = runFunction(requestOf(input, binding(iso(soon))));
    expect(fatalMessages(live)).toEqual([]);
    expect(Object.keys(live.desired?.resources ?? {})).toEqual(['cnpg-servicebinding']);
    expect(live.meta?.ttl?.seconds).toBeGreaterThan(25);
    expect(live.meta?.ttl?.seconds).toBeLessThanOrEqual(32);

    const past = '2026-01-01T00:00:00Z';
    const gone = runFunction(requestOf(input, binding(past)));
    expect(fatalMessages(gone)).toEqual([]);
    expect(gone.desired?.resources ?? {}).toEqual({});
    expect(gone.conditions.find((c) => c.type === 'DataServiceReady')).toMatchObject({
      reason: 'Expired',
      message: `cnpg servicebinding: expired at ${past}: its credentials are revoked; set a later spec.expiresAt for new ones, or delete the claim`,
    });

    const never = runFunction(requestOf(input, binding()));
    expect(never.meta?.ttl).toEqual(TTL);
  });
});
