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
import { executableName, platformName, type BuiltExecutable, type PluginPlatform } from './platforms';

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
/** Node's LICENSE beside an executable, which is Node with the plugin inside. */
const NODE_LICENSE = 'LICENSE.node';
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
  /**
   * Single-file executables (built by release/plugin-executables.ts), an archive each, published beside the launcher's archive
   * (`uri`'s folder); the manifests list them first, so krew picks one for its platform and the launcher elsewhere.
   * @default none
   */
  readonly executables?: readonly BuiltExecutable[];
}

/** An executable's archive in the package. */
export interface ExecutableArchive {
  readonly platform: PluginPlatform;
  readonly archive: string;
  readonly sha256: string;
}

/** `kubectl-bind-linux-amd64.tar.gz`. */
const executableArchiveName = (p: PluginPlatform): string => `kubectl-bind-${p.os}-${p.arch}.tar.gz`;
/** The URI of a file published beside the launcher's archive. */
const besideUri = (uri: string, file: string): string => uri.replace(/[^/]*$/, file);

/** The Plugin manifest of `plugin` (`bind` or `klutch-bind`) for an archive with this sha256. */
function krewManifest(
  sha256: string,
  uri: string = DEFAULT_KREW_URI,
  plugin: string = KREW_PLUGIN,
  executables: readonly ExecutableArchive[] = [],
): Record<string, unknown> {
  const bin = pluginExecutable(plugin);
  const native = executables.map(({ platform, sha256: sum }) => ({
    selector: { matchLabels: { os: platform.os, arch: platform.arch } },
    uri: besideUri(uri, executableArchiveName(platform)),
    sha256: sum,
    bin: executableName(platform),
    files: [executableName(platform), 'LICENSE', NODE_LICENSE].map((from) => ({ from, to: '.' })),
  }));
  const caveats =
    executables.length === 0
      ? `kubectl ${plugin} needs Node.js ${MIN_NODE} or later on PATH.\n`
      : `kubectl ${plugin} is one executable, Node inside, on ${executables.map((e) => platformName(e.platform)).join(', ')};\n` +
        `on other platforms it needs Node.js ${MIN_NODE} or later on PATH.\n`;
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
      caveats,
      platforms: [
        ...native,
        ...launcherSelectors(executables).map((selector) => ({
          selector,
          uri,
          sha256,
          bin,
          files: [
            { from: bin, to: '.' },
            { from: 'kubectl-bind.mjs', to: '.' },
            { from: 'LICENSE', to: '.' },
          ],
        })),
      ],
    },
  };
}

/**
 * Where the launcher is installed: linux and darwin (it is a POSIX shell script) but for the platforms with an
 * executable, since krew's index refuses two entries selecting one platform.
 */
function launcherSelectors(executables: readonly ExecutableArchive[]): Record<string, unknown>[] {
  const plain: string[] = [];
  const narrowed: Record<string, unknown>[] = [];
  for (const os of ['linux', 'darwin']) {
    const archs = executables.filter((e) => e.platform.os === os).map((e) => e.platform.arch);
    if (archs.length === 0) plain.push(os);
    else
      narrowed.push({
        matchExpressions: [
          { key: 'os', operator: 'In', values: [os] },
          { key: 'arch', operator: 'NotIn', values: archs },
        ],
      });
  }
  return [...(plain.length > 0 ? [{ matchExpressions: [{ key: 'os', operator: 'In', values: plain }] }] : []), ...narrowed];
}

/**
 * Writes `<out>/kubectl-bind/krew/{kubectl-bind.tar.gz,bind.yaml,klutch-bind.yaml}` (the launcher's archive, a
 * manifest per name) and an archive per executable; returns their paths and sha256s.
 */
