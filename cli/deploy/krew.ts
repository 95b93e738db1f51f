/**
 * The kubectl-bind plugin as a krew package: `dist/kubectl-bind/krew/kubectl-bind.tar.gz` (the bundle, a small POSIX
 * launcher named `kubectl-bind`, the LICENSE) and its manifest `bind.yaml` (krew.googlecontainertools.github.com/
 * v1alpha2 Plugin), whose sha256 is the archive's. Publish the archive where `--krew-uri` says and add the manifest to
 * a krew index (a custom index: the default index's `bind` is kube-bind's), then `kubectl krew install <index>/bind`.
 * The archive is byte-for-byte the same for the same bundle: fixed mtimes, no owners, entries in one order.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { create } from 'tar';
import { stringify } from 'yaml';
import { PLUGIN_VERSION } from '../version';

/** Where synth puts the package, below the output folder. */
export const KREW_DIR = 'kubectl-bind/krew';
export const KREW_ARCHIVE = 'kubectl-bind.tar.gz';
/** krew names the plugin by what follows `kubectl`: `kubectl bind`. */
export const KREW_PLUGIN = 'bind';
export const DEFAULT_KREW_URI = `https://github.com/klutch-kit/klutch-kit/releases/download/${PLUGIN_VERSION}/${KREW_ARCHIVE}`;

/**
 * Runs the bundle with the `node` on PATH. krew links `kubectl-bind` into its bin folder: resolve the link to find
 * the bundle beside the launcher.
 */
export const LAUNCHER = `#!/bin/sh
# kubectl-bind, installed by krew: runs the one-file bundle beside this launcher with Node.js 20 or later.
here=$(dirname "$(readlink -f "$0")")
command -v node >/dev/null 2>&1 || { echo "kubectl-bind needs Node.js 20 or later on PATH (https://nodejs.org)" >&2; exit 1; }
exec node "$here/kubectl-bind.mjs" "$@"
`;

export interface KrewOptions {
  /** The bundle (dist/kubectl-bind/kubectl-bind.mjs). */
  readonly bundle: string;
  /** The LICENSE to ship in the archive (krew's index requires one). */
  readonly license: string;
  /** Where the archive will be downloaded from. @default DEFAULT_KREW_URI */
  readonly uri?: string;
}

/** The Plugin manifest for an archive with this sha256. */
export function krewManifest(sha256: string, uri: string = DEFAULT_KREW_URI): Record<string, unknown> {
  return {
    apiVersion: 'krew.googlecontainertools.github.com/v1alpha2',
    kind: 'Plugin',
    metadata: { name: KREW_PLUGIN },
    spec: {
      version: PLUGIN_VERSION,
      homepage: 'https://github.com/klutch-kit/klutch-kit',
      shortDescription: 'Bind data-service APIs of a Klutch control plane',
      description:
        'Binds APIs exported by a Klutch-style control plane (PostgresqlInstance, ServiceBinding, ...) into this\n' +
        'cluster: logs in over OIDC (or as a machine identity), installs the konnector and creates the\n' +
        'APIServiceBinding. Compatible with Klutch backends.\n',
      caveats: 'kubectl bind needs Node.js 20 or later on PATH.\n',
      platforms: [
        {
          selector: { matchExpressions: [{ key: 'os', operator: 'In', values: ['linux', 'darwin'] }] },
          uri,
          sha256,
          bin: 'kubectl-bind',
          files: [
            { from: 'kubectl-bind', to: '.' },
            { from: 'kubectl-bind.mjs', to: '.' },
            { from: 'LICENSE', to: '.' },
          ],
        },
      ],
    },
  };
}

/** Writes `<out>/kubectl-bind/krew/{kubectl-bind.tar.gz,bind.yaml}`; returns their paths and the archive's sha256. */
export async function writeKrewPackage(out: string, o: KrewOptions): Promise<{ archive: string; manifest: string; sha256: string }> {
  const dir = join(out, KREW_DIR);
  mkdirSync(dir, { recursive: true });
  const stage = mkdtempSync(join(tmpdir(), 'klutch-krew-'));
  try {
    writeFileSync(join(stage, 'kubectl-bind'), LAUNCHER);
    chmodSync(join(stage, 'kubectl-bind'), 0o755);
    copyFileSync(o.bundle, join(stage, 'kubectl-bind.mjs'));
    chmodSync(join(stage, 'kubectl-bind.mjs'), 0o644);
    copyFileSync(o.license, join(stage, 'LICENSE'));
    chmodSync(join(stage, 'LICENSE'), 0o644);
    const archive = join(dir, KREW_ARCHIVE);
    await create({ gzip: { level: 9 }, file: archive, cwd: stage, portable: true, mtime: new Date(0) }, [
      'LICENSE',
      'kubectl-bind',
      'kubectl-bind.mjs',
    ]);
    const sha256 = createHash('sha256').update(readFileSync(archive)).digest('hex');
    const manifest = join(dir, `${KREW_PLUGIN}.yaml`);
    writeFileSync(manifest, stringify(krewManifest(sha256, o.uri), { lineWidth: 0 }));
    return { archive, manifest, sha256 };
  } finally {
    rmSync(stage, { recursive: true, force: true });
  }
}
