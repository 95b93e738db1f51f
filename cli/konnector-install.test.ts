import { describe, expect, it } from 'vitest';
import { imageVersion, konnectorManifests } from './konnector-install';
import { parseVersion } from '../lib/semver';

const kinds = (ms: ReturnType<typeof konnectorManifests>) => ms.map((m) => `${m.kind} ${m.metadata?.name ?? ''}`);
const grants = [{ group: 'anynines.com', resource: 'servicebindings', claimed: ['secrets' as const] }];

describe('imageVersion', () => {
  it("reads the tag's version, past a digest and a registry's port: a pinned older konnector is still older", () => {
    expect(imageVersion('ghcr.io/klutch-kit/konnector:v0.2.0')).toEqual(parseVersion('v0.2.0'));
    expect(imageVersion(`registry.example.com:5000/klutch/konnector:v0.1.0@sha256:${'a'.repeat(64)}`)).toEqual(parseVersion('v0.1.0'));
    expect(imageVersion(`registry.example.com:5000/klutch/konnector@sha256:${'a'.repeat(64)}`)).toBeUndefined();
    expect(imageVersion('registry.example.com:5000/konnector')).toBeUndefined();
  });
});

describe('konnectorManifests', () => {
  it('in klutch-bind, its own namespace: the Namespace with Pod Security labels and a namespace-wide default deny', () => {
    const ms = konnectorManifests({ namespace: 'klutch-bind', grants, konnector: true });
    const ns = ms.find((m) => m.kind === 'Namespace');
    expect(ns?.metadata?.labels?.['pod-security.kubernetes.io/enforce']).toBe('restricted');
    expect(kinds(ms)).toContain('NetworkPolicy default-deny');
  });

  it("in an app team's namespace: never relabels it nor denies its other workloads' traffic, still fences the konnector", () => {
    const ms = konnectorManifests({ namespace: 'team-a', grants, konnector: true });
    expect(ms.filter((m) => m.kind === 'Namespace')).toEqual([]);
    expect(kinds(ms)).not.toContain('NetworkPolicy default-deny');
    const own = ms.filter((m) => m.kind === 'NetworkPolicy');
    expect(own.length).toBeGreaterThan(0);
    expect(own.every((p) => (p as { spec?: { podSelector?: { matchLabels?: object } } }).spec?.podSelector?.matchLabels)).toBe(true);
  });

  it("pulls the konnector's image with the Secret given, and with none by default", () => {
    const pulled = (ms: ReturnType<typeof konnectorManifests>) =>
      (ms.find((m) => m.kind === 'Deployment') as { spec: { template: { spec: { imagePullSecrets?: unknown } } } }).spec.template.spec
        .imagePullSecrets;
    expect(pulled(konnectorManifests({ namespace: 'team-a', grants, konnector: true, imagePullSecret: 'team-mirror' }))).toEqual([
      { name: 'team-mirror' },
    ]);
    expect(pulled(konnectorManifests({ namespace: 'team-a', grants, konnector: true }))).toBeUndefined();
  });
});
