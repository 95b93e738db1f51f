/**
 * The release the sandbox installs from: `npm run release` of this tree under the project's own names, pushed to
 * the run's registry as their mirror (`--push-registry`), as an operator without access to the public registries
 * mirrors a release (docs/releases.md). The plugin's executable for this machine only; `kubectl bind` runs the
 * release's plugin, which installs the release's konnector.
 */
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { PLUGIN_PLATFORMS } from '../cli/deploy/platforms';
import type { Registry } from '../harness/node/registry';
import { runCommand } from '../harness/cluster/processes';
import { sha256File } from '../lib/files';
import type { PublishedRelease } from '../harness/platform/platform-on-pods';
import { RELEASE_SOURCE, VERSION } from '../lib/version';
import { publishRelease } from '../release/publish';

export function releaseToMirror(
  dir: string,
  crossplane: 'v1' | 'v2',
  log: (line: string) => void,
): (registry: Pick<Registry, 'hostFromTest' | 'caFile'>) => Promise<PublishedRelease> {
  return async (registry) => {
    rmSync(dir, { recursive: true, force: true });
    const record = await publishRelease(
      {
        pushHost: registry.hostFromTest,
        caFile: registry.caFile,
        version: VERSION,
        out: dir,
        crossplane,
        platforms: PLUGIN_PLATFORMS.filter((p) => p.os === 'linux' && p.arch === 'amd64'),
        downloadUrl: `${RELEASE_SOURCE}/releases/download/${VERSION}`,
        // A local demo's mirror: the release test checks the SBOMs, which would add a syft scan per image here.
        sbom: false,
      },
      log,
    );
    return { dir, images: Object.values(record.images).map((i) => i.ref) };
  };
}

/** The release's folder below a sandbox folder. */
export const releaseDir = (sandboxDir: string): string => join(sandboxDir, 'release');

/**
 * The plugin as krew installs it from the release: its launcher archive checked against the release's SHA256SUMS and
 * unpacked; the path of the bundle in it.
 */
export async function releasePlugin(release: string, into: string): Promise<string> {
  const archive = join('kubectl-bind', 'kubectl-bind.tar.gz');
  const sums = new Map(
    readFileSync(join(release, 'SHA256SUMS'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => [l.slice(66), l.slice(0, 64)] as const),
  );
  const have = sha256File(join(release, archive));
  if (sums.get(archive) !== have) throw new Error(`${join(release, archive)}: sha256 ${have} is not the one SHA256SUMS lists`);
  mkdirSync(into, { recursive: true });
  const r = await runCommand('tar', ['-xzf', join(release, archive), '-C', into]);
  if (r.code !== 0) throw new Error(`unpacking ${archive}: ${r.output}`);
  return join(into, 'kubectl-bind.mjs');
}