export async function writeKrewPackage(
  out: string,
  o: KrewOptions,
): Promise<{ archive: string; manifest: string; secondManifest: string; sha256: string; executables: ExecutableArchive[] }> {
  const dir = join(out, KREW_DIR);
  mkdirSync(dir, { recursive: true });
  const place = async (name: string, entries: readonly Entry[], level: number): Promise<{ archive: string; sha256: string }> => {
    const archive = join(dir, name);
    if (o.cache) copyIfChanged(await cachedArchive(o.cache, entries, level), archive);
    else await makeArchive(entries, level, archive);
    return { archive, sha256: sha256File(archive) };
  };
  const { archive, sha256 } = await place(KREW_ARCHIVE, launcherEntries(o), 9);
  const executables: ExecutableArchive[] = [];
  for (const e of o.executables ?? []) {
    const entries: Entry[] = [
      { name: executableName(e.platform), from: e.file, mode: 0o755 },
      { name: 'LICENSE', from: o.license, mode: 0o644 },
      { name: NODE_LICENSE, from: e.nodeLicense, mode: 0o644 },
    ];
    // gzip -6: a 150 MB executable compresses to within 1 % of -9 in a third of the time (6 s against 18 s).
    executables.push({ platform: e.platform, ...(await place(executableArchiveName(e.platform), entries, 6)) });
  }
  const [manifest, secondManifest] = [KREW_PLUGIN, KREW_SECOND_PLUGIN].map((plugin) => {
    const file = join(dir, `${plugin}.yaml`);
    writeIfChanged(file, stringify(krewManifest(sha256, o.uri, plugin, executables), { lineWidth: 0 }));
    return file;
  }) as [string, string];
  return { archive, manifest, secondManifest, sha256, executables };
}

/** A file of an archive: its name there, and its contents from a file or as text. */
interface Entry {
  readonly name: string;
  readonly from?: string;
  readonly text?: string;
  readonly mode: number;
}

/** The launcher's archive: a launcher per name, the bundle, the LICENSE. */
function launcherEntries(o: KrewOptions): Entry[] {
  return [
    { name: 'LICENSE', from: o.license, mode: 0o644 },
    ...LAUNCHERS.map((name) => ({ name, text: LAUNCHER, mode: 0o755 })),
    { name: 'kubectl-bind.mjs', from: o.bundle, mode: 0o644 },
  ];
}

/** Archives older than this go when another is made; none is touched when used (a copy's skip compares mtimes). */
const KEEP_MS = 86_400_000;

/**
 * The archive of these entries in `cache`, made if it is not there. Its name is a hash of everything its bytes come
 * from: its entries, how makeArchive writes them, and the versions of tar and zlib that write and compress them.
 */
async function cachedArchive(cache: string, entries: readonly Entry[], level: number): Promise<string> {
  const tar = (createRequire(import.meta.url)('tar/package.json') as { version: string }).version;
  const how = { tar, zlib: process.versions.zlib, level, makeArchive: makeArchive.toString() };
  const hash = createHash('sha256').update(JSON.stringify(how));
  for (const e of entries) hash.update(JSON.stringify([e.name, e.mode, e.text ?? sha256File(e.from!)]));
  const file = join(cache, `kubectl-bind-${hash.digest('hex').slice(0, 32)}.tar.gz`);
  if (existsSync(file)) return file;
  mkdirSync(cache, { recursive: true });
  const tmp = `${file}.${process.pid}-${randomBytes(6).toString('hex')}.tmp`;
  try {
    await makeArchive(entries, level, tmp);
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

/** Writes the archive to `file`: its entries in their order, with fixed modes and mtimes, no owners, gzipped. */
async function makeArchive(entries: readonly Entry[], level: number, file: string): Promise<void> {
  const { create } = await import('tar'); // only here: most runs find the archive in the cache
  const stage = mkdtempSync(join(tmpdir(), 'klutch-krew-'));
  try {
    for (const e of entries) {
      const path = join(stage, e.name);
      if (e.from) copyFileSync(e.from, path);
      else writeFileSync(path, e.text ?? '');
      chmodSync(path, e.mode);
    }
    await create(
      { gzip: { level }, file, cwd: stage, portable: true, mtime: new Date(0) },
      entries.map((e) => e.name),
    );
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
