/**
 * What a release names, and how its bundles are pinned: pure functions of references and digests (release/publish.ts
 * does the pushing). docs/releases.md describes the layout.
 */
import { imageRepository } from '../lib/image-reference';
import { DEPLOYABLE_IMAGE_NAMES, VERSION } from '../lib/version';

/** The images a release publishes, by the deployable each is built from (synth/deployables.ts). */
export const RELEASE_IMAGES = DEPLOYABLE_IMAGE_NAMES;

/** The Crossplane packages a release publishes: the composition function (its runtime embedded) and the Configuration. */
export const RELEASE_PACKAGES = { function: 'function-dataservices', configuration: 'anynines-dataservices' } as const;

/** The Helm chart's repository below the registry: `helm install oci://<registry>/charts/klutch-kit`. */
export const CHART_REPOSITORY = 'charts';

/** `<registry>/<name>:<version>`. */
export const tagged = (registry: string, name: string, version: string = VERSION): string => `${registry}/${name}:${version}`;

/** `<repository>:<tag>@<digest>`: what the kubelet pulls by digest, with the version still readable. */
export function pinned(ref: string, digest: string): string {
  if (!/^sha256:[0-9a-f]{64}$/.test(digest)) throw new Error(`${ref}: "${digest}" is not a sha256 digest`);
  return `${ref}@${digest}`;
}

/**
 * `<repository>@<digest>`: a Crossplane package pinned. Crossplane's dependency resolution compares a package's
 * version with the constraints of the packages that depend on it, and a pinned package's version is its digest, so
 * the tag goes (a Configuration's dependsOn names the same digest: synth/package-meta.ts pinDependency).
 */
export function pinnedPackage(ref: string, digest: string): string {
  pinned(ref, digest); // the digest's form
  const repository = imageRepository(ref);
  if (!repository) throw new Error(`${ref}: not a package reference`);
  return `${repository}@${digest}`;
}

/**
 * Replaces each whole occurrence of a reference in `text` by its pinned form; a reference already followed by `@`
 * (pinned) or by more of a name (`:v1.2.3-rc`, `/sub`) is left alone.
 */
export function pinReferences(text: string, pins: ReadonlyMap<string, string>): string {
  let out = text;
  for (const [ref, pin] of pins) {
    const escaped = ref.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
    out = out.replace(new RegExp(`${escaped}(?![\\w.@:/-])`, 'g'), pin);
  }
  return out;
}

/**
 * The kustomization's `images:` knob for an image of ours gets the digest beside the tag (kustomize then writes
 * `<name>@<digest>`), so an operator's overlay that changes `newName` for a mirror keeps the pin.
 */
export function pinKustomizeImages(kustomization: string, digests: ReadonlyMap<string, string>): string {
  const lines = kustomization.split('\n');
  const out: string[] = [];
  for (let i = 0; i < lines.length; i++) {
    out.push(lines[i]!);
    const name = /^(\s*)- name: (\S+)\s*$/.exec(lines[i]!);
    const digest = name && digests.get(name[2]!);
    if (!name || !digest) continue;
    // Its other keys follow, indented two more than the dash; the digest goes after the last of them.
    const indent = `${name[1]}  `;
    while (i + 1 < lines.length && lines[i + 1]!.startsWith(indent) && !lines[i + 1]!.slice(indent.length).startsWith(' '))
      out.push(lines[++i]!);
    out.push(`${indent}digest: ${digest}`);
  }
  return out.join('\n');
}

/** One entry of images.txt. */
export interface ListedImage {
  /** What pulls it: `<repository>:<tag>@<digest>` for what the release made, the reference as written otherwise. */
  readonly ref: string;
  readonly kind: 'image' | 'package' | 'chart';
  /** Made by this release (pushed by it) or needed from upstream (mirror it too). */
  readonly source: 'release' | 'upstream';
}

/**
 * images.txt: one reference a line, what a mirroring tool (`skopeo copy`, `crane copy`, `oras copy`) reads, grouped
 * by what it is, with `#` comments. Upstream references are those the bundles name and this release did not make.
 */
export function imagesText(version: string, images: readonly ListedImage[], constraints: readonly string[] = []): string {
  const section = (title: string, list: readonly ListedImage[]) =>
    list.length ? [`# ${title}`, ...[...new Set(list.map((i) => i.ref))].sort(), ''] : [];
  const of = (source: ListedImage['source'], kind?: ListedImage['kind']) =>
    images.filter((i) => i.source === source && (kind === undefined || i.kind === kind));
  return [
    `# klutch-kit ${version}: every image, Crossplane package and chart its install names, for mirroring into a`,
    '# registry of your own (docs/releases.md). Made by this release, pinned by digest:',
    '',
    ...section('images', of('release', 'image')),
    ...section('Crossplane packages', of('release', 'package')),
    ...section('Helm chart', of('release', 'chart')),
    ...section('upstream, as the bundles name them (mirror these too for an air-gapped install)', of('upstream')),
    ...(constraints.length
      ? [
          '# upstream packages the Configuration depends on, by version constraint (mirror the versions you run):',
          ...constraints.map((c) => `# ${c}`),
          '',
        ]
      : []),
  ].join('\n');
}

/** The image and package references a YAML text names (`image:` and `package:` values, and dependsOn entries). */
export function referencesIn(text: string): { ref: string; kind: 'image' | 'package' }[] {
  const found: { ref: string; kind: 'image' | 'package' }[] = [];
  for (const m of text.matchAll(/^\s*-?\s*(image|package|provider|function|configuration):\s*["']?([a-z0-9][\w.:/@-]*)["']?\s*$/gm)) {
    const value = m[2]!;
    // A reference names a repository below a registry host (a dot or a port in its first part).
    if (!/^[^/]+[.:][^/]*\//.test(value)) continue;
    found.push({ ref: value, kind: m[1] === 'image' ? 'image' : 'package' });
  }
  return found;
}

/** SHA256SUMS: `<hex>  <path>` lines, as `sha256sum --check` reads them, sorted by path. */
export function checksumsText(sums: ReadonlyMap<string, string>): string {
  return `${[...sums]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([path, hex]) => `${hex}  ${path}`)
    .join('\n')}\n`;
}
