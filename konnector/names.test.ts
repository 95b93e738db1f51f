import { describe, expect, it } from 'vitest';
import { BIND_API_VERSION, Kinds, type APIServiceNamespace } from '../exports/bind-api';
import { namespaceMap } from './names';

const sn = (name: string, namespace?: string, deleting = false): APIServiceNamespace => ({
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceNamespace,
  metadata: { name, namespace: 'cluster-x', ...(deleting ? { deletionTimestamp: '2025-01-01T00:00:00Z' } : {}) },
  spec: {},
  ...(namespace ? { status: { namespace } } : {}),
});

function mapOf(items: APIServiceNamespace[]) {
  return namespaceMap({ get: (n) => items.find((i) => i.metadata.name === n), list: () => items });
}

describe('namespaceMap', () => {
  it.each([
    ['no APIServiceNamespace', [], { state: 'missing' }],
    ['one without status', [sn('app')], { state: 'pending' }],
    ['one being deleted', [sn('app', 'cluster-x-app', true)], { state: 'pending' }],
    ['an assigned one', [sn('app', 'cluster-x-app')], { state: 'assigned', namespace: 'cluster-x-app' }],
  ])('maps a consumer namespace with %s', (_what, items, want) => {
    expect(mapOf(items).providerNamespace('app')).toEqual(want);
  });

  it('maps provider namespaces back, following changes of the list', () => {
    const items = [sn('app', 'cluster-x-app')];
    const m = mapOf(items);
    expect(m.consumerNamespace('cluster-x-app')).toBe('app');
    expect(m.consumerNamespace('cluster-x-other')).toBeUndefined();
    items.push(sn('other', 'cluster-x-other'));
    expect(m.consumerNamespace('cluster-x-other')).toBe('other');
    items.splice(0, 1);
    expect(m.consumerNamespace('cluster-x-app')).toBeUndefined();
  });
});
