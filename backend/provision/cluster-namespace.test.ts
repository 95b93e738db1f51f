import type { V1Namespace } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { Labels } from '../labels';
import { derivedNamespaceName, findClusterNamespace, identityHash, settle } from './cluster-namespace';

const ns = (name: string, identity: string, o: { at?: string; deleting?: boolean } = {}): V1Namespace => ({
  metadata: {
    name,
    creationTimestamp: (o.at ?? '2026-01-01T12:00:00Z') as never,
    annotations: { [Annotations.identity]: identity },
    labels: { [Labels.identityHash]: identityHash(identity) },
    ...(o.deleting ? { deletionTimestamp: new Date() } : {}),
  },
});

describe('derivedNamespaceName', () => {
  it('is the prefix and five characters of the identity’s hash, in the alphabet generateName uses: one name per identity', () => {
    const a = derivedNamespaceName('cluster', 'alice#c1');
    expect(a).toMatch(/^cluster-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    expect(derivedNamespaceName('cluster', 'alice#c1')).toBe(a);
    expect(derivedNamespaceName('cluster', 'alice#c2')).not.toBe(a);
  });
});

describe('findClusterNamespace', () => {
  it('finds the identity’s live namespace in the cache, the oldest of two (Klutch’s racing binds), never a terminating one', () => {
    const cache = (list: V1Namespace[]) => ({ clusterNamespaces: () => list, foreignNamespaces: () => [] });
    const old = ns('cluster-old', 'alice#c1', { at: '2026-01-01T11:00:00Z' });
    const young = ns('cluster-young', 'alice#c1');
    expect(findClusterNamespace(cache([young, old, ns('cluster-bob', 'bob#c1')]), 'alice#c1')?.metadata?.name).toBe('cluster-old');
    expect(findClusterNamespace(cache([ns('cluster-gone', 'alice#c1', { deleting: true })]), 'alice#c1')).toBeUndefined();
    // The identity is compared, not only its hash label.
    const forged = { ...young, metadata: { ...young.metadata, annotations: { [Annotations.identity]: 'mallory#c1' } } };
    expect(findClusterNamespace(cache([forged]), 'alice#c1')).toBeUndefined();
  });
});

describe('settle: the list after a create', () => {
  const mine = ns('cluster-new', 'alice#c3', { at: '2026-01-01T12:00:05Z' });

  it('keeps the new namespace while the subject is within the limit; other subjects do not count', () => {
    const theirs = [ns('cluster-a', 'alice#c1'), ns('cluster-b', 'alice#c2'), mine, ns('cluster-x', 'bob#c1')];
    expect(settle(mine, theirs, 'alice#c3', 3)).toEqual({ keep: true });
    expect(settle(mine, theirs, 'alice#c3')).toEqual({ keep: true });
  });

  it('refuses one more than the limit, counting the new one even when the list missed it; terminating ones do not count', () => {
    const theirs = [ns('cluster-a', 'alice#c1'), ns('cluster-b', 'alice#c2')];
    expect(settle(mine, theirs, 'alice#c3', 2)).toEqual({ keep: false, refuse: true });
    expect(settle(mine, [...theirs, mine], 'alice#c3', 2)).toEqual({ keep: false, refuse: true });
    expect(settle(mine, [theirs[0]!, ns('cluster-b', 'alice#c2', { deleting: true }), mine], 'alice#c3', 2)).toEqual({ keep: true });
  });

  it('two binds racing for the last place: each sees the other, so neither is admitted past the limit', () => {
    const a = ns('cluster-aaaaa', 'alice#c3');
    const b = ns('cluster-bbbbb', 'alice#c4');
    const before = [ns('cluster-a', 'alice#c1')];
    expect(settle(a, [...before, a, b], 'alice#c3', 2)).toEqual({ keep: false, refuse: true });
    expect(settle(b, [...before, a, b], 'alice#c4', 2)).toEqual({ keep: false, refuse: true });
    // One that listed before the other's create committed keeps its place; the other sees both and goes.
    expect(settle(a, [...before, a], 'alice#c3', 2)).toEqual({ keep: true });
  });

  it('gives way to an older namespace of the same identity (the name was taken, a cache lagged); equal times go by name', () => {
    const older = ns('cluster-zzzzz', 'alice#c3', { at: '2026-01-01T12:00:00Z' });
    expect(settle(mine, [older, mine], 'alice#c3', 1)).toEqual({ keep: false, use: older });
    const twin = ns('cluster-aaaaa', 'alice#c3', { at: '2026-01-01T12:00:05Z' });
    expect(settle(mine, [twin, mine], 'alice#c3')).toEqual({ keep: false, use: twin });
    expect(settle(twin, [twin, mine], 'alice#c3')).toEqual({ keep: true });
  });
});
