import { describe, expect, it } from 'vitest';
import type { JSONSchemaProps } from '../lib/schema';
import { breakingChanges, FIXES, formatBreak, type BreakRule, type XrdLike } from './breaking';

/** A claim API as synth writes it: spec with a plan enum, a size bound, a pattern, a map and a list; a status. */
function api(
  change: (spec: JSONSchemaProps, x: { versions: Record<string, unknown>[]; spec: Record<string, unknown> }) => void = () => {},
): XrdLike {
  const spec: JSONSchemaProps = {
    type: 'object',
    required: ['plan'],
    properties: {
      plan: { type: 'string', enum: ['small', 'big'] },
      replicas: { type: 'integer', minimum: 1, maximum: 5 },
      name: { type: 'string', pattern: '^[a-z]+$', maxLength: 20 },
      labels: { type: 'object', additionalProperties: { type: 'string' } },
      users: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
      extra: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
    },
    'x-kubernetes-validations': [{ rule: 'self.replicas >= 1', message: 'at least one' }],
  };
  const xrdSpec: Record<string, unknown> = {
    group: 'anynines.com',
    names: { kind: 'XKafkaInstance' },
    claimNames: { kind: 'KafkaInstance' },
  };
  const versions: Record<string, unknown>[] = [
    {
      name: 'v1',
      served: true,
      referenceable: true,
      schema: {
        openAPIV3Schema: {
          type: 'object',
          properties: { spec, status: { type: 'object', properties: { phase: { type: 'string' }, port: { type: 'integer' } } } },
        },
      },
    },
  ];
  change(spec, { versions, spec: xrdSpec });
  return { metadata: { name: 'xkafkainstances.anynines.com' }, spec: { ...xrdSpec, versions } as unknown as XrdLike['spec'] };
}
const status = (x: { versions: Record<string, unknown>[] }) =>
  (x.versions[0] as { schema: { openAPIV3Schema: { properties: { status: JSONSchemaProps } } } }).schema.openAPIV3Schema.properties.status;
const breaks = (after: XrdLike, before = api()) => breakingChanges([before], [after]).map((b) => `${b.rule} ${b.version} ${b.field}`);

