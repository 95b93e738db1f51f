/**
 * CoreDNS, the cluster DNS of the harness's node (harness/node/dns.ts), built from the Go module into the cache.
 * The wrapper module (harness/tools/coredns/) has its own main with only the plugins the node's Corefile uses.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

const COREDNS_VERSION = 'v1.12.4';

const moduleDir = wrapperModule('harness/tools/coredns');

/** Path the binary has (or will have) in the cache: keyed by the release and the wrapper module's hash. */
function corednsBinaryPath(): string {
  return join(cacheRoot(), `coredns-${COREDNS_VERSION}-${wrapperHash(moduleDir)}`, 'coredns');
}

/** Path of the CoreDNS binary, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensureCoreDns(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: '.',
    out: corednsBinaryPath(),
    label: `CoreDNS ${COREDNS_VERSION}`,
    ldflags: `-X github.com/coredns/coredns/coremain.GitCommit=${COREDNS_VERSION} -s -w`,
    log,
  });
}
