/** `npm run release`'s flags: one table (lib/flags.ts) for parsing and --help; docs/releases.md lists the same. */
import { parsePlatforms, PLUGIN_PLATFORMS, platformName, type PluginPlatform } from '../cli/deploy/platforms';
import { flagHelp, HELP_FLAG, parseFlags, UsageError, type FlagTable } from '../lib/flags';
import { RELEASE_SOURCE, VERSION } from '../lib/version';

export const RELEASE_FLAGS: FlagTable = {
  flags: [
    {
      name: 'registry',
      arg: 'host[:port]/path',
      help: 'where the release is published and what its bundles name: every image, package and the chart go below it (required)',
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
      arg: 'host[:port]/path',
      optional: true,
      help: 'where this machine reaches the registry, when it is not the name clusters pull from (a port-forward, a bastion); default: --registry',
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
  ],
};

export const RELEASE_HELP = `npm run release -- --registry <host[:port]/path> [options]

Builds and publishes a release of this tree: synthesizes it for the registry, builds the images of the bind backend,
the konnector, the composition function's runtime and kubectl-bind, pushes them, builds and pushes the Function and
the Configuration packages and the Helm chart (OCI), builds the plugin's executables and krew manifests, and writes the
install bundles with every image pinned by digest, images.txt (for mirroring), SHA256SUMS and release.json. Needs
root (buildah), Go (crank, helm, quill) and Debian's skopeo, installed on first use. docs/releases.md says more.

Options:
${flagHelp(RELEASE_FLAGS)}
${HELP_FLAG}
`;

export interface ReleaseFlags {
  readonly registry: string;
  readonly pushRegistry: string;
  readonly version: string;
  readonly out: string;
  readonly caFile?: string;
  readonly authFile?: string;
  readonly platforms: readonly PluginPlatform[];
  readonly downloadUrl: string;
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
  if (!given) throw new UsageError('--registry is required: where the release is published, e.g. --registry registry.example.com/platform');
  const registry = registryFlag('registry', given);
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
  return {
    registry,
    pushRegistry: f.value('push-registry') ? registryFlag('push-registry', f.value('push-registry')!) : registry,
    version: VERSION,
    out,
    ...(f.value('ca-file') ? { caFile: f.value('ca-file') } : {}),
    ...(f.value('authfile') ? { authFile: f.value('authfile') } : {}),
    platforms: parsePlatforms('--platforms', f.value('platforms') ?? 'all'),
    downloadUrl,
  };
}
