/**
 * helm, the client operators install Crossplane with, built from the Go module helm.sh/helm/v3 into the cache: the
 * harness installs Crossplane's own chart (cluster/charts/crossplane of the crossplane/v2 module) with it, the way
 * Crossplane's install docs do, instead of applying a hand-written copy of what the chart renders.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

/** Pinned exactly (the proxy serves v3.19.x-v3.22.0); v3.19 is built on the same Kubernetes 0.34 libraries as harness/tools/kube. */
const HELM_VERSION = 'v3.19.0';
const moduleDir = wrapperModule('harness/tools/helm');

/** Path of helm, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensureHelm(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: 'helm.sh/helm/v3/cmd/helm',
    out: join(cacheRoot(), `helm-${HELM_VERSION}-${wrapperHash(moduleDir)}`, 'helm'),
    label: `helm ${HELM_VERSION}`,
    // Without the version stamp `helm version` says v3.x-dev and charts' kubeVersion checks see a dev build.
    ldflags: `-s -w -X helm.sh/helm/v3/internal/version.version=${HELM_VERSION}`,
    log,
  });
}
