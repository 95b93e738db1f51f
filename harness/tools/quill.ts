/**
 * quill, which signs Mach-O executables on any platform, built from the Go module github.com/anchore/quill into the
 * cache: the plugin's darwin executables (cli/deploy/executables.ts) are signed ad hoc with it, as macOS requires of
 * every arm64 program, on the Linux machine that builds them.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

/** v0.7.1: the newest the module proxy serves, with the bounded Mach-O reads of its security release. */
const QUILL_VERSION = 'v0.7.1';
/** Path of `quill`, building it first if needed. */
export function ensureQuill(log?: (line: string) => void): Promise<string> {
  const moduleDir = wrapperModule('harness/tools/quill');
  return goBuild({
    moduleDir,
    pkg: 'github.com/anchore/quill/cmd/quill',
    out: join(cacheRoot(), `quill-${QUILL_VERSION}-${wrapperHash(moduleDir)}`, 'quill'),
    label: `quill ${QUILL_VERSION}`,
    ldflags: `-s -w -X main.version=${QUILL_VERSION}`,
    log,
  });
}
