/**
 * The kubectl-bind plugin as a krew package: `dist/kubectl-bind/krew/kubectl-bind.tar.gz` (the bundle, a small POSIX
 * launcher under each of the plugin's names, the LICENSE) and a manifest per name, `bind.yaml` and `klutch-bind.yaml`
 * (krew.googlecontainertools.github.com/v1alpha2 Plugin), whose sha256 is the archive's. Publish the archive where
 * `--krew-uri` says and add the manifests to your krew index, then `kubectl krew install <index>/bind` (or
 * `<index>/klutch-bind` beside kube-bind's `bind`, which kube-bind publishes in its own index).
 * The archive is byte-for-byte the same for the same bundle: fixed mtimes, no owners, entries in one order. Made
 * with a cache, it is compressed only for contents not seen before (gzip -9 of the 3.7 MB bundle took 0.1 s of every
 * synth).
 */
import { createHash, randomBytes } from 'node:crypto';
import {
  copyFileSync,
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { copyIfChanged, sha256File, writeIfChanged } from '../../lib/files';
import { RELEASE_SOURCE } from '../../lib/version';
import { PLUGIN_VERSION } from '../version';
import { MIN_NODE } from '../node-floor';

/** Where synth puts the package, below the output folder. */
const KREW_DIR = 'kubectl-bind/krew';
const KREW_ARCHIVE = 'kubectl-bind.tar.gz';
/** krew names the plugin by what follows `kubectl`: `kubectl bind`. */
const KREW_PLUGIN = 'bind';
/**
 * The same plugin under a name no other project's plugin has, for users who also have kube-bind's `bind` (in
 * kube-bind's own index): `kubectl klutch-bind`, whose executable kubectl looks up as `kubectl-klutch_bind`.
 */
const KREW_SECOND_PLUGIN = 'klutch-bind';
/** The executable kubectl runs for a plugin name (its dashes become underscores, kubectl's rule). */
const pluginExecutable = (plugin: string): string => `kubectl-${plugin.replaceAll('-', '_')}`;
/** The launchers in the archive, one per name, the same script. */
const LAUNCHERS = [KREW_PLUGIN, KREW_SECOND_PLUGIN].map(pluginExecutable);
const DEFAULT_KREW_URI = `${RELEASE_SOURCE}/releases/download/${PLUGIN_VERSION}/${KREW_ARCHIVE}`;

/**
 * Runs the bundle with the `node` on PATH. krew links `kubectl-bind` into its bin folder: resolve the link to find
 * the bundle beside the launcher.
 */
const LAUNCHER = `#!/bin/sh
# kubectl-bind, installed by krew: runs the one-file bundle beside this launcher with Node.js ${MIN_NODE} or later.
here=$(dirname "$(readlink -f "$0")")
command -v node >/dev/null 2>&1 || { echo "kubectl-bind needs Node.js ${MIN_NODE} or later on PATH (https://nodejs.org)" >&2; exit 1; }
exec node "$here/kubectl-bind.mjs" "$@"
`;

export interface KrewOptions {
  /** The bundle (dist/kubectl-bind/kubectl-bind.mjs). */
  readonly bundle: string;
  /** The LICENSE to ship in the archive (krew's index requires one). */
  readonly license: string;
  /** Where the archive will be downloaded from. @default DEFAULT_KREW_URI */
  readonly uri?: string;
  /**
   * A folder that keeps archives by a hash of their contents, so the same contents are not archived and compressed
   * again (synth: node_modules/.cache/klutch-kit/krew). @default none: made every time
   */
  readonly cache?: string;
}

/** The Plugin manifest of `plugin` (`bind` or `klutch-bind`) for an archive with this sha256. */
function krewManifest(sha256: string, uri: string = DEFAULT_KREW_URI, plugin: string = KREW_PLUGIN): Record<string, unknown> {
  const bin = pluginExecutable(plugin);
  return {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: plugin },
    spec: {
      version: PLUGIN_VERSION,
      homepage: RELEASE_SOURCE,
      shortDescription: 'Bind data-service APIs of a Klutch control plane',
      description:
        'Binds APIs exported by a Klutch-style control plane (PostgresqlInstance, ServiceBinding, ...) into this\n' +
        'cluster: logs in over OIDC (or as a machine identity), installs the konnector and creates the\n' +
        'APIServiceBinding. Compatible with Klutch backends.\n',
      caveats: `kubectl ${plugin} needs Node.js ${MIN_NODE} or later on PATH.\n`,
      platforms: [
        {
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] },
          uri,
          sha256,
          bin,
          files: [
            { from: bin, to: '.' },
            { from: 'kubectl-bind.mjs', to: '.' },
            { from: 'LICENSE', to: '.' },
          ],
        },
      ],
    },
  };
}

