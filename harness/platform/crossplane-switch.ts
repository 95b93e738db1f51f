/**
 * What an operator does to Crossplane as deployed (startPlatformOnPods) when moving packages: scale core to zero and
 * back (`kubectl -n crossplane-system scale deployment crossplane --replicas=0|1`), and install the Configuration of
 * other synth output by pushing it to the registry under a new tag and pointing the Configuration at it. The same
 * operations the process-based harness offers (Crossplane's stopCore/startCore/switchConfiguration), on Pods.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import type { ClusterInfo } from '../cluster/control-plane';
import { pinDependency } from '../../synth/package-meta';
import { CROSSPLANE_NAMESPACE } from '../../synth/synth';
import { CONFIGURATION_NAME, CONFIGURATION_PACKAGE } from '../crossplane/crossplane';
import { apply, condition } from '../cluster/kube';
import { eventually, getObject, type Kube, kubeFor, requireOk, type WireObject } from '../cluster/kube';
import type { Node } from '../node/node';
import type { Registry } from '../node/registry';
import { deploymentAvailable, packageHealthy } from './crossplane-deployed';
import { listPods } from './pods';
import { pushPackages } from './push';

const PACKAGE_DIR = 'packages/dataservices';
/** What of the other target's install bundle the Configuration needs first: provider-kubernetes' role and configs. */
const PROVIDER_KUBERNETES_BUNDLE = 'control-plane/provider-kubernetes/provider-kubernetes.yaml';
const PROVIDER_CONFIGS = 'control-plane/provider-configs/';
const BUNDLE_KINDS = ['ClusterRole', 'ClusterRoleBinding', 'Provider', 'DeploymentRuntimeConfig'];

export interface CrossplaneControls {
  /** Crossplane core to zero replicas; its objects stay, nothing reconciles them. Resolves when its Pods are gone. */
  stopCore(): Promise<void>;
  /** Back to one replica; resolves when the Deployment is Available. */
  startCore(): Promise<void>;
  /**
   * The Configuration of `files` (synth output, path → content) pushed as a new tag and installed in place of the
   * current one, after the parts of its install bundle it composes with: provider-kubernetes (its role covers the
   * kinds this target wraps) and provider-kubernetes' configs (the `ClusterProviderConfig` the v2 package's
   * namespaced Objects name; docs/crossplane.md, "Moving to the v2 package"); resolves when it is Healthy and its XRDs Established (and Offered, for claims), or with
   * `wait: false` once the Configuration names it.
   */
  switchConfiguration(files: ReadonlyMap<string, string>, o?: { wait?: boolean }): Promise<void>;
}

