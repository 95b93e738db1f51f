import { describe, expect, it } from 'vitest';
import { exportTemplateManifest, type APIServiceExportTemplate } from '../../exports/bind-api';
import { BindAnnotations, bindRule, mayBind, type BindIdentity, type DefaultBindPolicy } from './bind-policy';

function template(annotations?: Record<string, string>): APIServiceExportTemplate {
  const t = exportTemplateManifest({ name: 'pg', namespace: 'catalog', group: 'anynines.com', resource: 'postgresqlinstances' });
  return annotations ? { ...t, metadata: { ...t.metadata, annotations } } : t;
}

const G = BindAnnotations.allowedGroups;
const S = BindAnnotations.allowedSubjects;
const C = BindAnnotations.allowedClients;
const alice: BindIdentity = { subject: 'alice', groups: ['dba', 'devs'] };
const bob: BindIdentity = { subject: 'bob', groups: ['devs'] };
const nobody: BindIdentity = { subject: 'eve', groups: [] };
const ci: BindIdentity = { subject: 'ci-pipeline', groups: [], clientId: 'ci-pipeline' };

const cases: {
  name: string;
  who: BindIdentity;
  annotations?: Record<string, string>;
  policy?: DefaultBindPolicy;
  allowed: boolean;
  by?: string;
  reason?: string;
  message?: RegExp;
}[] = [
  { name: 'no rule, allow-all: anyone', who: nobody, policy: 'allow-all', allowed: true, by: 'default' },
  {
    name: 'no rule, deny-all: no one, naming the flag and the annotation',
    who: alice,
    policy: 'deny-all',
    allowed: false,
    reason: 'default-deny',
    message:
      /postgresqlinstances\.anynines\.com .*--default-bind-policy=deny-all.*bind-allowed-groups on APIServiceExportTemplate catalog\/pg/,
  },
  { name: 'group listed: a member', who: alice, annotations: { [G]: 'dba' }, allowed: true, by: 'group:dba' },
  { name: 'group rule beats deny-all', who: alice, annotations: { [G]: 'dba' }, policy: 'deny-all', allowed: true, by: 'group:dba' },
  {
    name: 'group listed: a non-member, naming the API, the group and the user’s groups',
    who: bob,
    annotations: { [G]: 'dba, platform' },
    allowed: false,
    reason: 'not-allowed',
    message: /^only a member of groups "dba", "platform" may bind postgresqlinstances\.anynines\.com; your groups are "devs"/,
  },
  {
    name: 'a rule overrides allow-all',
    who: nobody,
    annotations: { [G]: 'dba' },
    policy: 'allow-all',
    allowed: false,
    reason: 'not-allowed',
    message: /your login carries no groups/,
  },
  { name: 'comma list with spaces', who: bob, annotations: { [G]: ' ops ,devs ' }, allowed: true, by: 'group:devs' },
  {
    name: 'JSON list for names with commas (LDAP DNs)',
    who: { groups: ['cn=dba,ou=groups'] },
    annotations: { [G]: '["cn=dba,ou=groups"]' },
    allowed: true,
    by: 'group:cn=dba,ou=groups',
  },
  {
    name: 'group names match exactly (no prefix or case folding)',
    who: { groups: ['DBA', 'dba-x'] },
    annotations: { [G]: 'dba' },
    allowed: false,
    reason: 'not-allowed',
  },
  {
    name: '* in groups: every logged-in identity',
    who: nobody,
    annotations: { [G]: '*' },
    policy: 'deny-all',
    allowed: true,
    by: 'group:*',
  },
  { name: 'subject listed', who: bob, annotations: { [S]: 'bob' }, allowed: true, by: 'subject:bob' },
  { name: 'groups or subjects', who: bob, annotations: { [G]: 'dba', [S]: 'bob' }, allowed: true, by: 'subject:bob' },
  { name: 'client listed: a machine identity', who: ci, annotations: { [C]: 'ci-pipeline' }, allowed: true, by: 'client:ci-pipeline' },
  {
    name: 'a person whose sub equals a client ID is not that client',
    who: { subject: 'ci-pipeline', groups: [] },
    annotations: { [C]: 'ci-pipeline' },
    allowed: false,
    reason: 'not-allowed',
    message: /only client "ci-pipeline" may bind/,
  },
  {
    name: 'an empty rule locks the API',
    who: alice,
    annotations: { [G]: '' },
    allowed: false,
    reason: 'not-allowed',
    message: /allows nobody to bind it/,
  },
  {
    name: 'an unreadable rule refuses everyone (fail closed), naming the annotation',
    who: alice,
    annotations: { [G]: '["dba"' },
    allowed: false,
    reason: 'invalid-rule',
    message: /catalog\/pg: annotation klutch-kit\.anynines\.com\/bind-allowed-groups starts with "\[" but is not a JSON array/,
  },
  {
    name: 'a JSON rule of non-strings refuses everyone',
    who: alice,
    annotations: { [G]: '[1, 2]' },
    allowed: false,
    reason: 'invalid-rule',
    message: /not an array of strings/,
  },
  {
    name: 'other annotations are no rule',
    who: nobody,
    annotations: { 'example.com/x': 'y' },
    policy: 'allow-all',
    allowed: true,
    by: 'default',
  },
];

describe('mayBind', () => {
  it.each(cases)('$name', (c) => {
    const d = mayBind(c.who, template(c.annotations), c.policy ?? 'allow-all');
    expect(d.allowed).toBe(c.allowed);
    if (d.allowed) expect(d.by).toBe(c.by);
    else {
      expect(d.reason).toBe(c.reason);
      if (c.message) expect(d.message).toMatch(c.message);
    }
  });

  it('shows at most ten of a user’s groups', () => {
    const many = Array.from({ length: 25 }, (_, i) => `g${i}`);
    const d = mayBind({ groups: many }, template({ [G]: 'dba' }), 'allow-all');
    expect(!d.allowed && d.message).toContain('"g9" and 15 more');
  });
});

describe('bindRule', () => {
  it('is undefined without any of the annotations, and lists all three otherwise', () => {
    expect(bindRule(template())).toBeUndefined();
    expect(bindRule(template({ [S]: 'a,b' }))).toEqual({ groups: [], subjects: ['a', 'b'], clients: [] });
  });
});
