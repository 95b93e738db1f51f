/**
 * The Kubernetes binary for the tests: etcd, kube-apiserver and kube-controller-manager for the control planes, and
 * kube-scheduler, kubelet and kube-proxy for a node (harness/node/), and kubectl (`kubectl apply -k`, the install
 * bundle's command), in one multi-call program (harness/tools/kube/),
 * built from Go modules once into the cache.
 *
 * The cache folder is keyed by the pinned release and a hash of the wrapper module's files, so changing main.go or a
 * pin builds a new binary instead of reusing a stale one.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperModule } from './go';

export const KUBE_VERSION = 'v1.34.1';
const ETCD_VERSION = 'v3.6.4';

const moduleDir = wrapperModule('harness/tools/kube');

/** Path the binary has (or will have) in the cache. */
export function kubeBinaryPath(): string {
  const hash = createHash('sha256');
  for (const f of ['go.mod', 'go.sum', 'main.go']) hash.update(readFileSync(join(moduleDir, f)));
  return join(cacheRoot(), `kube-${KUBE_VERSION}-${hash.digest('hex').slice(0, 10)}`, 'kube');
}

/** Path of the multi-call binary (`kube etcd|kube-apiserver|kubelet ...`), building it first if needed. */
export async function ensureKubeBinary(): Promise<string> {
  const [major, minor] = KUBE_VERSION.slice(1).split('.');
  // Without the version stamp /version reports v0.0.0-master, which clients that check the server version refuse.
  const ldflags = [
    `-X k8s.io/component-base/version.gitVersion=${KUBE_VERSION}`,
    `-X k8s.io/component-base/version.gitMajor=${major}`,
    `-X k8s.io/component-base/version.gitMinor=${minor}`,
    '-X k8s.io/component-base/version.gitTreeState=clean',
    '-s -w',
  ].join(' ');
  return goBuild({
    moduleDir,
    pkg: '.',
    out: kubeBinaryPath(),
    label: `Kubernetes ${KUBE_VERSION} (etcd ${ETCD_VERSION}, kube-apiserver, kube-controller-manager, kube-scheduler, kubelet, kube-proxy, kubectl)`,
    ldflags,
    minGo: '1.24',
  });
}
