/**
 * syft, Anchore's SBOM generator, built from the Go module github.com/anchore/syft into the cache: `npm run release`
 * writes the SBOM of each image it publishes with it (release/sbom.ts).
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

/** v1.57.2: the newest the module proxy serves (docs/decisions/releases.md); it needs Go 1.26.8. */
const SYFT_VERSION = 'v1.57.2';

/** Path of `syft`, building it first if needed. */
export function ensureSyft(log?: (line: string) => void): Promise<string> {
  const moduleDir = wrapperModule('harness/tools/syft');
  return goBuild({
    moduleDir,
    pkg: 'github.com/anchore/syft/cmd/syft',
    out: join(cacheRoot(), `syft-${SYFT_VERSION}-${wrapperHash(moduleDir)}`, 'syft'),
    label: `syft ${SYFT_VERSION}`,
    ldflags: `-s -w -X main.version=${SYFT_VERSION}`,
    minGo: '1.26.8',
    ...(log ? { log } : {}),
  });
}
