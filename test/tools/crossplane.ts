/**
 * Crossplane core (`crossplane core start`), built from the Go module into the cache, for the end-to-end suite that
 * runs the real control-plane loop (test/support/crossplane.ts).
 *
 * Pinned to v1.20.11, the release crank is built from (test/tools/crank.ts): the v2 module is not served by the module
 * proxy this project can reach. The wrapper module (test/tools/crossplane/) started as a copy of crank's go.mod/go.sum
 * and only gained what cmd/crossplane adds (sigstore and its friends); no shared dependency changed version.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, goModuleSource, wrapperHash, wrapperModule } from './go';

export const CROSSPLANE_VERSION = 'v1.20.11';
export const CROSSPLANE_MODULE = 'github.com/crossplane/crossplane';

const moduleDir = wrapperModule('test/tools/crossplane');

/** Path the binary has (or will have) in the cache: keyed by the release and the wrapper module's hash. */
export function crossplaneBinaryPath(): string {
  return join(cacheRoot(), `crossplane-${CROSSPLANE_VERSION}-${wrapperHash(moduleDir)}`, 'crossplane');
}

/** Path of the crossplane binary, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensureCrossplane(log?: (line: string) => void): Promise<string> {
  const built = existsSync(crossplaneBinaryPath());
  const bin = await goBuild({
    moduleDir,
    pkg: `${CROSSPLANE_MODULE}/cmd/crossplane`,
    out: crossplaneBinaryPath(),
    label: `Crossplane ${CROSSPLANE_VERSION} (crossplane core)`,
    // Without the stamp the version is "", and every package with a `crossplane.version` constraint (ours has
    // ">=v1.17.1") fails xpkg.PackageCrossplaneCompatible: its revision never turns healthy.
    ldflags: `-X ${CROSSPLANE_MODULE}/internal/version.version=${CROSSPLANE_VERSION} -s -w`,
    log,
  });
  if (!built) checkVersion(bin, ['--version'], CROSSPLANE_VERSION);
  return bin;
}

/** The module's source folder: `cluster/crds` and `cluster/webhookconfigurations` are what `core init` installs. */
export function crossplaneSource(): string {
  return goModuleSource(moduleDir, CROSSPLANE_MODULE, CROSSPLANE_VERSION);
}

/** Fails when `bin args` does not print `version`: a binary without its stamp misbehaves in ways far from the cause. */
export function checkVersion(bin: string, args: readonly string[], version: string): void {
  const r = spawnSync(bin, [...args], { encoding: 'utf8', timeout: 30_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status !== 0 || !out.includes(version)) {
    throw new Error(
      `${bin} ${args.join(' ')} printed "${out}" (exit ${r.status ?? r.error?.message}), not ${version}: ` +
        `delete ${join(bin, '..')} and run the tests again to rebuild it`,
    );
  }
}
