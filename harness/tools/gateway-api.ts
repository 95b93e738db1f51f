/**
 * Gateway API's CRDs (standard channel), from its Go module at a pinned version (harness/tools/gateway-api/): what a
 * cluster with a Gateway controller serves, for the install bundle's `gateway/` Component.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { goModuleSource, wrapperModule } from './go';

const GATEWAY_API_VERSION = 'v1.6.3';

/** The standard-channel CRDs of `kinds` (their plural file names: `httproutes`, `backendtlspolicies`). */
export function gatewayApiCrds(kinds: readonly string[]): Record<string, unknown>[] {
  const dir = join(
    goModuleSource(wrapperModule('harness/tools/gateway-api'), 'sigs.k8s.io/gateway-api', GATEWAY_API_VERSION),
    'config',
    'crd',
    'standard',
  );
  return kinds.flatMap((k) =>
    parseAllDocuments(readFileSync(join(dir, `gateway.networking.k8s.io_${k}.yaml`), 'utf8'))
      .map((d) => d.toJS() as Record<string, unknown> | null)
      .filter((o): o is Record<string, unknown> => o !== null),
  );
}
