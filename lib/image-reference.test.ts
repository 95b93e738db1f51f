import { describe, expect, it } from 'vitest';
import { mirrored } from './image-reference';

describe('mirrored', () => {
  it.each([
    {
      reason: 'a registry host with a dot is replaced',
      ref: 'xpkg.crossplane.io/klutch-kit/function-dataservices:v0.1.0',
      want: 'r:5000/klutch-kit/function-dataservices:v0.1.0',
    },
    { reason: 'a registry with a port is replaced', ref: '10.0.0.1:5000/a/b:v1', want: 'r:5000/a/b:v1' },
    { reason: 'localhost is a registry', ref: 'localhost/pause:3.10', want: 'r:5000/pause:3.10' },
    { reason: 'a Docker Hub path keeps its first component', ref: 'library/busybox:1.35', want: 'r:5000/library/busybox:1.35' },
    { reason: 'a single name has no registry', ref: 'busybox:1.35', want: 'r:5000/busybox:1.35' },
  ])('$reason', ({ ref, want }) => {
    expect(mirrored('r:5000', ref)).toBe(want);
  });
});
