import { describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { Labels } from '../labels';
import { isKlutchClusterNamespace } from './klutch-adoption';

const ns = (name: string, annotations: Record<string, string> = {}, labels: Record<string, string> = {}, deleting = false) => ({
  metadata: { name, annotations, labels, ...(deleting ? { deletionTimestamp: new Date() } : {}) },
});
const identity = { [Annotations.identity]: 'alice#abc123' };

describe('isKlutchClusterNamespace', () => {
  it.each([
    { reason: "Klutch's cluster namespace under our prefix", o: ns('cluster-x7k2p', identity), want: true },
    { reason: 'another prefix is another backend', o: ns('other-x7k2p', identity), want: false },
    { reason: 'the prefix must be followed by a dash', o: ns('clusterx7k2p', identity), want: false },
    { reason: 'no identity annotation: not a cluster namespace', o: ns('cluster-x7k2p'), want: false },
    { reason: 'already ours', o: ns('cluster-x7k2p', identity, { [Labels.identityHash]: 'h' }), want: false },
    { reason: 'being deleted', o: ns('cluster-x7k2p', identity, {}, true), want: false },
  ])('$reason → $want', ({ o, want }) => {
    expect(isKlutchClusterNamespace(o, 'cluster')).toBe(want);
  });
});
