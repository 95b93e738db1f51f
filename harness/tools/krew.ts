/**
 * krew (kubectl's plugin manager) and its manifest validator, built from the Go module sigs.k8s.io/krew into the
 * cache: the krew package synth writes is validated with `validate-krew-manifest` and installed with
 * `krew install --manifest --archive`, offline, into a KREW_ROOT of the test's own.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

/** v0.4.3: the newest the module proxy serves (v0.4.5 is refused). */
const KREW_VERSION = 'v0.4.3';
const moduleDir = wrapperModule('harness/tools/krew');

/** Paths of `krew` and `validate-krew-manifest`, building them first if needed. */
export async function ensureKrew(log?: (line: string) => void): Promise<{ krew: string; validate: string }> {
  const dir = join(cacheRoot(), `krew-${KREW_VERSION}-${wrapperHash(moduleDir)}`);
  const build = (cmd: string) =>
    goBuild({
      moduleDir,
      pkg: `sigs.k8s.io/krew/cmd/${cmd}`,
      out: join(dir, cmd),
      label: `${cmd} ${KREW_VERSION}`,
      ldflags: `-s -w -X sigs.k8s.io/krew/internal/version.gitTag=${KREW_VERSION}`,
      log,
    });
  return { krew: await build('krew'), validate: await build('validate-krew-manifest') };
}
