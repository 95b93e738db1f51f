/**
 * The control plane's install bundle: one kustomization (`dist/control-plane/kustomization.yaml`) over the files synth
 * writes there, so an operator installs with `kubectl apply -k` and sets per-installation values in an overlay, the
 * way Klutch and kube-bind install (docs/decisions/install-bundle.md says why kustomize, not Helm).
 *
 * Knobs are kustomize's own: `images:` and `replicas:`; the backend's settings (issuer, client, URLs) as a
 * `configMapGenerator` an overlay merges into (the Pods roll, the name has the content's hash); the Secrets (OIDC
 * client secret, cookie keys, TLS) from the overlay's `secretGenerator` or made out of band under the names below.
 * Monitoring is optional: it needs the Prometheus Operator's CRDs, so it is a kustomize Component of its own
 * (`monitoring/kustomization.yaml`) that an overlay adds with `components:` where the operator runs. The Helm chart
 * (helm-chart.ts) is made of the same files, with these knobs as values.
 */
import { stringify } from 'yaml';
import { selectorLabels } from '../lib/workload';

/** The ConfigMap the backend's per-installation settings come from (BindBackendProps.settingsConfigMap). */
export const BACKEND_SETTINGS = 'klutch-bind-backend-settings';
/** The `kubernetes.io/tls` Secret the backend serves HTTPS with (BindBackendProps.tlsSecret). */
export const BACKEND_TLS_SECRET = 'klutch-bind-backend-tls';
/** Where the settings' defaults are written, relative to the bundle. */
export const SETTINGS_FILE = 'backend/settings.env';

export interface InstallBundleProps {
  /** Files of the bundle, relative to its folder (`crds/x.yaml`); YAML files become resources, in this order. */
  readonly files: readonly string[];
  /** The backend's namespace (of its settings ConfigMap) and Deployment name. */
  readonly backendNamespace: string;
  readonly backendDeployment: string;
  /** The backend's image as its Deployment names it (`repo:tag`). */
  readonly backendImage: string;
  readonly backendReplicas: number;
}

/**
 * On every object (not on selectors or Pod templates): `kubectl wait crd -l app.kubernetes.io/part-of=klutch-kit`
 * between the two applies, and a label to find, prune or delete what the bundle installed. The Components add their
 * own objects after the bundle's labels ran, so they label them too.
 */
const PART_OF_LABELS = [{ pairs: { 'app.kubernetes.io/part-of': 'klutch-kit' } }];

const HEADER = `# The control plane's install bundle, written by \`npm run synth\`. Install: kubectl apply -k <this folder>
# (or from an overlay of yours that lists it under resources: and sets the knobs; see docs/install-bundle.md).
`;

/** The kustomization.yaml text. Resources in the order CRDs first, so a single apply finds its kinds. */
export function kustomization(p: InstallBundleProps): string {
  const order = ['crds/', 'backend/', 'export-templates/', 'function/', 'crossplane/', 'provider-kubernetes/', 'provider-configs/'];
  const rank = (f: string) => {
    const i = order.findIndex((o) => f.startsWith(o));
    return i < 0 ? order.length : i;
  };
  const resources = p.files.filter((f) => f.endsWith('.yaml')).sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
  const colon = p.backendImage.lastIndexOf(':');
  const [image, tag] =
    colon > p.backendImage.lastIndexOf('/')
      ? [p.backendImage.slice(0, colon), p.backendImage.slice(colon + 1)]
      : [p.backendImage, 'latest'];
  const doc = {
    apiVersion: 'kustomize.config.k8s.io/v1beta1',
    kind: 'Kustomization',
    resources,
    labels: PART_OF_LABELS,
    configMapGenerator: [{ name: BACKEND_SETTINGS, namespace: p.backendNamespace, envs: [SETTINGS_FILE] }],
    images: [{ name: image, newTag: tag }],
    replicas: [{ name: p.backendDeployment, count: p.backendReplicas }],
  };
  return HEADER + stringify(doc, { version: '1.1', lineWidth: 0 });
}

/** The settings file (`KEY=value` lines, kustomize's `envs:` format), sorted. */
export function settingsEnv(settings: Readonly<Record<string, string>>): string {
  return Object.keys(settings)
    .sort()
    .map((k) => `${k}=${settings[k]}\n`)
    .join('');
}

const MONITORING_HEADER = `# The optional monitoring of the install bundle, written by \`npm run synth\`: PrometheusRule, ServiceMonitor and
# PodMonitor need the Prometheus Operator's CRDs. Where it runs, add this folder to your overlay under components:
# (see docs/install-bundle.md).
`;

const PRODUCTION_HEADER = `# The optional production settings of the install bundle, written by \`npm run synth\`: the backend's
# PodDisruptionBudget and its replicas spread over nodes and zones. Add this folder to your overlay under components:
# (see docs/install-bundle.md).
`;

