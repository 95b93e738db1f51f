import { describe, expect, it } from 'vitest';
import { groupsOf } from './issuer';

describe('groupsOf', () => {
  it.each([
    { claim: ['dba', 'devs'], groups: ['dba', 'devs'] },
    { claim: 'dba', groups: ['dba'] },
    { claim: ['dba', 'dba', '', 7, { name: 'x' }], groups: ['dba'] },
    { claim: undefined, groups: [] },
    { claim: '', groups: [] },
    { claim: { dba: true }, groups: [] },
  ])('$claim → $groups', ({ claim, groups }) => {
    expect(groupsOf(claim)).toEqual(groups);
  });
});
