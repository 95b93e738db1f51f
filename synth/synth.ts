/**
 * `synthesize()`: turns the catalog into the files under dist/ — the Configuration package, the examples, and the
 * control-plane manifests. Everything is rendered in memory first, so a bad definition fails before any file is
 * touched and the previous output stays intact; the same input always gives the same bytes.
 */
import { dirname, join } from 'node:path';
import { App, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
import { stringify } from 'yaml';
import type { Api, CrossplaneTarget } from '../apis/api';
import { Xrd, type ConversionWebhook } from '../apis/xrd';
import { conversionTable } from '../conversion/table';
import { ConversionServer } from '../conversion/deploy/conversion-server';
import { claimSchemaFiles } from './claim-schemas';
import { CHART_DIR, helmChart } from './helm-chart';
import { BACKEND_PROBE_PORT, BindBackend, type BindBackendProps, DEFAULT_BACKEND_IMAGE } from '../backend/deploy/bind-backend';
import { DisruptionBudget } from '../lib/disruption-budget';
import { BackendIngress, BackendRoute } from '../backend/deploy/exposure';
import { AcbLabels } from '../backend/app-cluster-binding/app-cluster-binding.root';
import { Labels, MANAGED_BY } from '../backend/labels';
import { DataServiceComposition } from '../compositions/composition';
import { SelectionComposition } from '../compositions/selection';
import { DEFAULT_FUNCTION_PACKAGE, functionPackage } from '../compositions/function-ref';
import { bindApiCrds } from '../exports/bind-api';
import { ExportTemplate, exportTemplateName } from '../exports/export-template';
import { functionPackageObjects } from '../functions/dataservices/package';
import { KonnectorApiAccess } from '../konnector/deploy/access';
import { AppClusterRole } from '../konnector/deploy/app-cluster-role';
import { DEFAULT_KONNECTOR_NAMESPACE, Konnector, type KonnectorProps } from '../konnector/deploy/konnector';
import { KONNECTOR_PROBE_PORT } from '../lib/konnector-runtime';
import { APP_CLUSTER_ALERTS, CONTROL_PLANE_ALERTS, KlutchAlerts } from '../monitoring/alerts';
import { dashboard, KlutchDashboard } from '../monitoring/dashboard';
import {
  BackendServiceMonitor,
  BindingKonnectorsPodMonitor,
  FunctionPodMonitor,
  KonnectorPodMonitor,
  ScrapeAccess,
} from '../monitoring/scrape';
import { checkUnique } from './catalog';
import { CROSSPLANE_READS_ROLE, CrossplaneReads, crossplaneReadKinds } from './crossplane-reads';
import { replaceTree } from '../lib/files';
import { settingsRead } from '../recipe';
import { selectorLabels } from '../lib/workload';
import { FUNCTION_METRICS_PORT, FunctionRuntime } from '../functions/dataservices/deploy/function-runtime';
import {
  BACKEND_SETTINGS,
  BACKEND_TLS_SECRET,
  exposureComponent,
  kustomization,
  monitoringComponent,
  privateRegistryComponent,
  productionComponent,
  SETTINGS_FILE,
  settingsEnv,
} from './install-bundle';
import { ConfigurationMeta, type PackageDependency } from './package-meta';
import { ProviderConfigs, providerConfigRefs, ProviderKubernetes, referencedKinds } from './provider-configs';
import { crdNamesIn, type CrdNames, resourceNames } from './resource-names';
import type { SynthYaml } from './yaml-memo';

export interface SynthOptions {
  readonly apis: readonly Api[];
  /** Output folder; its `packages/` and `control-plane/` are replaced. */
  readonly outdir: string;
  /** `v1`: XRDs with claims, Klutch-compatible (default). `v2`: namespaced v2 XRDs without claims. */
  readonly target?: CrossplaneTarget;
  /** Our composition function's package reference. @default DEFAULT_FUNCTION_PACKAGE */
  readonly functionPackage?: string;
  /**
   * Platform settings the backends' recipes read, by name: `a9s.organizationGuid` and `a9s.spaceGuid` (the Cloud
   * Foundry org and space of every a9s instance). A setting left out takes the backend's default.
   */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** @default anynines-dataservices */
  readonly packageName?: string;
  readonly providerAnynines?: PackageDependency;
  readonly providerKubernetes?: PackageDependency;
  /** Namespace of the APIServiceExportTemplates, where the bind backend reads them. @default crossplane-system */
  readonly exportNamespace?: string;
  /** The konnector app clusters install (image, replicas, namespace). @default the construct's defaults */
  readonly konnector?: KonnectorProps;
  /** Called with every rendered file before any is written; what it throws stops the run (the breaking-change guard). */
  readonly check?: (files: ReadonlyMap<string, string>) => void;
  /** The bind backend's Deployment and RBAC in control-plane/backend/. @default DEFAULT_BACKEND (example addresses) */
  readonly backend?: BindBackendProps;
  /** Extra files (path below outdir → content), e.g. the function package, rendered by the caller. */
  readonly extraFiles?: Readonly<Record<string, string>>;
  /**
   * Labels on the PrometheusRule, ServiceMonitor and PodMonitors, which the Prometheus Operator's selectors match
   * (kube-prometheus-stack selects `release: <its release>`). @default none
   */
  readonly monitoringLabels?: Readonly<Record<string, string>>;
  /**
   * Prometheus' namespace: the monitoring Component (and app-cluster/monitoring/) opens the metrics ports to it with a
   * NetworkPolicy each, which a CNI that enforces policies needs for the monitors to scrape. @default monitoring
   */
  readonly monitoringNamespace?: string;
  /** Called with one line per output group. */
  readonly onProgress?: (line: string) => void;
  /** How synth writes YAML and reads the CRDs; its command line passes a memo (synth/yaml-memo.ts). @default yaml's */
  readonly yaml?: SynthYaml;
  /**
   * The conversion server that the XRD of every API with previous versions names (required for such an API): its CA,
   * and its URL or Service. @default Service DEFAULT_CONVERSION_SERVICE
   */
  readonly conversion?: ConversionWebhook;
  /**
   * The folder of the CRDs the recipes' kinds come from, read for their RBAC resource names (only for kinds that are
   * not Kubernetes' own). @default `schemas/` of the working directory (the repository)
   */
  readonly schemas?: string;
}

/**
 * The providers the Configuration depends on, each up to its next major: a new major may drop a kind the
 * Compositions compose, and Crossplane would otherwise install it on a fresh control plane. The bounds are joined by
 * a comma: Crossplane v1.20 and v2.2 read constraints with Masterminds semver v1, which refuses a space between them.
 */
export const DEFAULT_PROVIDER_ANYNINES: PackageDependency = {
  package: 'xpkg.upbound.io/anynines/provider-anynines',
  version: '>=v1.5.0, <v2.0.0',
};
export const DEFAULT_PROVIDER_KUBERNETES: PackageDependency = {
  package: 'xpkg.crossplane.io/crossplane-contrib/provider-kubernetes',
  version: '>=v0.18.0, <v2.0.0',
};
/** The v2 target's: its compositions compose the namespaced `kubernetes.m.crossplane.io` Object, new in v1.0.0. */
export const DEFAULT_PROVIDER_KUBERNETES_V2: PackageDependency = { ...DEFAULT_PROVIDER_KUBERNETES, version: '>=v1.0.0, <v2.0.0' };

/** Example addresses: replace them (synthesize({ backend })) with your issuer, backend URL and API server. */
const DEFAULT_BACKEND: BindBackendProps = {
  issuerUrl: 'https://issuer.example.com',
  clientId: 'klutch-bind',
  publicUrl: 'https://bind.example.com',
  externalAddress: 'https://kubernetes.example.com:6443',
};

export const PACKAGE_DIR = 'packages/dataservices';
const CONTROL_PLANE_DIR = 'control-plane';
export const FUNCTION_PACKAGE_DIR = 'packages/function-dataservices';
const KONNECTOR_DIR = 'app-cluster/konnector';
/** The ClusterRole an AppClusterBinding's app cluster kubeconfig needs (konnector/deploy/app-cluster-role.ts). */
const APP_CLUSTER_ROLE_DIR = 'app-cluster/control-plane-konnector';
/** The Function object and the runtime config it runs with (restricted Pod Security). */
const FUNCTION_RUNTIME_DIR = 'control-plane/function';
/** The ProviderConfigs, below CONTROL_PLANE_DIR: a second apply, once the providers run (docs/install-bundle.md). */
const PROVIDER_CONFIGS_DIR = 'provider-configs';
/** PrometheusRule, ServiceMonitor, the function's PodMonitor and the Grafana dashboard (monitoring/). */
const MONITORING_DIR = 'control-plane/monitoring';
/** The konnector's PodMonitor. */
const APP_MONITORING_DIR = 'app-cluster/monitoring';
/** The backend's PodDisruptionBudget and spread, a kustomize Component an overlay adds for production. */
const PRODUCTION_DIR = 'control-plane/production';
/** The optional private registry's Component (synth/install-bundle.ts privateRegistryComponent). */
const PRIVATE_REGISTRY_DIR = 'control-plane/private-registry';
/** Optional Components that expose the backend's `/export`: an Ingress, or a Gateway API route. */
const INGRESS_DIR = 'control-plane/ingress';
const GATEWAY_DIR = 'control-plane/gateway';

/** The public host of the backend: its login callback's (what browsers and `kubectl bind` reach). */
function publicHost(settings: Readonly<Record<string, string>>): string {
  const callback = settings.BACKEND_OIDC_CALLBACK_URL;
  if (!callback || !URL.canParse(callback)) throw new Error(`the backend's settings have no BACKEND_OIDC_CALLBACK_URL URL (${callback})`);
  return new URL(callback).hostname;
}
/** Where kube-prometheus-stack's guide installs Prometheus. */
const DEFAULT_MONITORING_NAMESPACE = 'monitoring';
/** Where Crossplane runs (its Function Pods) and keeps package TLS Secrets; the default of its Helm chart. */
export const CROSSPLANE_NAMESPACE = 'crossplane-system';

export interface SynthResult {
  /** Written files, relative to outdir, sorted. */
  readonly files: string[];
}

/**
 * YAML 1.1, because Kubernetes and Crossplane read YAML with Go's 1.1 parsers, where an unquoted `on`, `off`, `yes` or
 * `no` is a boolean: written as 1.1, such strings are quoted. No line folding, no anchors.
 */
export const YAML_OPTIONS = { version: '1.1', lineWidth: 0, aliasDuplicateObjects: false } as const;

/** One YAML document per object; keys in cdk8s' stable order (apiVersion, kind, metadata, then sorted). */
export function toYaml(objects: readonly unknown[]): string {
  return objects.map((o) => stringify(o, YAML_OPTIONS)).join('---\n');
}

/** The conversion server's Service, where the XRDs of multi-version APIs send ConversionReviews by default. */
const DEFAULT_CONVERSION_SERVICE = { namespace: CROSSPLANE_NAMESPACE, name: 'klutch-kit-conversion', port: 443 } as const;
/** Where synth writes the conversion server's table (conversion/table.ts), when an API has previous versions. */
export const CONVERSION_TABLE_FILE = 'conversion/conversions.json';

function conversionWebhook(o: SynthOptions): ConversionWebhook | undefined {
  if (!o.conversion) return undefined;
  return o.conversion.url || o.conversion.service ? o.conversion : { ...o.conversion, service: DEFAULT_CONVERSION_SERVICE };
}

/** Renders every output file in memory: path below outdir → content. */
export function render(o: SynthOptions): Map<string, string> {
  const apis = checkUnique(o.apis);
  const target = o.target ?? 'v1';
  const fn = functionPackage(o.functionPackage ?? DEFAULT_FUNCTION_PACKAGE);
  checkSettings(apis, o.settings ?? {});
  const yaml = o.yaml?.toYaml ?? toYaml;
  // Read once for both users, and only if a kind is not built in.
  let crdNames: CrdNames[] | undefined;
  const crds = (): CrdNames[] => (crdNames ??= crdNamesIn(o.schemas ?? join(process.cwd(), 'schemas'), o.yaml?.parse));
  const files = new Map<string, string>();
  const xrds: string[] = [];
  const webhook = conversionWebhook(o);
  // One App per file: Chart.toJson() resolves dependencies across its whole App, which is quadratic in one shared App.
  const emit = (path: string, build: (scope: Construct) => void): void => {
    const chart = new Chart(new App(), path.replaceAll('/', '--'));
    build(chart);
    files.set(path, yaml(chart.toJson()));
  };

  emit(
    `${PACKAGE_DIR}/crossplane.yaml`,
    (c) =>
      new ConfigurationMeta(c, 'meta', {
        name: o.packageName ?? 'anynines-dataservices',
        target,
        fn,
        providerAnynines: o.providerAnynines ?? DEFAULT_PROVIDER_ANYNINES,
        providerKubernetes: o.providerKubernetes ?? (target === 'v2' ? DEFAULT_PROVIDER_KUBERNETES_V2 : DEFAULT_PROVIDER_KUBERNETES),
      }),
  );
  for (const api of apis) {
    emit(`${PACKAGE_DIR}/apis/${api.name}/definition.yaml`, (c) => new Xrd(c, 'xrd', { api, target, conversion: webhook }));
    xrds.push(files.get(`${PACKAGE_DIR}/apis/${api.name}/definition.yaml`)!);
    // v2: the XRD's default Composition composes on the backend the composite names in Klutch 1.x's
    // spec.compositionRef (compositions/selection.ts); a claim written for Klutch on Crossplane v2 names a backend's
    // Composition in spec.crossplane.compositionRef, so each backend's is there too, under Klutch's name.
    if (target === 'v2') {
      emit(
        `${PACKAGE_DIR}/apis/${api.name}/composition.yaml`,
        (c) => new SelectionComposition(c, 'composition', { api, fn, settings: o.settings }),
      );
    }
    for (const backend of api.backendNames) {
      emit(
        `${PACKAGE_DIR}/apis/${api.name}/composition-${backend}.yaml`,
        (c) => new DataServiceComposition(c, 'composition', { api, backend, fn, target, settings: o.settings }),
      );
      files.set(`${PACKAGE_DIR}/examples/${api.name}-${backend}.yaml`, yaml([exampleClaim(api, backend, target)]));
    }
    for (const { name: version } of api.versions)
      emit(
        `${CONTROL_PLANE_DIR}/export-templates/${exportTemplateName(api, version)}.yaml`,
        (c) => new ExportTemplate(c, 'template', { api, target, namespace: o.exportNamespace, version }),
      );
  }
  const table = conversionTable(apis, target);
  if (table.apis.length > 0) {
    const text = `${JSON.stringify(table, null, 2)}\n`;
    files.set(CONVERSION_TABLE_FILE, text);
    // The server behind the XRDs' Service, in the install bundle (a webhook by URL runs elsewhere).
    if (webhook?.service)
      emit(
        `${CONTROL_PLANE_DIR}/conversion/${webhook.service.name}.yaml`,
        (c) => new ConversionServer(c, 'conversion', { namespace: webhook.service!.namespace, name: webhook.service!.name, table: text }),
      );
  }
  const [fnMeta, ...fnCrds] = functionPackageObjects();
  files.set(`${FUNCTION_PACKAGE_DIR}/crossplane.yaml`, yaml([fnMeta]));
  for (const crd of fnCrds) files.set(`${FUNCTION_PACKAGE_DIR}/input/${(crd.metadata as { name: string }).name}.yaml`, yaml([crd]));
  for (const crd of bindApiCrds()) {
    files.set(`${CONTROL_PLANE_DIR}/crds/${(crd.metadata as { name: string }).name}.yaml`, yaml([crd]));
  }
  // The install bundle's backend: per-installation settings from a ConfigMap kustomize generates, HTTPS in the Pod.
  const backendProps: BindBackendProps = {
    settingsConfigMap: BACKEND_SETTINGS,
    tlsSecret: BACKEND_TLS_SECRET,
    ...(o.backend ?? DEFAULT_BACKEND),
  };
  const runtime = new Chart(new App(), 'function');
  // One monitoring namespace for the control plane: the backend's, its root konnectors' and the function's scrapes.
  new FunctionRuntime(runtime, 'function', {
    fn,
    namespace: CROSSPLANE_NAMESPACE,
    ...(backendProps.monitoringNamespace !== undefined ? { monitoringNamespace: backendProps.monitoringNamespace } : {}),
  });
  for (const obj of runtime.toJson() as { kind: string; metadata: { name: string } }[]) {
    files.set(`${FUNCTION_RUNTIME_DIR}/${obj.kind.toLowerCase()}-${obj.metadata.name}.yaml`, yaml([obj]));
  }
  const backend = new Chart(new App(), 'backend');
  const bindBackend = new BindBackend(backend, 'backend', backendProps);
  for (const obj of backend.toJson() as { kind: string; metadata: { name: string } }[]) {
    files.set(`${CONTROL_PLANE_DIR}/backend/${obj.kind.toLowerCase()}-${obj.metadata.name}.yaml`, yaml([obj]));
  }
  files.set(`${CONTROL_PLANE_DIR}/${SETTINGS_FILE}`, settingsEnv(bindBackend.settings));
  // What the Compositions name on the provider side, and provider-kubernetes with the runtime Klutch gives it.
  const refs = providerConfigRefs(apis, target);
  for (const ref of refs) {
    emit(
      `${CONTROL_PLANE_DIR}/${PROVIDER_CONFIGS_DIR}/${ref.kind.toLowerCase()}-${ref.name}.yaml`,
      (c) => new ProviderConfigs(c, 'config', { refs: [ref] }),
    );
  }
  emit(
    `${CONTROL_PLANE_DIR}/provider-kubernetes/provider-kubernetes.yaml`,
    (c) =>
      new ProviderKubernetes(c, 'provider', {
        manages: [
          ...new Map(
            apis
              .flatMap((a) => Object.values(a.backends))
              // On v2 the a9s MRs are wrapped too (backends/a9s.ts: a namespaced Object holds each).
              .filter((r) => r.wrapper || (target === 'v2' && r.v2?.wrapper))
              // Its companions (an instance's NetworkPolicy) are wrapped alike.
              .flatMap((r) => [r, ...((target === 'v2' ? r.v2?.companions : undefined) ?? r.companions ?? [])])
              .map((r) => [`${r.resource.apiVersion}/${r.resource.kind}`, r.resource]),
          ).values(),
        ],
        reads: apis.flatMap((a) => Object.values(a.backends)).flatMap(referencedKinds),
        resourceOf: resourceNames(crds, 'provider-kubernetes'),
      }),
  );
  // What Crossplane core reads for the function (the recipes' diagnostics): a ClusterRole its own aggregates.
  const reads = [
    ...new Map(
      apis
        .flatMap((a) => Object.values(a.backends))
        .flatMap(crossplaneReadKinds)
        .map((k) => [`${k.apiVersion}/${k.kind}`, k]),
    ).values(),
  ];
  if (reads.length)
    emit(
      `${CONTROL_PLANE_DIR}/crossplane/clusterrole-${CROSSPLANE_READS_ROLE}.yaml`,
      (c) =>
        new CrossplaneReads(c, 'reads', {
          kinds: reads,
          resourceOf: resourceNames(crds, 'crossplane-reads'),
        }),
    );
  // What kubectl bind installs in an app cluster, and per API the access the konnector needs once it is bound.
  emit(`${KONNECTOR_DIR}/konnector.yaml`, (c) => new Konnector(c, 'konnector', o.konnector));
  for (const api of apis) {
    const claimed = api.permissionClaims
      .filter((c) => !c.group && (c.resource === 'secrets' || c.resource === 'configmaps') && c.owner !== 'Consumer')
      .map((c) => c.resource as 'secrets' | 'configmaps');
    emit(
      `${KONNECTOR_DIR}/access/${api.plural}.yaml`,
      (c) =>
        new KonnectorApiAccess(c, 'access', {
          group: api.group,
          resource: api.plural,
          claimed,
          // Instances: a protected one cannot be deleted in the app cluster (docs/backups.md).
          deletionProtection: hasDeletionProtection(api),
          namespace: o.konnector?.namespace,
          kubeconfigNamespaces: o.konnector?.kubeconfigNamespaces,
        }),
    );
  }
  // What an AppClusterBinding's app cluster kubeconfig needs (not cluster-admin): every API of the catalog.
  emit(
    `${APP_CLUSTER_ROLE_DIR}/clusterrole.yaml`,
    (c) =>
      new AppClusterRole(c, 'role', {
        apis: apis.map((api) => ({
          group: api.group,
          resource: api.plural,
          claimed: api.permissionClaims
            .filter((pc) => !pc.group && (pc.resource === 'secrets' || pc.resource === 'configmaps') && pc.owner !== 'Consumer')
            .map((pc) => pc.resource),
          deletionProtection: hasDeletionProtection(api),
        })),
      }),
  );
  // Monitoring for the Prometheus Operator (optional: a kustomize Component an overlay adds where the operator runs) and Grafana.
  const backendNs = o.backend?.namespace ?? DEFAULT_BACKEND.namespace ?? 'klutch-bind-backend';
  const labels = o.monitoringLabels && Object.keys(o.monitoringLabels).length ? { labels: o.monitoringLabels } : {};
  emit(
    `${MONITORING_DIR}/prometheusrule-${CONTROL_PLANE_ALERTS.name}.yaml`,
    (c) => new KlutchAlerts(c, 'alerts', { namespace: backendNs, group: CONTROL_PLANE_ALERTS, ...labels }),
  );
  emit(
    `${MONITORING_DIR}/servicemonitor-klutch-bind-backend.yaml`,
    (c) => new BackendServiceMonitor(c, 'backend', { namespace: backendNs, ...labels }),
  );
  emit(
    `${MONITORING_DIR}/podmonitor-${fn.name}.yaml`,
    (c) => new FunctionPodMonitor(c, 'function', { namespace: CROSSPLANE_NAMESPACE, functionName: fn.name, ...labels }),
  );
  // The metrics ports, open to Prometheus' namespace: the Pods' own policies admit it only when their props name it.
  const prometheus = o.monitoringNamespace ?? DEFAULT_MONITORING_NAMESPACE;
  emit(
    `${MONITORING_DIR}/networkpolicy-scrape-klutch-bind-backend.yaml`,
    (c) =>
      new ScrapeAccess(c, 'backend-scrape', {
        namespace: backendNs,
        name: 'klutch-bind-backend',
        pods: selectorLabels('klutch-bind-backend'),
        port: BACKEND_PROBE_PORT,
        monitoringNamespace: prometheus,
      }),
  );
  emit(
    `${MONITORING_DIR}/networkpolicy-scrape-${fn.name}.yaml`,
    (c) =>
      new ScrapeAccess(c, 'function-scrape', {
        namespace: CROSSPLANE_NAMESPACE,
        name: fn.name,
        pods: { 'pkg.crossplane.io/function': fn.name },
        port: FUNCTION_METRICS_PORT,
        monitoringNamespace: prometheus,
      }),
  );
  emit(
    `${APP_MONITORING_DIR}/networkpolicy-scrape-konnector.yaml`,
    (c) =>
      new ScrapeAccess(c, 'konnector-scrape', {
        namespace: o.konnector?.namespace ?? DEFAULT_KONNECTOR_NAMESPACE,
        name: 'konnector',
        pods: selectorLabels('konnector'),
        port: KONNECTOR_PROBE_PORT,
        monitoringNamespace: prometheus,
      }),
  );
  emit(
    `${MONITORING_DIR}/podmonitor-klutch-bind-konnectors.yaml`,
    (c) =>
      new BindingKonnectorsPodMonitor(c, 'binding-konnectors', {
        namespace: backendNs,
        podLabels: { [Labels.managedBy]: MANAGED_BY },
        bindingName: AcbLabels.name,
        bindingNamespace: AcbLabels.namespace,
        bindingUid: AcbLabels.uid,
        ...labels,
      }),
  );
  emit(`${MONITORING_DIR}/configmap-klutch-kit-dashboard.yaml`, (c) => new KlutchDashboard(c, 'dashboard', { namespace: backendNs }));
  files.set(`${MONITORING_DIR}/klutch-kit-dashboard.json`, `${JSON.stringify(dashboard(), null, 2)}\n`);
  emit(
    `${APP_MONITORING_DIR}/podmonitor-konnector.yaml`,
    (c) => new KonnectorPodMonitor(c, 'konnector', { namespace: o.konnector?.namespace ?? DEFAULT_KONNECTOR_NAMESPACE, ...labels }),
  );
  emit(
    `${APP_MONITORING_DIR}/prometheusrule-${APP_CLUSTER_ALERTS.name}.yaml`,
    (c) =>
      new KlutchAlerts(c, 'alerts', {
        namespace: o.konnector?.namespace ?? DEFAULT_KONNECTOR_NAMESPACE,
        group: APP_CLUSTER_ALERTS,
        ...labels,
      }),
  );
  files.set(
    `${MONITORING_DIR}/kustomization.yaml`,
    monitoringComponent(
      [...files.keys()].filter((f) => f.startsWith(`${MONITORING_DIR}/`)).map((f) => f.slice(MONITORING_DIR.length + 1)),
      // The backend then admits Prometheus to the konnectors' probe port in every binding root namespace it makes.
      { namespace: backendNs, settings: { BACKEND_MONITORING_NAMESPACE: prometheus } },
    ),
  );
  // Production settings (optional, a Component as monitoring): the backend's disruption budget and spread.
  const backendRef = { namespace: bindBackend.namespace.name, name: bindBackend.deployment.name };
  emit(`${PRODUCTION_DIR}/poddisruptionbudget-${backendRef.name}.yaml`, (c) => new DisruptionBudget(c, 'budget', backendRef));
  files.set(
    `${PRODUCTION_DIR}/kustomization.yaml`,
    productionComponent(
      [...files.keys()].filter((f) => f.startsWith(`${PRODUCTION_DIR}/`)).map((f) => f.slice(PRODUCTION_DIR.length + 1)),
      backendRef,
    ),
  );
  // Exposing /export (optional Components): an Ingress, or a Gateway API route with the backend's TLS verified.
  const exposure = { namespace: backendRef.namespace, service: bindBackend.service.name, host: publicHost(bindBackend.settings) };
  emit(`${INGRESS_DIR}/ingress-${exposure.service}.yaml`, (c) => new BackendIngress(c, 'ingress', exposure));
  emit(`${GATEWAY_DIR}/httproute-${exposure.service}.yaml`, (c) => new BackendRoute(c, 'route', exposure));
  for (const [dir, what] of [
    [INGRESS_DIR, 'an Ingress'],
    [GATEWAY_DIR, 'a Gateway API HTTPRoute'],
  ] as const)
    files.set(
      `${dir}/kustomization.yaml`,
      exposureComponent(
        [...files.keys()].filter((f) => f.startsWith(`${dir}/`)).map((f) => f.slice(dir.length + 1)),
        what,
      ),
    );
  // Pulling from a private registry (optional, a Component that only patches): the pull Secret on every puller.
  files.set(`${PRIVATE_REGISTRY_DIR}/kustomization.yaml`, privateRegistryComponent(backendRef));
  for (const [path, content] of Object.entries(o.extraFiles ?? {})) files.set(path, content);
  const prefix = `${CONTROL_PLANE_DIR}/`;
  files.set(
    `${CONTROL_PLANE_DIR}/kustomization.yaml`,
    kustomization({
      files: [...files.keys()]
        .filter(
          (f) =>
            f.startsWith(prefix) &&
            ![MONITORING_DIR, PRODUCTION_DIR, PRIVATE_REGISTRY_DIR, INGRESS_DIR, GATEWAY_DIR].some((component) =>
              f.startsWith(`${component}/`),
            ),
        )
        .map((f) => f.slice(prefix.length)),
      backendNamespace: bindBackend.namespace.name,
      backendDeployment: bindBackend.deployment.name,
      backendImage: backendProps.image ?? DEFAULT_BACKEND_IMAGE,
      backendReplicas: backendProps.replicas ?? 2,
    }),
  );
  // The same objects as a Helm chart, with the same knobs as values (helm-chart.ts).
  const chart = helmChart({
    files: new Map([...files].filter(([f]) => f.startsWith(prefix)).map(([f, text]) => [f.slice(prefix.length), text])),
    monitoringDir: MONITORING_DIR.slice(prefix.length),
    productionDir: PRODUCTION_DIR.slice(prefix.length),
    ingressDir: INGRESS_DIR.slice(prefix.length),
    gatewayDir: GATEWAY_DIR.slice(prefix.length),
    providerConfigsDir: PROVIDER_CONFIGS_DIR,
    backend: {
      namespace: bindBackend.namespace.name,
      name: bindBackend.deployment.name,
      image: backendProps.image ?? DEFAULT_BACKEND_IMAGE,
      replicas: backendProps.replicas ?? 2,
      settings: bindBackend.settings,
    },
    monitoringSettings: { BACKEND_MONITORING_NAMESPACE: prometheus },
  });
  for (const [path, text] of chart) files.set(`${CHART_DIR}/${path}`, text);
  for (const [path, schema] of claimSchemaFiles(xrds, target)) files.set(path, schema);
  return files;
}

/** Whether claims of `api` have `spec.deletionProtection` (the instance APIs): their app clusters get its policy. */
function hasDeletionProtection(api: Api): boolean {
  return 'deletionProtection' in (api.spec.toJSON().properties ?? {});
}

/** Fails on a setting no recipe reads (a typo would otherwise leave the default in place silently). */
function checkSettings(apis: readonly Api[], settings: Readonly<Record<string, unknown>>): void {
  const known = new Set(apis.flatMap((a) => Object.values(a.backends).flatMap((r) => settingsRead(r))));
  for (const name of Object.keys(settings)) {
    if (!known.has(name)) {
      throw new Error(
        `setting "${name}" is read by no recipe of the catalog; the catalog reads ${[...known].sort().join(', ') || 'no settings'}`,
      );
    }
  }
}

/**
 * The example claim for one backend of an API: the same document on both targets — a claim on v1, a namespaced
 * composite on v2, where `spec.compositionRef` is a field of the API (the target is kept for callers).
 */
export function exampleClaim(api: Api, backend: keyof Api['examples'], _target?: CrossplaneTarget): Record<string, unknown> {
  return {
    apiVersion: api.apiVersion,
    kind: api.kind,
    metadata: { name: `example-${api.name}-${backend}`, namespace: 'default' },
    spec: { ...api.examples[backend], compositionRef: { name: api.compositionName(backend) } },
  };
}

/**
 * Renders and writes the output (or writes `rendered`, render()'s files with any added); a file that has its content
 * already is left as it is.
 */
export function synthesize(o: SynthOptions, rendered?: Map<string, string>): SynthResult {
  const files = rendered ?? render(o);
  o.check?.(files);
  const roots = new Set(
    [...files.keys()].map((p) =>
      p
        .split('/')
        .slice(0, p.startsWith('packages/') ? 2 : 1)
        .join('/'),
    ),
  );
  // Replaced even when nothing is written there: a table left from an earlier catalog would convert stale versions.
  replaceTree(o.outdir, new Set([...roots, dirname(CONVERSION_TABLE_FILE)]), files);
  const sorted = [...files.keys()].sort();
  for (const r of [...roots].sort()) {
    o.onProgress?.(`${join(o.outdir, r)}: ${sorted.filter((p) => p.startsWith(`${r}/`)).length} files`);
  }
  return { files: sorted };
}