/** The backend's replicas spread over nodes and zones (the production Component's, the Helm chart's). */
export function backendSpread(backend: { readonly name: string }): object[] {
  return ['kubernetes.io/hostname', 'topology.kubernetes.io/zone'].map((topologyKey) => ({
    maxSkew: 1,
    topologyKey,
    whenUnsatisfiable: 'ScheduleAnyway',
    labelSelector: { matchLabels: selectorLabels(backend.name) },
  }));
}

/**
 * The production folder's kustomization.yaml: a Component over its YAML files and a patch of the backend Deployment
 * that spreads its Pods over nodes and zones. `ScheduleAnyway`: a cluster with one node or zone still runs them all.
 */
export function productionComponent(files: readonly string[], backend: { readonly namespace: string; readonly name: string }): string {
  const doc = {
    apiVersion: 'kustomize.config.k8s.io/v1alpha1',
    kind: 'Component',
    resources: files.filter((f) => f.endsWith('.yaml')).sort(),
    labels: PART_OF_LABELS,
    patches: [
      {
        target: { kind: 'Deployment', namespace: backend.namespace, name: backend.name },
        patch: stringify([
          {
            op: 'add',
            path: '/spec/template/spec/topologySpreadConstraints',
            value: backendSpread(backend),
          },
        ]),
      },
    ],
  };
  return PRODUCTION_HEADER + stringify(doc, { version: '1.1', lineWidth: 0 });
}

const PRIVATE_REGISTRY_HEADER = `# The optional private registry of the install bundle, written by \`npm run synth\`: every image and package the
# bundle pulls is pulled with the docker-registry Secret klutch-registry, which you create in klutch-bind-backend
# (the backend's image) and crossplane-system (the function's and provider-kubernetes' packages and images). Add this
# folder to your overlay under components: (see docs/install-bundle.md).
`;

/** The Secret the private-registry Component pulls with (type kubernetes.io/dockerconfigjson), in each namespace. */
export const REGISTRY_PULL_SECRET = 'klutch-registry';

/**
 * The private-registry folder's kustomization.yaml: a Component that only patches. The backend Deployment's Pods pull
 * with `imagePullSecrets`; Crossplane pulls a Function's or Provider's package, and its runtime Deployment's image,
 * with the package's `packagePullSecrets` (Crossplane's runtime copies them into the Deployment it makes).
 */
export function privateRegistryComponent(backend: { readonly namespace: string; readonly name: string }): string {
  const pullSecrets = [{ name: REGISTRY_PULL_SECRET }];
  const add = (path: string) => stringify([{ op: 'add', path, value: pullSecrets }]);
  const doc = {
    apiVersion: 'kustomize.config.k8s.io/v1alpha1',
    kind: 'Component',
    patches: [
      {
        target: { kind: 'Deployment', namespace: backend.namespace, name: backend.name },
        patch: add('/spec/template/spec/imagePullSecrets'),
      },
      ...['Function', 'Provider'].map((kind) => ({
        target: { group: 'pkg.crossplane.io', kind },
        patch: add('/spec/packagePullSecrets'),
      })),
    ],
  };
  return PRIVATE_REGISTRY_HEADER + stringify(doc, { version: '1.1', lineWidth: 0 });
}

/**
 * The monitoring folder's kustomization.yaml: a Component over its YAML files, in name order, and `settings` merged
 * into the backend's settings ConfigMap (what the backend must know for monitoring to reach what it makes).
 */
export function monitoringComponent(
  files: readonly string[],
  backend: { readonly namespace: string; readonly settings: Readonly<Record<string, string>> },
): string {
  const doc = {
    apiVersion: 'kustomize.config.k8s.io/v1alpha1',
    kind: 'Component',
    resources: files.filter((f) => f.endsWith('.yaml')).sort(),
    labels: PART_OF_LABELS,
    configMapGenerator: [
      {
        name: BACKEND_SETTINGS,
        namespace: backend.namespace,
        behavior: 'merge',
        literals: Object.keys(backend.settings)
          .sort()
          .map((k) => `${k}=${backend.settings[k]}`),
      },
    ],
  };
  return MONITORING_HEADER + stringify(doc, { version: '1.1', lineWidth: 0 });
}

const EXPOSURE_HEADER = (
  what: string,
) => `# The optional exposure of the backend's /export through ${what}, written by \`npm run synth\`. Add this folder to
# your overlay under components: and patch the host, class or Gateway as yours (see docs/install-bundle.md).
`;

/** An exposure folder's kustomization.yaml (`ingress/`, `gateway/`): a Component over its YAML files. */
export function exposureComponent(files: readonly string[], what: string): string {
  const doc = {
    apiVersion: 'kustomize.config.k8s.io/v1alpha1',
    kind: 'Component',
    resources: files.filter((f) => f.endsWith('.yaml')).sort(),
    labels: PART_OF_LABELS,
  };
  return EXPOSURE_HEADER(what) + stringify(doc, { version: '1.1', lineWidth: 0 });
}
