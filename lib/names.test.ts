import { describe, expect, it } from 'vitest';
import { Names } from './names';

describe('Names.packageName (Crossplane ToDNSLabel of the repository path)', () => {
  it.each([
    ['xpkg.crossplane.io/crossplane-contrib/function-auto-ready:v0.2.1', 'crossplane-contrib-function-auto-ready'],
    ['xpkg.crossplane.io/klutch-kit/function-dataservices:v0.1.0', 'klutch-kit-function-dataservices'],
    ['localhost:5000/my/fn@sha256:abcd', 'my-fn'],
    ['klutch-kit/function-dataservices', 'klutch-kit-function-dataservices'],
    // Crossplane keeps only [a-z0-9] and turns separators into '-', exactly like this.
    ['registry.example.com/Org_A/Fn.Name:v1', 'rg-n-ame'],
  ])('%s → %s', (ref, name) => {
    expect(Names.packageName(ref)).toBe(name);
  });

  it.each([
    ['PostgresqlInstance', 'postgresqlinstances'],
    ['ServiceBinding', 'servicebindings'],
    ['Policy', 'policies'],
    ['Gateway', 'gateways'],
    ['Mailbox', 'mailboxes'],
    ['Patch', 'patches'],
    ['Postgres', undefined],
    ['Endpoints', undefined],
    ['Status', undefined],
  ])('Names.plural(%s) is %s', (kind, plural) => {
    expect(Names.plural(kind)).toBe(plural);
  });

  it('checks DNS labels and subdomains', () => {
    expect(Names.isDnsLabel('a9s-postgresql')).toBe(true);
    expect(Names.isDnsLabel('-x')).toBe(false);
    expect(Names.isDnsLabel('a'.repeat(64))).toBe(false);
    expect(Names.isDnsSubdomain('anynines.com')).toBe(true);
    expect(Names.isDnsSubdomain('Anynines.com')).toBe(false);
  });
});
