/**
 * kube-network-policies, the NetworkPolicy agent of the harness's nodes (harness/node/network-policies.ts), built from
 * the Go module into the cache. The wrapper module (harness/tools/network-policies/) has its own main, which takes a
 * kubeconfig where upstream's takes only in-cluster credentials, and one change to upstream, made at build time on a copy of
 * the module (goBuild's `patch`; patch/xt_queue.go says why): its two nftables `queue` rules use the xtables NFQUEUE
 * target.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, goModuleSource, wrapperHash, wrapperModule } from './go';

const MODULE = 'sigs.k8s.io/kube-network-policies';
const VERSION = 'v0.8.0';

const moduleDir = wrapperModule('harness/tools/network-policies');

/** Upstream's queue statement (twice in controller.go: the postrouting and the prerouting chain) and its replacement. */
const QUEUE_STATEMENT = `	queue := &expr.Queue{Num: uint16(c.config.QueueID)}
	if c.config.FailOpen {
		queue.Flag = expr.QueueFlagBypass
	}
`;
const XT_QUEUE_STATEMENT = `	queue := xtQueue(uint16(c.config.QueueID), c.config.FailOpen)
`;

/** controller.go with its queue statements replaced, and xt_queue.go beside it; fails if upstream's text moved. */
export function queuePatch(controllerGo: string, xtQueueGo: string): Record<string, string> {
  const parts = controllerGo.split(QUEUE_STATEMENT);
  if (parts.length !== 3) {
    throw new Error(
      `${MODULE} ${VERSION}: expected its queue statement twice in pkg/networkpolicy/controller.go, found it ${parts.length - 1} times; ` +
        'update harness/tools/network-policies.ts for this version',
    );
  }
  return { 'pkg/networkpolicy/controller.go': parts.join(XT_QUEUE_STATEMENT), 'pkg/networkpolicy/xt_queue.go': xtQueueGo };
}

function patchHash(files: Readonly<Record<string, string>>): string {
  return createHash('sha256')
    .update(JSON.stringify(Object.entries(files).sort()))
    .digest('hex')
    .slice(0, 10);
}

/** Path of the agent's binary, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensureNetworkPolicies(log?: (line: string) => void): Promise<string> {
  const upstream = goModuleSource(moduleDir, MODULE, VERSION);
  const files = queuePatch(
    readFileSync(join(upstream, 'pkg', 'networkpolicy', 'controller.go'), 'utf8'),
    readFileSync(join(moduleDir, 'patch', 'xt_queue.go'), 'utf8'),
  );
  return goBuild({
    moduleDir,
    pkg: '.',
    // Keyed by the patched files too: the replacement statement lives here, outside what wrapperHash reads.
    out: join(cacheRoot(), `network-policies-${VERSION}-${wrapperHash(moduleDir)}-${patchHash(files)}`, 'network-policies'),
    label: `kube-network-policies ${VERSION}`,
    ldflags: '-s -w',
    patch: { module: MODULE, version: VERSION, files },
    log,
  });
}
