/**
 * The next release of this tree, for the upgrade test (issue 37, item 4): the working tree copied (what git tracks
 * and what it does not ignore, with node_modules hard-linked), its version raised by one patch where the tree keeps it
 * (lib/version.ts and package.json), and `npm run release` run there as a command, pushed to the run's registry under
 * the project's names as the sandbox's release is (sandbox/release.ts). The code is this tree's: what the upgrade test
 * proves is the way from one release to the next — every image, package and reference changing under bound app
 * clusters, by the documented steps — not a change of behaviour between two versions.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runCommand } from '../../harness/cluster/processes';
import { repoRoot } from '../../harness/root';
import { VERSION } from '../../lib/version';
import type { ReleaseRecord } from '../../release/publish';

/** `v0.1.0` → `v0.1.1`. */
function nextPatch(version: string): string {
  const m = /^v(\d+)\.(\d+)\.(\d+)$/.exec(version);
  if (!m) throw new Error(`version ${version} is not vMAJOR.MINOR.PATCH`);
  return `v${m[1]}.${m[2]}.${Number(m[3]) + 1}`;
}

export interface NextRelease {
  readonly version: string;
  /** The release folder (bundles, images.txt, release.json). */
  readonly dir: string;
  readonly record: ReleaseRecord;
  /** Removes the copy and the folder. */
  cleanup(): void;
}

/** Publishes the next release of this tree to `registry` (its `--push-registry` host and CA), for `crossplane`. */
export async function publishNextRelease(o: {
  readonly registry: { readonly hostFromTest: string; readonly caFile: string };
  readonly crossplane: 'v1' | 'v2';
}): Promise<NextRelease> {
  const root = repoRoot();
  const work = mkdtempSync(join(tmpdir(), 'klutch-kit-next-release-'));
  const tree = join(work, 'tree');
  mkdirSync(tree);
  const copy = spawnSync(
    'bash',
    ['-c', `git -C "$0" ls-files -z -co --exclude-standard | tar -C "$0" --null -T - -cf - | tar -C "$1" -xf -`, root, tree],
    { encoding: 'utf8' },
  );
  if (copy.status !== 0) throw new Error(`copying the tree to ${tree}: ${copy.stderr}`);
  // Its own node_modules, hard links to this tree's packages: a symlink would resolve to this tree's folder, and the
  // bundles cached there (synth's among them) would find this tree as their repository. The cache is left out: the
  // copy builds its own, and a hard-linked file written there would change this tree's.
  const modules = spawnSync(
    'bash',
    [
      '-c',
      `mkdir "$1" && find "$0" -mindepth 1 -maxdepth 1 ! -name .cache -exec cp -al {} "$1"/ \\;`,
      join(root, 'node_modules'),
      join(tree, 'node_modules'),
    ],
    { encoding: 'utf8' },
  );
  if (modules.status !== 0) throw new Error(`linking node_modules into ${tree}: ${modules.stderr}`);
  const version = nextPatch(VERSION);
  const versionFile = join(tree, 'lib', 'version.ts');
  const source = readFileSync(versionFile, 'utf8');
  if (!source.includes(`export const VERSION = '${VERSION}';`)) throw new Error(`${versionFile} does not say VERSION = '${VERSION}'`);
  writeFileSync(versionFile, source.replace(`export const VERSION = '${VERSION}';`, `export const VERSION = '${version}';`));
  const pkg = JSON.parse(readFileSync(join(tree, 'package.json'), 'utf8')) as { version: string };
  writeFileSync(join(tree, 'package.json'), `${JSON.stringify({ ...pkg, version: version.slice(1) }, null, 2)}\n`);
  const dir = join(work, 'release');
  const run = await runCommand(
    process.execPath,
    [
      join(tree, 'scripts', 'run-ts.mjs'),
      join(tree, 'release', 'main.ts'),
      '--version',
      version,
      '--crossplane',
      o.crossplane,
      '--push-registry',
      o.registry.hostFromTest,
      '--ca-file',
      o.registry.caFile,
      '--platforms',
      'linux/amd64',
      '--no-sbom',
      '--out',
      dir,
    ],
    { cwd: tree, timeoutMs: 900_000 },
  );
  if (run.code !== 0) throw new Error(`npm run release of ${version} (in ${tree}) exited ${run.code}:\n${run.output.slice(-4000)}`);
  return {
    version,
    dir,
    record: JSON.parse(readFileSync(join(dir, 'release.json'), 'utf8')) as ReleaseRecord,
    cleanup: () => rmSync(work, { recursive: true, force: true }),
  };
}
