import { describe, expect, it } from 'vitest';
import { covers } from './exports';

describe('covers', () => {
  it('passes server defaults, not a changed, added or removed claim', () => {
    const want = { group: 'g', permissionClaims: [{ resource: 'secrets', selector: { names: ['x'] } }] };
    expect(covers(want, { ...want, informerScope: 'Namespaced' })).toBe(true);
    expect(covers(want, { group: 'g', permissionClaims: [{ resource: 'secrets', selector: { names: ['x'], owner: 'Provider' } }] })).toBe(
      true,
    );
    expect(covers(want, { group: 'g', permissionClaims: [{ resource: 'secrets', selector: { names: ['*'] } }] })).toBe(false);
    expect(covers(want, { group: 'g', permissionClaims: [...want.permissionClaims, { resource: 'configmaps' }] })).toBe(false);
    expect(covers(want, { group: 'g', permissionClaims: [] })).toBe(false);
  });
});
