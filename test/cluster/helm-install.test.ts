/**
 * The control plane's Helm chart installed, upgraded and uninstalled by the real helm on a real API server of its own
 * (the chart makes cluster-wide objects: CRDs, ClusterRoles, admission policies), with Crossplane's package CRDs in
 * place as Crossplane would have them. No Pod runs here: what is proven is what helm makes of the chart; the
 * objects themselves run in the Pod platform's sandbox (from the kustomize bundle, which synth/helm-chart.test.ts holds
 * equal to the chart).
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadCatalog, parseYaml, ROOT } from '../../harness/crossplane/catalog';
import { startControlPlanes, type ControlPlanes } from '../../harness/cluster/control-plane';
import { eventually, getIfExists, installCrds, kubeFor, type Kube } from '../../harness/cluster/kube';
import { crossplaneSource } from '../../harness/tools/crossplane';
import { gatewayApiCrds } from '../../harness/tools/gateway-api';
import { goModuleSource, wrapperModule } from '../../harness/tools/go';
import { ensureHelm } from '../../harness/tools/helm';
import { kubeBinaryPath } from '../../harness/tools/kube';
import { PROVIDER_KUBERNETES_VERSION } from '../../harness/tools/provider-kubernetes';
import { CHART_DIR } from '../../synth/helm-chart';
import { synthesize } from '../../synth/synth';
import { controlPlanes } from '../support/cluster';

let cp: ControlPlanes;
let kube: Kube;
let helm: string;
let dir: string;

beforeAll(async () => {
  await controlPlanes(); // the shared setup has built the binary by now
  [cp, helm] = await Promise.all([
    startControlPlanes({ clusters: ['helm'], binary: kubeBinaryPath(), log: () => undefined }),
    ensureHelm(),
  ]);
  kube = kubeFor(cp.clusters.helm!);
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-helm-'));
  synthesize({ apis: await loadCatalog(), outdir: join(dir, 'dist') });
}, 900_000);
afterAll(async () => {
  await cp?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const crdsIn = (file: string) => parseYaml(readFileSync(file, 'utf8'));
// Each helm step is bounded on its own, so a slow API server names the step instead of timing the whole test out.
function runHelm(...args: string[]): string {
  const r = spawnSync(helm, [...args, '--kubeconfig', cp.clusters.helm!.kubeconfig, '--namespace', 'crossplane-system'], {
    encoding: 'utf8',
    timeout: 90_000,
    env: { ...process.env, HELM_CACHE_HOME: join(dir, 'cache'), HELM_CONFIG_HOME: join(dir, 'config'), HELM_DATA_HOME: join(dir, 'data') },
  });
  if (r.error) throw new Error(`helm ${args[0]} did not finish: ${r.error.message}`);
  if (r.status !== 0) throw new Error(`helm ${args[0]} failed: ${r.stderr}`);
  return r.stdout;
}
const deployment = () => getIfExists(kube, '/apis/apps/v1/namespaces/klutch-bind-backend/deployments/klutch-bind-backend') as Promise<any>;
const providerConfig = () => getIfExists(kube, '/apis/dataservices.anynines.com/v1/providerconfigs/postgresql-service-broker');

describe('helm install of dist/charts/klutch-kit', () => {
  it('installs with /export behind an Ingress and a Gateway route, without the ProviderConfigs, adds them on an upgrade once the providers run, rolls on a setting, and leaves the CRDs on uninstall', async () => {
    // What Crossplane has made by the time an operator installs the chart: its namespace and package CRDs.
    await kube.core.createNamespace({ body: { metadata: { name: 'crossplane-system' } } });
    const pkg = (kind: string) => join(crossplaneSource('v2'), 'cluster', 'crds', `pkg.crossplane.io_${kind}.yaml`);
    await installCrds(
      kube,
      ['functions', 'providers', 'deploymentruntimeconfigs'].flatMap((k) => crdsIn(pkg(k))),
    );

    // And a Gateway controller's CRDs, for the route to /export (an Ingress needs none).
    await installCrds(kube, gatewayApiCrds(['httproutes', 'backendtlspolicies']));

    const chart = join(dir, 'dist', CHART_DIR);
    runHelm('install', 'klutch-kit', chart, '--set', 'ingress.enabled=true', '--set', 'gateway.enabled=true');
    expect(runHelm('status', 'klutch-kit')).toMatch(/STATUS: deployed/);
    expect((await deployment()).spec.replicas).toBe(2);
    expect(await getIfExists(kube, '/apis/pkg.crossplane.io/v1/functions/klutch-kit-function-dataservices')).toBeDefined();
    expect(
      await getIfExists(kube, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/appclusterbindings.klutch.anynines.com'),
    ).toBeDefined();
    const ingress = (await getIfExists(
      kube,
      '/apis/networking.k8s.io/v1/namespaces/klutch-bind-backend/ingresses/klutch-bind-backend',
    )) as any;
    expect(ingress.spec.rules[0].host).toBe('bind.example.com');
    const route = '/apis/gateway.networking.k8s.io/v1/namespaces/klutch-bind-backend/httproutes/klutch-bind-backend';
    expect(((await getIfExists(kube, route)) as any).spec.hostnames).toEqual(['bind.example.com']);
    const policy = '/apis/gateway.networking.k8s.io/v1/namespaces/klutch-bind-backend/backendtlspolicies/klutch-bind-backend';
    expect(((await getIfExists(kube, policy)) as any).spec.validation.hostname).toBe('bind.example.com');
    const settings = '/api/v1/namespaces/klutch-bind-backend/configmaps/klutch-bind-backend-settings';
    expect(((await getIfExists(kube, settings)) as any).data.BACKEND_DEFAULT_BIND_POLICY).toBe('deny-all');

    // The providers run now (their ProviderConfig CRDs are there): the second step of the install.
    const providerKubernetes = goModuleSource(
      wrapperModule('harness/tools/provider-kubernetes'),
      'github.com/crossplane-contrib/provider-kubernetes',
      PROVIDER_KUBERNETES_VERSION,
    );
    await installCrds(kube, [
      ...crdsIn(join(ROOT, 'schemas', 'provider-anynines', 'dataservices.anynines.com_providerconfigs.yaml')),
      ...crdsIn(join(providerKubernetes, 'package', 'crds', 'kubernetes.crossplane.io_providerconfigs.yaml')),
    ]);
    const checksum = async () => (await deployment()).spec.template.metadata.annotations['checksum/settings'];
    const before = await checksum();
    runHelm('upgrade', 'klutch-kit', chart, '--reuse-values', '--set', 'providerConfigs.enabled=true', '--set', 'backend.replicas=3');
    expect(((await providerConfig()) as any).spec.serviceType).toBe('servicebroker');
    expect((await deployment()).spec.replicas).toBe(3);
    expect(await checksum()).toBe(before); // no setting changed: no roll

    runHelm(
      'upgrade',
      'klutch-kit',
      chart,
      '--reuse-values',
      '--set',
      'backend.settings.BACKEND_OIDC_ISSUER_URL=https://login.acme.test',
      '--set',
      'backend.settings.BACKEND_OIDC_CALLBACK_URL=https://bind.acme.test/callback',
    );
    expect(((await getIfExists(kube, settings)) as any).data.BACKEND_OIDC_ISSUER_URL).toBe('https://login.acme.test');
    // /export is served where the login comes back: the Ingress and the route follow the callback's host.
    expect(((await getIfExists(kube, route)) as any).spec.hostnames).toEqual(['bind.acme.test']);
    expect(await checksum()).not.toBe(before);
    expect((await deployment()).spec.replicas).toBe(3);

    runHelm('uninstall', 'klutch-kit');
    await eventually('the backend Deployment gone', async () => ((await deployment()) ? undefined : true));
    expect(await providerConfig()).toBeUndefined();
    // Kept (Helm never deletes crds/): deleting the bind API's CRDs would delete every binding and export.
    expect(
      await getIfExists(kube, '/apis/apiextensions.k8s.io/v1/customresourcedefinitions/appclusterbindings.klutch.anynines.com'),
    ).toBeDefined();
    // 16-28 s in w60-w64; beside Crossplane's package installs on 2 cores (stop 61's CI) it took over 60 s.
  }, 300_000);
});