export function crossplaneControls(o: {
  cluster: ClusterInfo;
  node: Node;
  registry: Registry;
  log: (line: string) => void;
}): CrossplaneControls {
  const kube = kubeFor(o.cluster);
  const deployment = `/apis/apps/v1/namespaces/${CROSSPLANE_NAMESPACE}/deployments/crossplane`;
  const scale = (replicas: number) => requireOk(kube, 'PATCH', deployment, { spec: { replicas } }, 'application/merge-patch+json');
  let revision = 1;
  // The same package asked for again (migrate's second call waits for the one it installed) is not pushed again: a new
  // tag would make Crossplane resolve and install one more revision of identical content.
  const pushed = new Map<string, string>();
  return {
    stopCore: async () => {
      await scale(0);
      await eventually('Crossplane core scaled to zero: its Pods gone', async () =>
        (await listPods(kube, CROSSPLANE_NAMESPACE, 'app=crossplane')).length === 0 ? true : undefined,
      );
    },
    startCore: async () => {
      await scale(1);
      await deploymentAvailable(kube, o.node, CROSSPLANE_NAMESPACE, 'crossplane', 'app=crossplane');
    },
    switchConfiguration: async (files, w) => {
      const packageFiles = await pinnedToInstalled(
        kube,
        [...files]
          .filter(([path]) => path.startsWith(`${PACKAGE_DIR}/`) && !path.startsWith(`${PACKAGE_DIR}/examples/`))
          .sort(([a], [b]) => (a < b ? -1 : 1)),
      );
      const key = createHash('sha256').update(JSON.stringify(packageFiles)).digest('hex');
      let ref = pushed.get(key);
      if (!ref) {
        ref = `${CONFIGURATION_PACKAGE}-${++revision}`;
        const root = mkdtempSync(join(tmpdir(), 'klutch-kit-configuration-'));
        try {
          for (const [path, text] of packageFiles) {
            const to = join(root, path.slice(PACKAGE_DIR.length + 1));
            mkdirSync(dirname(to), { recursive: true });
            writeFileSync(to, text);
          }
          await pushPackages(o.registry, [{ ref, root }], o.log);
        } finally {
          rmSync(root, { recursive: true, force: true });
        }
        pushed.set(key, ref);
      }
      const bundle = [...files]
        .filter(([p]) => p === PROVIDER_KUBERNETES_BUNDLE || p.startsWith(PROVIDER_CONFIGS))
        .flatMap(([, t]) => parseAllDocuments(t).map((d) => d.toJS() as WireObject))
        // provider-anynines' configs stay as the first bundle applied them (its stand-in serves the legacy kinds).
        .filter((d) => d && (BUNDLE_KINDS.includes(d.kind) || String(d.apiVersion).startsWith('kubernetes.')));
      for (const d of bundle) await apply(kube, d);
      await requireOk(
        kube,
        'PATCH',
        `/apis/pkg.crossplane.io/v1/configurations/${CONFIGURATION_NAME}`,
        { spec: { package: ref } },
        'application/merge-patch+json',
      );
      o.log(`Configuration ${CONFIGURATION_NAME} now names ${ref}`);
      if (w?.wait === false) return;
      await eventually(
        `Configuration ${CONFIGURATION_NAME} resolved to ${ref}`,
        async () => {
          const c = await getObject(kube, `/apis/pkg.crossplane.io/v1/configurations/${CONFIGURATION_NAME}`);
          return String(c?.status?.resolvedPackage ?? '').endsWith(ref.slice(ref.indexOf('/'))) && condition(c, 'Healthy') === 'True'
            ? c
            : undefined;
        },
        240_000,
      );
      const xrds = [...files]
        .filter(([p]) => p.startsWith(`${PACKAGE_DIR}/apis/`) && p.endsWith('.yaml'))
        .map(([, t]) => parse(t) as WireObject)
        .filter((d) => d?.kind === 'CompositeResourceDefinition');
      // Crossplane establishes them side by side: waited for side by side.
      await Promise.all(
        xrds.map((xrd) =>
          eventually(
            `XRD ${xrd.metadata.name} Established`,
            async () => {
              const live = await getObject(kube, `/apis/apiextensions.crossplane.io/v1/compositeresourcedefinitions/${xrd.metadata.name}`);
              const want = xrd.spec.claimNames ? ['Established', 'Offered'] : ['Established'];
              return want.every((t) => condition(live, t) === 'True') ? true : undefined;
            },
            240_000,
          ),
        ),
      );
      await packageHealthy(kube, o.node, 'configurations', CONFIGURATION_NAME);
    },
  };
}

/**
 * The package's files with its dependency on our Function pinned to the digest the installed Function names, where a
 * release installed it by digest: a release's Configuration names its Function so (synth/package-meta.ts
 * pinDependency), and a range would not resolve against a Function whose version is a digest. An operator moving to
 * the v2 package installs the release's v2 Configuration, pinned the same way; this is that, built from synth.
 */
async function pinnedToInstalled(kube: Kube, files: [string, string][]): Promise<[string, string][]> {
  const meta = files.find(([path]) => path === `${PACKAGE_DIR}/crossplane.yaml`);
  if (!meta) return files;
  const deps = ((parse(meta[1]) as WireObject | undefined)?.spec?.dependsOn ?? []) as { function?: string }[];
  const installed = ((await getObject(kube, '/apis/pkg.crossplane.io/v1/functions'))?.items ?? []) as WireObject[];
  let text = meta[1];
  for (const repository of deps.flatMap((d) => (d.function ? [d.function] : []))) {
    const digest = installed
      .map((f) => String(f.spec?.package ?? ''))
      .find((p) => p.startsWith(`${repository}@sha256:`))
      ?.slice(repository.length + 1);
    if (digest) text = pinDependency(text, repository, digest);
  }
  return files.map(([path, t]) => [path, path === meta[0] ? text : t]);
}
