import { describe, expect, it } from 'vitest';
import { checksumsText, imagesText, pinKustomizeImages, pinned, pinnedPackage, pinReferences, referencesIn } from './references';
import { pinChartValues } from './publish';

const D1 = `sha256:${'1'.repeat(64)}`;
const D2 = `sha256:${'2'.repeat(64)}`;
const REG = 'registry.example.com:5000/platform';

describe('pinning', () => {
  const pins = new Map([
    [`${REG}/bind-backend:v0.1.0`, pinned(`${REG}/bind-backend:v0.1.0`, D1)],
    [`${REG}/konnector:v0.1.0`, pinned(`${REG}/konnector:v0.1.0`, D2)],
  ]);

  it('pins each whole reference of ours, and leaves longer names, pinned ones and upstream ones alone', () => {
    const text = [
      `image: ${REG}/bind-backend:v0.1.0`,
      `image: "${REG}/konnector:v0.1.0"`,
      `image: ${REG}/konnector:v0.1.0-rc.1`,
      `image: ${REG}/konnector:v0.1.0@${D1}`,
      `image: ${REG}/bind-backend:v0.1.0/extra`,
      'package: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1',
    ].join('\n');
    expect(pinReferences(text, pins).split('\n')).toEqual([
      `image: ${REG}/bind-backend:v0.1.0@${D1}`,
      `image: "${REG}/konnector:v0.1.0@${D2}"`,
      `image: ${REG}/konnector:v0.1.0-rc.1`,
      `image: ${REG}/konnector:v0.1.0@${D1}`,
      `image: ${REG}/bind-backend:v0.1.0/extra`,
      'package: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1',
    ]);
  });

  it("pins a Crossplane package by its digest alone: a pinned package's version is the digest its dependents name", () => {
    expect(pinnedPackage(`${REG}/function-dataservices:v0.1.0`, D1)).toBe(`${REG}/function-dataservices@${D1}`);
    // A registry's port is not a tag.
    expect(pinnedPackage(`${REG}/function-dataservices`, D1)).toBe(`${REG}/function-dataservices@${D1}`);
    expect(() => pinnedPackage(`${REG}/f:v1`, 'sha256:abc')).toThrow(/is not a sha256 digest/);
  });

  it('refuses a digest that is not sha256', () => {
    expect(() => pinned('r.example.com/x:v1', 'sha256:abc')).toThrow(/r.example.com\/x:v1: "sha256:abc" is not a sha256 digest/);
  });

  it("adds the digest to the kustomization's images knob of our image, after its other keys", () => {
    const k = [
      'images:',
      `  - name: ${REG}/bind-backend`,
      '    newTag: v0.1.0',
      '  - name: other.example.com/x',
      '    newTag: v2',
      'replicas: []',
    ].join('\n');
    expect(pinKustomizeImages(k, new Map([[`${REG}/bind-backend`, D1]])).split('\n')).toEqual([
      'images:',
      `  - name: ${REG}/bind-backend`,
      '    newTag: v0.1.0',
      `    digest: ${D1}`,
      '  - name: other.example.com/x',
      '    newTag: v2',
      'replicas: []',
    ]);
  });

  it("pins the chart's image values of ours as <tag>@<digest>, keeping comments and other images", () => {
    const values = [
      '# knobs',
      'backend:',
      '  image:',
      `    repository: ${REG}/bind-backend`,
      '    tag: v0.1.0 # the release',
      'sidecar:',
      '  image: {repository: other.example.com/x, tag: v2}',
      '',
    ].join('\n');
    const out = pinChartValues(values, new Map([[`${REG}/bind-backend`, D1]]));
    expect(out).toContain('# knobs');
    expect(out).toContain(`tag: v0.1.0@${D1} # the release`);
    expect(out).toContain('tag: v2');
  });
});

describe('images.txt', () => {
  it('lists what the release made, pinned, then what the bundles name from upstream and the constraints, for a mirroring tool', () => {
    const text = imagesText(
      'v0.1.0',
      [
        { ref: `${REG}/konnector:v0.1.0@${D2}`, kind: 'image', source: 'release' },
        { ref: `${REG}/bind-backend:v0.1.0@${D1}`, kind: 'image', source: 'release' },
        { ref: `${REG}/function-dataservices:v0.1.0@${D1}`, kind: 'package', source: 'release' },
        { ref: 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1', kind: 'package', source: 'upstream' },
        { ref: 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1', kind: 'package', source: 'upstream' },
      ],
      ['xpkg.upbound.io/anynines/provider-anynines >=v1.5.0, <v2.0.0'],
    );
    const refs = text.split('\n').filter((l) => l && !l.startsWith('#'));
    expect(refs).toEqual([
      `${REG}/bind-backend:v0.1.0@${D1}`,
      `${REG}/konnector:v0.1.0@${D2}`,
      `${REG}/function-dataservices:v0.1.0@${D1}`,
      'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1',
    ]);
    expect(text).toContain('# xpkg.upbound.io/anynines/provider-anynines >=v1.5.0, <v2.0.0');
  });

  it('finds the image and package references a YAML names, not other values with slashes', () => {
    const yaml = [
      'spec:',
      '  package: xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1',
      '  containers:',
      `    - image: ${REG}/konnector:v0.1.0`,
      '  dependsOn:',
      '    - provider: xpkg.upbound.io/anynines/provider-anynines',
      '  homepage: https://example.com/x',
      '  image: nginx',
    ].join('\n');
    expect(referencesIn(yaml)).toEqual([
      { ref: 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes:v1.3.1', kind: 'package' },
      { ref: `${REG}/konnector:v0.1.0`, kind: 'image' },
      { ref: 'xpkg.upbound.io/anynines/provider-anynines', kind: 'package' },
    ]);
  });
});

describe('SHA256SUMS', () => {
  it('is what sha256sum --check reads: <hex>, two spaces, the path, sorted', () => {
    expect(
      checksumsText(
        new Map([
          ['b/x', 'bb'],
          ['a', 'aa'],
        ]),
      ),
    ).toBe('aa  a\nbb  b/x\n');
  });
});
