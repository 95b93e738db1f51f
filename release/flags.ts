/** `npm run release`'s flags: one table (lib/flags.ts) for parsing and --help; docs/releases.md lists the same. */
import { parsePlatforms, PLUGIN_PLATFORMS, platformName, type PluginPlatform } from '../cli/deploy/platforms';
import { flagHelp, HELP_FLAG, parseFlags, UsageError, type FlagTable } from '../lib/flags';
import { DEFAULT_IMAGE_REGISTRY, DEFAULT_PACKAGE_REGISTRY, RELEASE_SOURCE, VERSION } from '../lib/version';

export const RELEASE_FLAGS: FlagTable = {
  flags: [
    {
      name: 'registry',
      arg: 'host[:port]/path',
      optional: true,
      help: `where the release is published and what its bundles name: every image, package and the chart go below it (default: the project's, ${DEFAULT_IMAGE_REGISTRY} for images and the chart, ${DEFAULT_PACKAGE_REGISTRY} for packages)`,
    },
    {
      name: 'version',
      arg: 'vX.Y.Z',
      default: VERSION,
      help: "the release's version; refused unless it is this tree's (lib/version.ts and package.json), so a tag and its tree cannot disagree",
    },
    {
      name: 'out',
      arg: 'dir',
      default: 'dist-release/<version>',
      help: 'where the release is written (bundles, chart, plugin archives, images.txt, SHA256SUMS, release.json); must not exist or be empty',
    },
    {
      name: 'push-registry',
      arg: 'host[:port]',
      optional: true,
      help: 'push everything to this registry host instead, each under its own path (a mirror, a port-forward): the bundles still name --registry',
    },
    {
      name: 'ca-file',
      arg: 'file',
      optional: true,
      help: "the PEM of the CA of the registry's certificate, when the system's do not sign it",
    },
    {
      name: 'authfile',
      arg: 'file',
      optional: true,
      help: "the registry's credentials, as `docker login` writes them (default: theirs, ~/.docker/config.json)",
    },
    {
      name: 'crossplane',
      arg: 'v1|v2',
      default: 'v1',
      help: "the package target (npm run synth's --crossplane): v1, Klutch's claims, or v2, the v2-native package",
    },
    {
      name: 'platforms',
      arg: 'list',
      default: 'all',
      help: `the plugin's executables to build: all, or a comma-separated list of ${PLUGIN_PLATFORMS.map(platformName).join(', ')}`,
    },
    {
      name: 'download-url',
      arg: 'url',
      default: `${RELEASE_SOURCE}/releases/download/<version>`,
      help: "where the release's files will be downloadable: the krew manifests name the plugin's archives there",
    },
    {
      name: 'sbom',
      boolean: true,
      default: 'true',
      help: 'write the SBOM of each image (syft); --no-sbom leaves them out, for a mirror of a local demo (the sandbox makes one): a release that ships has them',
    },
  ],
};

export const RELEASE_HELP = `npm run release -- [--registry <host[:port]/path>] [options]

Builds and publishes a release of this tree: synthesizes it for the registry, builds the images of the bind backend,
the konnector, the composition function's runtime and kubectl-bind, pushes them, builds and pushes the Function and
the Configuration packages and the Helm chart (OCI), builds the plugin's executables and krew manifests, and writes the
install bundles with every image pinned by digest, an SBOM of each image (SPDX), images.txt (for mirroring),
SHA256SUMS and release.json. Needs root (buildah), Go (crank, helm, quill, syft) and Debian's skopeo, installed on
first use. docs/releases.md says more.

Options:
${flagHelp(RELEASE_FLAGS)}
${HELP_FLAG}
`;

export interface ReleaseFlags {
  /** Below which the images, packages and chart are named; undefined: the project's own registries. */
  readonly registry?: string;
  /** The registry host everything is pushed to under its own path; undefined: where each is named. */
  readonly pushHost?: string;
  readonly version: string;
  readonly out: string;
  readonly caFile?: string;
  readonly authFile?: string;
  readonly crossplane: 'v1' | 'v2';
  readonly platforms: readonly PluginPlatform[];
  readonly downloadUrl: string;
  /** Whether to write the SBOM of each image (release/sbom.ts). */
  readonly sbom: boolean;
}

/** A registry and repository path as image references begin: lower-case host (a dot, a port or localhost), no scheme. */
function registryFlag(flag: string, value: string): string {
  const fix = `give it as host[:port]/path, e.g. registry.example.com/platform`;
  if (/^[a-z]+:\/\//i.test(value)) throw new UsageError(`--${flag} "${value}" has a scheme: ${fix}`);
  const v = value.replace(/\/+$/, '');
  const [host, ...path] = v.split('/');
  if (!host || !/^(localhost|[a-z0-9-]+(\.[a-z0-9-]+)*)(:\d{1,5})?$/.test(host) || !(/[.:]/.test(host) || host === 'localhost'))
    throw new UsageError(`--${flag} "${value}" does not begin with a registry host (a name with a dot or a port): ${fix}`);
  for (const p of path)
    if (!/^[a-z0-9]+([._-][a-z0-9]+)*$/.test(p))
      throw new UsageError(`--${flag} "${value}": "${p}" is not a repository path component (lower-case letters, digits, . _ -): ${fix}`);
  return v;
}

/** Parses the release's command line; throws UsageError naming the flag and the fix. */
export function parseReleaseFlags(argv: readonly string[], env: NodeJS.ProcessEnv = {}): ReleaseFlags | 'help' {
  const f = parseFlags(RELEASE_FLAGS, argv, env);
  if (f.help) return 'help';
  const given = f.value('registry');
  const registry = given === undefined ? undefined : registryFlag('registry', given);
  const push = f.value('push-registry');
  if (push !== undefined && registryFlag('push-registry', push).includes('/'))
    throw new UsageError(
      `--push-registry "${push}" has a path: give the host only (host[:port]); each artifact keeps its own path below it`,
    );
  const version = f.value('version') ?? VERSION;
  if (version.replace(/^v?/, 'v') !== VERSION)
    throw new UsageError(
      `--version ${version}: this tree is ${VERSION} (lib/version.ts); to release ${version.replace(/^v?/, 'v')}, set it there and in package.json's version, commit, and run the release from that commit`,
    );
  for (const flag of ['ca-file', 'authfile'])
    if (f.value(flag) !== undefined && f.value(flag) === '') throw new UsageError(`--${flag} needs a file`);
  const downloadUrl = (f.value('download-url') ?? `${RELEASE_SOURCE}/releases/download/${VERSION}`).replace(/\/+$/, '');
  if (!/^https?:\/\/[^/]/.test(downloadUrl))
    throw new UsageError(`--download-url "${downloadUrl}" is not an http(s) URL: give where the release's files will be downloadable`);
  const out = f.value('out') ?? `dist-release/${VERSION}`;
  const crossplane = f.value('crossplane') ?? 'v1';
  if (crossplane !== 'v1' && crossplane !== 'v2') throw new UsageError(`--crossplane must be v1 or v2, not "${crossplane}"`);
  return {
    ...(registry ? { registry } : {}),
    ...(push ? { pushHost: registryFlag('push-registry', push) } : {}),
    version: VERSION,
    out,
    ...(f.value('ca-file') ? { caFile: f.value('ca-file') } : {}),
    ...(f.value('authfile') ? { authFile: f.value('authfile') } : {}),
    crossplane,
    platforms: parsePlatforms('--platforms', f.value('platforms') ?? 'all'),
    downloadUrl,
    sbom: f.value('sbom') !== 'false',
  };
}
