/**
 * Crossplane core (`crossplane core start`), built from Go modules into the cache, for the end-to-end suites that run
 * the real control-plane loop (harness/crossplane/crossplane.ts).
 *
 * Two lines, chosen per suite (harness/tools/crossplane-lines.ts):
 * - `v2`: v2.4.0 (`github.com/crossplane/crossplane/v2`), the main target, from its own wrapper module
 *   (harness/tools/crossplane-v2/; crank v2 stays at v2.2.1, harness/tools/crossplane-lines.ts says why).
 * - `v1`: v1.20.11, the last 1.x line. Its wrapper (harness/tools/crossplane/) started as a copy of crank v1's
 *   go.mod/go.sum and only gained what cmd/crossplane adds (sigstore and its friends).
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, goModuleSource, wrapperHash, wrapperModule } from './go';
import { CROSSPLANE_LINES, type CrossplaneLine } from './crossplane-lines';

export type { CrossplaneLine };

const LINES = CROSSPLANE_LINES;

/** The Crossplane release of a line. */
export const crossplaneVersion = (line: CrossplaneLine = 'v1'): string => LINES[line].version;

/** Path the binary of a line has (or will have) in the cache: keyed by the release and the wrapper module's hash. */
export function crossplaneBinaryPath(line: CrossplaneLine = 'v1'): string {
  const l = LINES[line];
  return join(cacheRoot(), `crossplane-${l.version}-${wrapperHash(wrapperModule(l.coreWrapper))}`, 'crossplane');
}

/** Path of the crossplane binary of a line, building it first if needed (a cold build takes minutes, with progress). */
export async function ensureCrossplane(log?: (line: string) => void, line: CrossplaneLine = 'v1'): Promise<string> {
  const l = LINES[line];
  const built = existsSync(crossplaneBinaryPath(line));
  const bin = await goBuild({
    moduleDir: wrapperModule(l.coreWrapper),
    pkg: `${l.module}/cmd/crossplane`,
    out: crossplaneBinaryPath(line),
    label: `Crossplane ${l.version} (crossplane core)`,
    // Without the stamp the version is "", and every package with a `crossplane.version` constraint (ours has
    // ">=v1.17.1") fails xpkg.PackageCrossplaneCompatible: its revision never turns healthy.
    ldflags: `-X ${l.coreVersionVariable}=${l.version} -s -w`,
    log,
  });
  if (!built) checkVersion(bin, ['--version'], l.version);
  return bin;
}

/**
 * The module's source folder of a line: `cluster/crds` and `cluster/webhookconfigurations` are what `core init`
 * installs.
 */
export function crossplaneSource(line: CrossplaneLine = 'v1'): string {
  const l = LINES[line];
  return goModuleSource(wrapperModule(l.coreWrapper), l.module, l.version);
}

/** Fails when `bin args` does not print `version`: a binary without its stamp misbehaves in ways far from the cause. */
function checkVersion(bin: string, args: readonly string[], version: string): void {
  const r = spawnSync(bin, [...args], { encoding: 'utf8', timeout: 30_000 });
  const out = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim();
  if (r.status !== 0 || !out.includes(version)) {
    throw new Error(
      `${bin} ${args.join(' ')} printed "${out}" (exit ${r.status ?? r.error?.message}), not ${version}: ` +
        `delete ${join(bin, '..')} and run the tests again to rebuild it`,
    );
  }
}
