import { describe, expect, it } from 'vitest';
import { KEPT_ANNOTATION, type VersionConversion } from '../../../lib/conversion';
import { EXPORT_CONVERSION_ANNOTATION, type APIServiceExport } from '../../../exports/bind-api';
import type { Obj, ResourceRef } from '../../kube/objects';
import { sidesOf, upstreamVersionOf } from './conversion';

const conversions: VersionConversion[] = [
  { older: 'v1', newer: 'v2', moved: [{ older: 'spec.instance', newer: 'spec.instanceRef' }], removed: ['spec.note'] },
  { older: 'v2', newer: 'v3', added: [{ newer: 'spec.retention', default: '7d' }] },
];
const exportWith = (annotation?: string): APIServiceExport =>
  ({
    metadata: {
      name: 'backups.example.com',
      namespace: 'cluster-x',
      ...(annotation ? { annotations: { [EXPORT_CONVERSION_ANNOTATION]: annotation } } : {}),
    },
    spec: {},
  }) as APIServiceExport;
const annotated = (storageVersion: unknown, c: unknown = conversions) => exportWith(JSON.stringify({ storageVersion, conversions: c }));

describe('upstreamVersionOf', () => {
  it('is the storage version and the conversions for an app cluster on another version; nothing where there is nothing to convert', () => {
    expect(upstreamVersionOf(annotated('v3'), 'v1')).toEqual({ version: 'v3', conversions });
    expect(upstreamVersionOf(annotated('v3'), 'v3')).toBeUndefined();
    expect(upstreamVersionOf(exportWith(), 'v1')).toBeUndefined();
  });

  it.each([
    ['not JSON', exportWith('{'), /is not JSON/],
    ['no storage version', annotated(undefined), /names no storageVersion/],
    ['a storage version that is none', annotated('latest'), /names no storageVersion/],
    ['no conversions', annotated('v3', 'all'), /has no list of conversions/],
    [
      'a conversion of a field outside spec and status',
      annotated('v2', [{ older: 'v1', newer: 'v2', removed: ['metadata.labels'] }]),
      /cannot be used.*metadata\.labels/,
    ],
    ['conversions that skip a version', annotated('v3', [conversions[0], { ...conversions[1], older: 'v9' }]), /do not follow each other/],
    ['a version the conversions do not reach', annotated('v4'), /does not convert v4 \(its versions: v1, v2, v3\)/],
  ])('names the export and the annotation for %s', (_what, exp, problem) => {
    const read = () => upstreamVersionOf(exp, 'v1');
    expect(read).toThrow(/^APIServiceExport cluster-x\/backups\.example\.com: annotation klutch-kit\.anynines\.com\/conversion /);
    expect(read).toThrow(problem);
  });
});

describe('sidesOf', () => {
  const resource: ResourceRef = { group: 'example.com', version: 'v1', resource: 'backups', kind: 'Backup', namespaced: true };
  const claim: Obj = {
    apiVersion: 'example.com/v1',
    kind: 'Backup',
    metadata: { name: 'nightly', namespace: 'p' },
    spec: { instance: 'pg', note: 'mine' },
  };

  it('converts spec up to the storage version and status down to the app cluster version, through every step', () => {
    const sides = sidesOf(resource, { version: 'v3', conversions });
    expect(sides.provider).toEqual({ ...resource, version: 'v3' });
    const up = sides.toProvider(claim);
    expect(up).toEqual({
      apiVersion: 'example.com/v3',
      kind: 'Backup',
      metadata: { name: 'nightly', namespace: 'p', annotations: { [KEPT_ANNOTATION]: JSON.stringify({ 'spec.note': 'mine' }) } },
      spec: { instanceRef: 'pg', retention: '7d' },
    });
    const down = sides.toConsumer({ ...up, status: { phase: 'Ready' } });
    expect(down.apiVersion).toBe('example.com/v1');
    expect(down.spec).toEqual(claim.spec);
    expect(down.status).toEqual({ phase: 'Ready' });
  });

  it('leaves objects as they are where the control plane stores the app cluster version', () => {
    const sides = sidesOf(resource, undefined);
    expect(sides.provider).toBe(resource);
    expect(sides.toProvider(claim)).toBe(claim);
    expect(sides.toConsumer(claim)).toBe(claim);
  });
});
