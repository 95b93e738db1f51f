import { describe, expect, it } from 'vitest';
import { claimOfCredentials, isReservedKey, withoutReservedKeys } from './constants';

describe('reserved label and annotation keys', () => {
  it.each([
    ['crossplane.io/claim-namespace', true],
    ['crossplane.io/composite', true],
    ['kubernetes.crossplane.io/x', true],
    ['app.kubernetes.io/name', false],
    ['apps.kubernetes.io/x', true],
    ['kubernetes.io/metadata.name', true],
    ['node.k8s.io/x', true],
    ['klutch.anynines.com/bound', true],
    ['example-backend.klutch.anynines.com/identity', true],
    ['team', false],
    ['example.com/owner', false],
    ['notcrossplane.io/x', false],
  ])('%s reserved: %s', (key, reserved) => {
    expect(isReservedKey(key)).toBe(reserved);
  });

  it('keeps only the app’s own keys', () => {
    expect(
      withoutReservedKeys({ team: 'a', 'crossplane.io/claim-namespace': 'victim', 'kubernetes.io/x': 'y', 'app.kubernetes.io/name': 'x' }),
    ).toEqual({
      team: 'a',
      'app.kubernetes.io/name': 'x',
    });
    expect(withoutReservedKeys({ 'crossplane.io/claim-name': 'x' })).toBeUndefined();
    expect(withoutReservedKeys(undefined)).toBeUndefined();
  });
});

describe('claimOfCredentials', () => {
  it.each([
    ['pg-creds', 'pg'],
    ['a-b-creds', 'a-b'],
    ['-creds', undefined],
    ['creds', undefined],
    ['pg-credentials', undefined],
    ['pg', undefined],
  ])('%s -> %s', (name, claim) => expect(claimOfCredentials(name)).toBe(claim));
});
