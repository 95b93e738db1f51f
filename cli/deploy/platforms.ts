/**
 * The platforms kubectl-bind ships a single executable for (Node inside, for users without Node), as krew's
 * selectors name them, and what such an executable is; `npm run plugin-executables` builds them (release/,
 * docs/decisions/plugin-executables.md) and the krew package lists them (./krew.ts).
 */
import { UsageError } from '../../lib/flags';

/** A platform as krew's selectors name it (Go's GOOS and GOARCH). */
export interface PluginPlatform {
  readonly os: 'linux' | 'darwin' | 'windows';
  readonly arch: 'amd64' | 'arm64';
}

/** Every platform an executable is built for, in the order krew's manifest lists them. */
export const PLUGIN_PLATFORMS: readonly PluginPlatform[] = [
  { os: 'linux', arch: 'amd64' },
  { os: 'linux', arch: 'arm64' },
  { os: 'darwin', arch: 'amd64' },
  { os: 'darwin', arch: 'arm64' },
  { os: 'windows', arch: 'amd64' },
  { os: 'windows', arch: 'arm64' },
];

/** `linux/amd64`. */
export const platformName = (p: PluginPlatform): string => `${p.os}/${p.arch}`;
/** The executable's file name: kubectl runs `kubectl-bind` (`kubectl-bind.exe` on Windows). */
export const executableName = (p: PluginPlatform): string => (p.os === 'windows' ? 'kubectl-bind.exe' : 'kubectl-bind');

/** The platforms `--plugin-executables` names: `all`, or a comma-separated list of `<os>/<arch>`. */
export function parsePlatforms(flag: string, value: string): PluginPlatform[] {
  if (value.trim() === 'all') return [...PLUGIN_PLATFORMS];
  const names = value.split(',').map((s) => s.trim());
  const known = PLUGIN_PLATFORMS.map(platformName);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0 || names.length === 0) {
    throw new UsageError(`${flag} ${JSON.stringify(value)}: ${unknown.join(', ') || 'no platform'} is not one of all, ${known.join(', ')}`);
  }
  return PLUGIN_PLATFORMS.filter((p) => names.includes(platformName(p)));
}

export interface BuiltExecutable {
  readonly platform: PluginPlatform;
  /** The executable. */
  readonly file: string;
  /** Node's LICENSE (and its bundled dependencies' notices), shipped beside the executable. */
  readonly nodeLicense: string;
}
