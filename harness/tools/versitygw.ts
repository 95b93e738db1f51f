/**
 * The Versity S3 Gateway (versitygw), built from the Go module into the cache: the S3-compatible object store the
 * platform keeps backups in (harness/platform/object-store.ts, docs/decisions/object-store.md). One static binary is
 * the server (its `posix` backend and internal IAM); tenants are made through its admin API by backend/backup-store/.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

export const VERSITYGW_VERSION = 'v1.2.0';
/** The release's commit (its tag), which `versitygw --version` prints as the build, as upstream's Makefile sets it. */
const VERSITYGW_COMMIT = '7f7b80495816f0942506fecfd51c9000fffccbe4';

const moduleDir = wrapperModule('harness/tools/versitygw');

/** Path of the versitygw binary, building it first if needed (a cold build takes about two minutes, with progress). */
export async function ensureVersitygw(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: 'github.com/versity/versitygw/cmd/versitygw',
    out: join(cacheRoot(), `versitygw-${VERSITYGW_VERSION}-${wrapperHash(moduleDir)}`, 'versitygw'),
    label: `versitygw ${VERSITYGW_VERSION}`,
    ldflags: `-X main.Version=${VERSITYGW_VERSION} -X main.Build=${VERSITYGW_COMMIT} -s -w`,
    // Static, as upstream's Dockerfile builds it: the image carries no C library.
    env: { CGO_ENABLED: '0' },
    log,
  });
}
