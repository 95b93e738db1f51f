import type { KubernetesObject } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { SYNCER_FIELD_MANAGER } from '../../exports/bind-api';
import { LAST_APPLIED, trimForCache } from './trim';

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
    expect(trimForCache()({ apiVersion: 'v1', kind: 'X' })).toEqual({ apiVersion: 'v1', kind: 'X' });
  });
});
