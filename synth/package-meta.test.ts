import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { pinDependency } from './package-meta';

const D = `sha256:${'a'.repeat(64)}`;
const FN = 'registry.example.com:5000/platform/function-dataservices';
const META = `apiVersion: meta.pkg.crossplane.io/v1
kind: Configuration
metadata:
  name: anynines-dataservices
  # kept: comments and the other dependencies
spec:
  crossplane:
    version: ">=v1.17.1"
  dependsOn:
    - provider: xpkg.upbound.io/anynines/provider-anynines
      version: ">=v1.5.0"
    - function: ${FN}
      version: ">=v0.1.0, <v1.0.0"
`;

describe('pinDependency', () => {
  it("names the digest as the dependency's version, and nothing else changes", () => {
    const pinned = pinDependency(META, FN, D);
    expect(pinned).toBe(META.replace('>=v0.1.0, <v1.0.0', D));
    expect((parse(pinned) as { spec: { dependsOn: { version: string }[] } }).spec.dependsOn.map((d) => d.version)).toEqual(['>=v1.5.0', D]);
  });

  it('fails for a package it does not depend on, or a digest that is not one, rather than pin nothing', () => {
    expect(() => pinDependency(META, `${FN}-other`, D)).toThrow(`no dependency on ${FN}-other to pin`);
    expect(() => pinDependency(META, FN, 'v0.1.0')).toThrow('"v0.1.0" is not a sha256 digest');
  });
});