describe('the breaking-change guard', () => {
  // One fixture per rule: the change, and the break it is reported as (rule, version, field).
  const refused: [
    string,
    (s: JSONSchemaProps, x: { versions: Record<string, unknown>[]; spec: Record<string, unknown> }) => void,
    string[],
  ][] = [
    ['a removed field', (s) => delete s.properties!.name, ['field-removed v1 spec.name']],
    [
      'a field renamed (removed, then added)',
      (s) => ((s.properties!.title = s.properties!.name!), delete s.properties!.name),
      ['field-removed v1 spec.name'],
    ],
    ['a removed field of list items', (s) => delete s.properties!.users!.items!.properties!.name, ['field-removed v1 spec.users[].name']],
    ['a type change', (s) => (s.properties!.replicas = { type: 'string' }), ['type-changed v1 spec.replicas']],
    [
      'a map value type change',
      (s) => (s.properties!.labels!.additionalProperties = { type: 'integer' }),
      ['type-changed v1 spec.labels.*'],
    ],
    ['a narrowed enum', (s) => (s.properties!.plan!.enum = ['small']), ['enum-narrowed v1 spec.plan']],
    [
      'an enum where there was none',
      (s) => (s.properties!.users!.items!.properties!.name!.enum = ['a']),
      ['enum-narrowed v1 spec.users[].name'],
    ],
    ['a changed pattern', (s) => (s.properties!.name!.pattern = '^[a-z]{2,}$'), ['pattern-narrowed v1 spec.name']],
    ['a new format', (s) => (s.properties!.name!.format = 'date-time'), ['pattern-narrowed v1 spec.name']],
    ['a raised minimum', (s) => (s.properties!.replicas!.minimum = 2), ['bound-narrowed v1 spec.replicas']],
    ['a lowered maxLength', (s) => (s.properties!.name!.maxLength = 10), ['bound-narrowed v1 spec.name']],
    ['a new maxItems', (s) => (s.properties!.users!.maxItems = 3), ['bound-narrowed v1 spec.users']],
    [
      'a new required field without a default',
      (s) => ((s.properties!.zone = { type: 'string' }), s.required!.push('zone')),
      ['required-added v1 spec.zone'],
    ],
    [
      'a new validation rule',
      (s) => s['x-kubernetes-validations']!.push({ rule: 'self.replicas <= 3', message: 'at most three' }),
      ['rule-added v1 spec'],
    ],
    [
      'a changed validation rule',
      (s) => (s['x-kubernetes-validations']![0] = { rule: 'self.replicas >= 2', message: 'at least one' }),
      ['rule-added v1 spec'],
    ],
    [
      'unknown fields no longer kept',
      (s) => delete s.properties!.extra!['x-kubernetes-preserve-unknown-fields'],
      ['unknown-fields-pruned v1 spec.extra'],
    ],
    ['a removed status field', (_, x) => delete status(x).properties!.port, ['field-removed v1 status.port']],
    ['a status type change', (_, x) => (status(x).properties!.port = { type: 'string' }), ['type-changed v1 status.port']],
    ['a removed version objects are stored in', (_, x) => (x.versions[0] = { ...x.versions[0], name: 'v2' }), ['version-removed v1 ']],
    ['a version no longer served', (_, x) => (x.versions[0]!.served = false), ['version-removed v1 ']],
    ['a changed claim kind', (_, x) => (x.spec.claimNames = { kind: 'Kafka' }), ['identity-changed  ']],
    ['a changed scope', (_, x) => (x.spec.scope = 'Namespaced'), ['identity-changed  ']],
  ];
  for (const [what, change, expected] of refused)
    it(`refuses ${what}`, () => {
      expect(breaks(api(change))).toEqual(expected);
    });

  it('refuses a removed API, and a served version removed before it was deprecated', () => {
    expect(breakingChanges([api()], []).map((b) => b.rule)).toEqual(['api-removed']);
    const twoVersions = (deprecated: boolean, keep: boolean) =>
      api((_, x) => {
        x.versions.push({ ...x.versions[0], name: 'v1beta1', referenceable: false, deprecated });
        if (!keep) x.versions.pop();
      });
    expect(breaks(twoVersions(false, false), twoVersions(false, true))).toEqual(['version-removed v1beta1 ']);
    // Deprecated first, not the storage version: it may go (its stored objects migrated, as the manual says).
    expect(breaks(twoVersions(true, false), twoVersions(true, true))).toEqual([]);
  });

  const allowed: [string, (s: JSONSchemaProps, x: { versions: Record<string, unknown>[]; spec: Record<string, unknown> }) => void][] = [
    ['a new optional field', (s) => (s.properties!.zone = { type: 'string' })],
    ['a new required field with a default', (s) => ((s.properties!.zone = { type: 'string', default: 'a' }), s.required!.push('zone'))],
    ['an enum value more', (s) => s.properties!.plan!.enum!.push('huge')],
    ['a bound dropped or widened', (s) => (delete s.properties!.replicas!.minimum, (s.properties!.name!.maxLength = 40))],
    ['a pattern dropped', (s) => delete s.properties!.name!.pattern],
    ['an integer that may now be any number', (s) => (s.properties!.replicas!.type = 'number')],
    ['a rule dropped, a description changed', (s) => (delete s['x-kubernetes-validations'], (s.description = 'new words'))],
    ['a narrowed status (the control plane writes it)', (_, x) => (status(x).properties!.phase!.enum = ['Ready'])],
    ['a new version beside the stored one', (_, x) => x.versions.push({ ...x.versions[0], name: 'v2', referenceable: false })],
  ];
  for (const [what, change] of allowed)
    it(`allows ${what}`, () => {
      expect(breaks(api(change))).toEqual([]);
    });

  it('says per break the API, version, field, what changed and the fix', () => {
    const [b] = breakingChanges([api()], [api((s) => (s.properties!.plan!.enum = ['small']))]);
    expect(formatBreak(b!)).toBe(
      `xkafkainstances.anynines.com (KafkaInstance) v1 spec.plan: it no longer takes "big"; ${FIXES['enum-narrowed' satisfies BreakRule]}`,
    );
  });
});
