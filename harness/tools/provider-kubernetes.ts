/**
 * provider-kubernetes, built from the Go module into the cache, for the end-to-end suite (harness/crossplane/crossplane.ts):
 * the real reconciler of the a8s compositions' `Object`s.
 *
 * v1.3.1: v1.4.x needs Go >= 1.27.1, v0.18.0 fails checksum verification, older ones predate our `dependsOn`
 * constraint. v1.3.1 imports github.com/nebius/gosdk, which the module proxy refuses; the wrapper module
 * (harness/tools/provider-kubernetes/) replaces it with a build-time stub in `nebius-gosdk-stub/` that keeps the API
 * provider-kubernetes calls and fails every call. Only the NebiusServiceAccountCredentials identity uses it; the
 * kubeconfig credentials the tests use are untouched.
 */
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, goModuleSource, wrapperHash, wrapperModule } from './go';

export const PROVIDER_KUBERNETES_VERSION = 'v1.3.1';
const PROVIDER_KUBERNETES_MODULE = 'github.com/crossplane-contrib/provider-kubernetes';

const moduleDir = wrapperModule('harness/tools/provider-kubernetes');

/** Path the binary has (or will have) in the cache: keyed by the release and the wrapper module's hash. */
function providerKubernetesBinaryPath(): string {
  return join(cacheRoot(), `provider-kubernetes-${PROVIDER_KUBERNETES_VERSION}-${wrapperHash(moduleDir)}`, 'provider-kubernetes');
}

/** Path of the provider binary, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensureProviderKubernetes(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: `${PROVIDER_KUBERNETES_MODULE}/cmd/provider`,
    out: providerKubernetesBinaryPath(),
    label: `provider-kubernetes ${PROVIDER_KUBERNETES_VERSION}`,
    // It has no --version flag; the stamp is what it reports in change logs (otherwise "0.0.0").
    ldflags: `-X ${PROVIDER_KUBERNETES_MODULE}/internal/version.Version=${PROVIDER_KUBERNETES_VERSION} -s -w`,
    // Its go.mod says go 1.26.7, and a local toolchain does not fetch a newer one.
    minGo: '1.26.7',
    log,
  });
}

/** The module's source folder: `package/crds` and `package/crossplane.yaml` are what its package installs. */
export function providerKubernetesSource(): string {
  return goModuleSource(moduleDir, PROVIDER_KUBERNETES_MODULE, PROVIDER_KUBERNETES_VERSION);
}
