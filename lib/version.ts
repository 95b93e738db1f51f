/**
 * The release this tree is (issue 37): the one place its version is written. package.json's version is the same, and
 * every image tag, package tag, default reference and `version` output is made from it here; test/repo/version.test.ts
 * fails on the version written anywhere else in shipped code.
 */
export const VERSION = 'v0.1.0';

/** The project's source repository, where each release is tagged and its archives are published. */
export const RELEASE_SOURCE = 'https://github.com/klutch-kit/klutch-kit';

/** The project's license (package.json, LICENSE), as package metadata names it. */
const LICENSE = 'Apache-2.0';

/**
 * The `meta.crossplane.io` annotations every Crossplane package of this release carries (Crossplane's package metadata
 * conventions; Upbound's marketplace shows them): who maintains it, its source without the scheme, its license.
 */
export function packageAnnotations(description: string): Record<string, string> {
  return {
    'meta.crossplane.io/maintainer': 'klutch-kit',
    'meta.crossplane.io/source': RELEASE_SOURCE.replace(/^https:\/\//, ''),
    'meta.crossplane.io/license': LICENSE,
    'meta.crossplane.io/description': description,
  };
}

/** A file of this release's source, at an anchor if given: a manual page as an operator reads it online. */
export function releaseDoc(path: string, anchor?: string): string {
  return `${RELEASE_SOURCE}/blob/${VERSION}/${path}${anchor ? `#${anchor}` : ''}`;
}

/** Where a release's images and Crossplane packages are published unless an operator says otherwise. */
export const DEFAULT_IMAGE_REGISTRY = 'ghcr.io/klutch-kit';
export const DEFAULT_PACKAGE_REGISTRY = 'xpkg.crossplane.io/klutch-kit';

/**
 * The registry this build was made for: `npm run release -- --registry <r>` builds every bundle with it (esbuild's
 * define, scripts/bundle.mjs), so the backend, the konnector's installers and synth's output name the release's own
 * images and packages. Unset (tests, a plain `npm run synth`): the public defaults.
 */
declare const KLUTCH_KIT_RELEASE_REGISTRY: string | undefined;
const BUILT_FOR = typeof KLUTCH_KIT_RELEASE_REGISTRY === 'string' ? KLUTCH_KIT_RELEASE_REGISTRY : undefined;
const RELEASE_IMAGE_REGISTRY = BUILT_FOR ?? DEFAULT_IMAGE_REGISTRY;
const RELEASE_PACKAGE_REGISTRY = BUILT_FOR ?? DEFAULT_PACKAGE_REGISTRY;

/** The image each deployable (synth/deployables.ts) is published as, below the release's image registry. */
export const DEPLOYABLE_IMAGE_NAMES: Readonly<Record<string, string>> = {
  backend: 'bind-backend',
  konnector: 'konnector',
  function: 'function-dataservices-runtime',
  'kubectl-bind': 'kubectl-bind',
  conversion: 'conversion-server',
};

/** `ghcr.io/klutch-kit/<name>:<version>`: the image of a deployable of this release. */
export function releaseImage(name: string): string {
  return `${RELEASE_IMAGE_REGISTRY}/${name}:${VERSION}`;
}

/**
 * The konnector image the backend and `kubectl bind` install: the release's, pinned by digest in a release (which
 * pushes the konnector's image before it bundles the backend and the plugin, scripts/bundle.mjs), by tag otherwise.
 */
declare const KLUTCH_KIT_RELEASE_KONNECTOR_DIGEST: string | undefined;
export const KONNECTOR_IMAGE =
  releaseImage(DEPLOYABLE_IMAGE_NAMES.konnector as string) +
  (typeof KLUTCH_KIT_RELEASE_KONNECTOR_DIGEST === 'string' ? `@${KLUTCH_KIT_RELEASE_KONNECTOR_DIGEST}` : '');

/** `xpkg.crossplane.io/klutch-kit/<name>:<version>`: a Crossplane package of this release. */
export function releasePackage(name: string): string {
  return `${RELEASE_PACKAGE_REGISTRY}/${name}:${VERSION}`;
}

/**
 * On a ClusterBinding: the release of the backend that made or last reconciled it. A konnector newer than that says
 * so on its bindings (docs/upgrading.md, "What runs with what"); without it (Klutch's backend, or a backend of ours
 * older than the check) nothing is compared.
 */
export const BACKEND_VERSION_ANNOTATION = 'klutch-kit.anynines.com/backend-version';
