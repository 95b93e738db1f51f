import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { SYNCER_FIELD_MANAGER } from '../../exports/bind-api';
import { Interner, LAST_APPLIED, trimForCache } from './trim';

const own = { manager: SYNCER_FIELD_MANAGER, operation: 'Apply', fieldsV1: { f: 1 } };
const others = [
  { manager: 'kubectl', operation: 'Update', fieldsV1: { f: 2 } },
  { manager: SYNCER_FIELD_MANAGER, operation: 'Update', subresource: 'status', fieldsV1: { f: 3 } },
];
const obj = (annotations?: Record<string, string>): KubernetesObject => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: { name: 'pg', namespace: 'team-a', managedFields: [own, ...others] as any, ...(annotations ? { annotations } : {}) },
});

describe('trimForCache', () => {
  it.each([
    { name: 'drops managedFields', keepOwn: false, want: undefined },
    { name: "keeps only the konnector's own Apply entry with keepOwn", keepOwn: true, want: [own] },
  ])('$name', ({ keepOwn, want }) => {
    expect(trimForCache({ keepOwn })(obj()).metadata?.managedFields).toEqual(want);
  });

  it("drops kubectl's last-applied copy and keeps every other annotation", () => {
    const t = trimForCache()(obj({ [LAST_APPLIED]: '{"big":"copy"}', team: 'a', 'klutch.anynines.com/bound': 'x' }));
    expect(t.metadata?.annotations).toEqual({ team: 'a', 'klutch.anynines.com/bound': 'x' });
  });

  it('leaves no empty annotations behind, and an object without metadata alone', () => {
    expect(trimForCache()(obj({ [LAST_APPLIED]: '{}' })).metadata).not.toHaveProperty('annotations');
    expect(trimForCache<KubernetesObject>()({ apiVersion: 'v1', kind: 'X' })).toEqual({ apiVersion: 'v1', kind: 'X' });
  });
});

describe('Interner', () => {
  const claim = (i: number) =>
    JSON.parse(
      JSON.stringify({
        apiVersion: 'anynines.com/v1',
        kind: 'PostgresqlInstance',
        metadata: {
          name: `c-${i}`,
          namespace: 'team-a',
          uid: `uid-${i}`,
          resourceVersion: `${100 + i}`,
          creationTimestamp: `2026-11-25T18:00:0${i}Z`,
          labels: { team: 'a' },
        },
        spec: { plan: 'postgresql-single-nano', parameters: { maxConnections: 100, extensions: ['pgcrypto'] } },
        status: { conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: `2026-11-25T18:01:0${i}Z` }] },
      }),
    ) as KubernetesObject;

  it('leaves every value as it was', () => {
    const o = claim(1);
    const before = structuredClone(o);
    expect(trimForCache({ intern: true, interner: new Interner() })(o)).toEqual(before);
  });

  it('enters the repeated values once, and no name, uid, resource version or timestamp', () => {
    const interner = new Interner();
    const t = trimForCache({ intern: true, interner });
    for (let i = 0; i < 5; i++) t(claim(i));
    // anynines.com/v1, PostgresqlInstance, team-a, a, postgresql-single-nano, pgcrypto, Ready, True
    expect(interner.size).toBe(8);
  });

  it('is used only where asked for (not for CRDs and the other small caches)', () => {
    const interner = new Interner();
    trimForCache({ interner })(claim(1));
    expect(interner.size).toBe(0);
  });

  it('is bounded: no more than maxEntries strings, none longer than maxLength', () => {
    const interner = new Interner(3, 10);
    for (const s of ['a', 'b', 'c', 'd', 'a-string-longer-than-ten']) expect(interner.intern(s)).toBe(s);
    expect(interner.size).toBe(3);
  });
});
