/**
 * The CloudNativePG operator's `manager` binary, built from the Go module into the cache: the operator image
 * (harness/node/cnpg-images.ts) runs it as the controller, and CNPG copies the same binary into every instance
 * Pod (its `bootstrap-controller` init container) to run PostgreSQL there as the instance manager.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, goModuleSource, wrapperHash, wrapperModule } from './go';

export const CNPG_VERSION = 'v1.30.0';
const CNPG_MODULE = 'github.com/cloudnative-pg/cloudnative-pg';

const moduleDir = wrapperModule('harness/tools/cloudnative-pg');

/** Path the binary has (or will have) in the cache: keyed by the release and the wrapper module's hash. */
function cnpgManagerBinaryPath(): string {
  return join(cacheRoot(), `cloudnative-pg-${CNPG_VERSION}-${wrapperHash(moduleDir)}`, 'manager');
}

/** Path of the manager binary, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensureCnpgManager(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: `${CNPG_MODULE}/cmd/manager`,
    out: cnpgManagerBinaryPath(),
    label: `CloudNativePG manager ${CNPG_VERSION}`,
    // What `manager version` prints and what the operator compares with the instance manager it injects.
    ldflags: `-X ${CNPG_MODULE}/pkg/versions.buildVersion=${CNPG_VERSION.slice(1)} -s -w`,
    minGo: '1.26',
    // Static, as upstream releases it: CNPG copies this file into PostgreSQL images it did not build.
    env: { CGO_ENABLED: '0' },
    log,
  });
}

/** The module's source folder: `config/` holds the CRDs and RBAC its release manifest is generated from. */
export function cnpgSource(): string {
  return goModuleSource(moduleDir, CNPG_MODULE, CNPG_VERSION);
}