/**
 * Writes `<out>/kubectl-bind/krew/{kubectl-bind.tar.gz,bind.yaml,klutch-bind.yaml}` (one archive, a manifest per name);
 * returns their paths and the archive's sha256.
 */
export async function writeKrewPackage(
  out: string,
  o: KrewOptions,
): Promise<{ archive: string; manifest: string; secondManifest: string; sha256: string }> {
  const dir = join(out, KREW_DIR);
  const archive = join(dir, KREW_ARCHIVE);
  if (o.cache) copyIfChanged(await cachedArchive(o.cache, o), archive);
  else {
    mkdirSync(dir, { recursive: true });
    await makeArchive(o, archive);
  }
  const sha256 = sha256File(archive);
  const [manifest, secondManifest] = [KREW_PLUGIN, KREW_SECOND_PLUGIN].map((plugin) => {
    const file = join(dir, `${plugin}.yaml`);
    writeIfChanged(file, stringify(krewManifest(sha256, o.uri, plugin), { lineWidth: 0 }));
    return file;
  }) as [string, string];
  return { archive, manifest, secondManifest, sha256 };
}

/** Archives older than this go when another is made; none is touched when used (a copy's skip compares mtimes). */
const KEEP_MS = 86_400_000;

/**
 * The archive of these contents in `cache`, made if it is not there. Its name is a hash of everything its bytes come
 * from: its files, how makeArchive writes them, and the versions of tar and zlib that write and compress them.
 */
async function cachedArchive(cache: string, o: KrewOptions): Promise<string> {
  const tar = (createRequire(import.meta.url)('tar/package.json') as { version: string }).version;
  const how = { tar, zlib: process.versions.zlib, launcher: LAUNCHER, launchers: LAUNCHERS, makeArchive: makeArchive.toString() };
  const hash = createHash('sha256').update(JSON.stringify(how));
  for (const file of [o.bundle, o.license]) hash.update(sha256File(file));
  const file = join(cache, `kubectl-bind-${hash.digest('hex').slice(0, 32)}.tar.gz`);
  if (existsSync(file)) return file;
  mkdirSync(cache, { recursive: true });
  const tmp = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  try {
    await makeArchive(o, tmp);
    renameSync(tmp, file); // whole or not at all, also when two runs make it at once
  } finally {
    rmSync(tmp, { force: true });
  }
  for (const f of readdirSync(cache)) {
    const path = join(cache, f);
    try {
      if (Date.now() - statSync(path).mtimeMs > KEEP_MS) rmSync(path, { force: true });
    } catch {
      // Removed by a concurrent run.
    }
  }
  return file;
}

/** Writes the archive to `file`: its files with fixed modes and mtimes, no owners, gzip -9. */
async function makeArchive(o: KrewOptions, file: string): Promise<void> {
  const { create } = await import('tar'); // only here: most runs find the archive in the cache
  const stage = mkdtempSync(join(tmpdir(), 'klutch-krew-'));
  try {
    for (const launcher of LAUNCHERS) {
      writeFileSync(join(stage, launcher), LAUNCHER);
      chmodSync(join(stage, launcher), 0o755);
    }
    copyFileSync(o.bundle, join(stage, 'kubectl-bind.mjs'));
    chmodSync(join(stage, 'kubectl-bind.mjs'), 0o644);
    copyFileSync(o.license, join(stage, 'LICENSE'));
    chmodSync(join(stage, 'LICENSE'), 0o644);
    await create({ gzip: { level: 9 }, file, cwd: stage, portable: true, mtime: new Date(0) }, [
      'LICENSE',
      ...LAUNCHERS,
      'kubectl-bind.mjs',
    ]);
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
