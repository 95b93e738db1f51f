/**
 * The install bundle as an operator uses it, built by the real kustomize (`kubectl kustomize`, the same code as
 * `kubectl apply -k`, from the harness/tools/kube binary): the bundle alone, and an overlay that sets every documented knob.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { loadCatalog, parseYaml } from '../harness/crossplane/catalog';
import { validatorFor } from '../test/support/openapi';
import { goModuleSource, wrapperModule } from '../harness/tools/go';
import { crossplaneSource } from '../harness/tools/crossplane';
import { ensureKubeBinary } from '../harness/tools/kube';
import { BindAnnotations, mayBind, type BindIdentity } from '../backend/authz/bind-policy';
import { parseOptions } from '../backend/options';
import { BACKUP_STORE_CA_FILE } from '../backend/deploy/bind-backend';
import { synthesize } from './synth';
import { REGISTRY_PULL_SECRET } from './install-bundle';
import { podLabelMeta } from '../monitoring/scrape';
import { konnectorDeployment } from '../backend/app-cluster-binding/app-cluster-binding.objects';
import { AcbLabels } from '../backend/app-cluster-binding/app-cluster-binding.root';
import { KONNECTOR_RESOURCES } from '../backend/app-cluster-binding/app-cluster-binding.overrides';
import type { AppClusterBinding } from '../exports/bind-api';
import { admitsIngress, type Source } from '../test/support/network-policy';
import { selectorLabels } from '../lib/workload';
import { BACKEND_PROBE_PORT } from '../backend/deploy/bind-backend';
import { KONNECTOR_PROBE_PORT } from '../lib/konnector-runtime';
import { FUNCTION_METRICS_PORT } from '../functions/dataservices/deploy/function-runtime';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  [k: string]: any;
};

let dir: string;
let kube: string;

const built = new Map<string, Obj[]>();
/** `kubectl kustomize <folder>`: the objects, or a failure with kustomize's message (built once per folder). */
function build(folder: string): Obj[] {
  const done = built.get(folder);
  if (done) return done;
  const r = spawnSync(kube, ['kubectl', 'kustomize', folder], { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`kubectl kustomize ${folder} failed: ${r.stderr}`);
  built.set(folder, parseYaml(r.stdout) as Obj[]);
  return built.get(folder)!;
}
/** An overlay folder `name` beside dist/ with this kustomization (and these other files); returns its path. */
function overlayOf(name: string, kustomization: Record<string, unknown>, files: Record<string, string> = {}): string {
  const overlay = join(dir, name);
  mkdirSync(overlay, { recursive: true });
  for (const [file, text] of Object.entries(files)) writeFileSync(join(overlay, file), text);
  writeFileSync(join(overlay, 'kustomization.yaml'), stringify(kustomization));
  return overlay;
}
const one = (objs: Obj[], kind: string, name?: string): Obj => {
  const found = objs.filter((o) => o.kind === kind && (!name || o.metadata.name === name));
  expect(
    found.map((o) => o.metadata.name),
    `${kind} ${name ?? ''}`,
  ).toHaveLength(1);
  return found[0]!;
};

beforeAll(async () => {
  kube = await ensureKubeBinary();
  dir = mkdtempSync(join(tmpdir(), 'klutch-kit-bundle-'));
  synthesize({ apis: await loadCatalog(), outdir: join(dir, 'dist') });
}, 600_000);

afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('dist/control-plane/kustomization.yaml', () => {
  it('builds on its own: every file synth wrote there except monitoring and production, and the settings ConfigMap the Deployment reads', () => {
    const objs = build(join(dir, 'dist', 'control-plane'));
    const kinds = new Set(objs.map((o) => `${o.apiVersion}/${o.kind}`));
    for (const k of [
      'apiextensions.k8s.io/v1/CustomResourceDefinition',
      'example-backend.klutch.anynines.com/v1alpha1/APIServiceExportTemplate',
      'v1/Namespace',
      'apps/v1/Deployment',
      'v1/Service',
      'networking.k8s.io/v1/NetworkPolicy',
      'admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy',
      'pkg.crossplane.io/v1/Function',
      'pkg.crossplane.io/v1/Provider',
      'pkg.crossplane.io/v1beta1/DeploymentRuntimeConfig',
      'dataservices.anynines.com/v1/ProviderConfig',
      'kubernetes.crossplane.io/v1alpha1/ProviderConfig',
    ]) {
      expect(kinds, k).toContain(k);
    }
    expect(objs.some((o) => /monitoring\.coreos\.com/.test(o.apiVersion))).toBe(false);
    expect(objs.some((o) => o.kind === 'PodDisruptionBudget')).toBe(false);
    const settings = one(objs, 'ConfigMap');
    expect(settings.metadata).toMatchObject({ namespace: 'klutch-bind-backend' });
    expect(settings.metadata.name).toMatch(/^klutch-bind-backend-settings-[a-z0-9]{10}$/);
    expect(settings.data).toEqual({
      BACKEND_DEFAULT_BIND_POLICY: 'deny-all',
      BACKEND_EXTERNAL_ADDRESS: 'https://kubernetes.example.com:6443',
      BACKEND_OIDC_CALLBACK_URL: 'https://bind.example.com/callback',
      BACKEND_OIDC_ISSUER_CLIENT_ID: 'klutch-bind',
      BACKEND_OIDC_ISSUER_URL: 'https://issuer.example.com',
    });
    const c = one(objs, 'Deployment').spec.template.spec.containers[0];
    expect(c.envFrom).toEqual([{ configMapRef: { name: settings.metadata.name } }]);
    expect(c.args.filter((a: string) => /^--(oidc-issuer|oidc-callback|external-address)/.test(a))).toEqual([]);
    expect(c.args).toEqual(
      expect.arrayContaining(['--tls-cert-file=/etc/klutch-bind/tls/tls.crt', '--tls-key-file=/etc/klutch-bind/tls/tls.key']),
    );
    expect(one(objs, 'Service', 'klutch-bind-backend').spec.ports[0]).toMatchObject({ name: 'https', port: 443, targetPort: 8080 });
  });

  it('names every ProviderConfig a Composition names, and each validates against its provider CRD', async () => {
    const objs = build(join(dir, 'dist', 'control-plane'));
    const configs = objs.filter((o) => o.kind === 'ProviderConfig');
    const names = new Set(configs.map((o) => `${o.apiVersion.split('/')[0]}/${o.metadata.name}`));
    // What the Compositions name: a fixed name, or a format over spec.serviceInstanceType (its enum in the XRD).
    const compositions = readdirYaml(join(dir, 'dist', 'packages', 'dataservices', 'apis')).filter((o) => o.kind === 'Composition');
    const xrds = readdirYaml(join(dir, 'dist', 'packages', 'dataservices', 'apis')).filter((o) => o.kind === 'CompositeResourceDefinition');
    const wanted = new Set<string>();
    for (const comp of compositions) {
      const input = comp.spec.pipeline[0].input;
      const group = String((input.wrapper ?? input.resource).apiVersion).split('/')[0];
      const pc = input.providerConfig;
      if (pc.name) wanted.add(`${group}/${pc.name}`);
      else {
        const xrd = xrds.find((x) => x.spec.names.kind === comp.spec.compositeTypeRef.kind);
        const field = xrd?.spec.versions[0].schema.openAPIV3Schema.properties.spec.properties[pc.fromFieldPath.replace(/^spec\./, '')];
        expect(field?.enum?.length, `${comp.metadata.name}: enum of ${pc.fromFieldPath}`).toBeGreaterThan(0);
        for (const v of field.enum) wanted.add(`${group}/${String(pc.format).replace('%s', v)}`);
      }
    }
    expect(wanted).toContain('dataservices.anynines.com/postgresql-service-broker');
    expect(wanted).toContain('kubernetes.crossplane.io/kubernetes-provider');
    expect([...names].sort()).toEqual([...wanted].sort());

    const anynines = validatorFor(
      parseYaml(readFileSync(join(ROOT_SCHEMAS, 'provider-anynines', 'dataservices.anynines.com_providerconfigs.yaml'), 'utf8'))[0]!,
      'v1',
    );
    const pk = goModuleSource(
      wrapperModule('harness/tools/provider-kubernetes'),
      'github.com/crossplane-contrib/provider-kubernetes',
      'v1.3.1',
    );
    const kubernetes = validatorFor(
      parseYaml(readFileSync(join(pk, 'package', 'crds', 'kubernetes.crossplane.io_providerconfigs.yaml'), 'utf8'))[0]!,
      'v1alpha1',
    );
    for (const o of configs) {
      const v = o.apiVersion.startsWith('dataservices.') ? anynines : kubernetes;
      expect(v(o).errors, o.metadata.name).toEqual([]);
    }
    expect(one(objs, 'ProviderConfig', 'postgresql-service-broker').spec).toMatchObject({ serviceType: 'servicebroker' });
    expect(one(objs, 'ProviderConfig', 'postgresql-backup-manager').spec).toMatchObject({ serviceType: 'backupmanager' });
    expect(one(objs, 'ProviderConfig', 'kubernetes-provider').spec).toEqual({ credentials: { source: 'InjectedIdentity' } });
  });

  it('runs provider-kubernetes as Klutch does, with its ServiceAccount named by a DeploymentRuntimeConfig, but without cluster-admin', () => {
    const objs = build(join(dir, 'dist', 'control-plane'));
    const provider = one(objs, 'Provider');
    const drc = one(objs, 'DeploymentRuntimeConfig', provider.spec.runtimeConfigRef.name);
    expect(drc.spec.serviceAccountTemplate).toEqual({ metadata: { name: 'provider-kubernetes' } });
    const binding = one(objs, 'ClusterRoleBinding', 'klutch-kit-provider-kubernetes');
    expect(binding.subjects).toEqual([
      { apiGroup: '', kind: 'ServiceAccount', name: 'provider-kubernetes', namespace: 'crossplane-system' },
    ]);
    expect(binding.roleRef.name).not.toBe('cluster-admin');
    const rules = one(objs, 'ClusterRole', binding.roleRef.name).rules as { apiGroups: string[]; resources: string[]; verbs: string[] }[];
    expect(rules.flatMap((r) => r.resources)).not.toContain('*');
    expect(rules.flatMap((r) => r.apiGroups.map((g) => `${g}/${r.resources.join(',')}`))).toEqual(
      expect.arrayContaining(['postgresql.anynines.com/postgresqls', 'servicebindings.anynines.com/servicebindings']),
    );
    // What an Object only copies from (the cnpg binding reads its instance's LoadBalancer Service): read, not write.
    const verbs = (resource: string) => rules.find((r) => r.resources.includes(resource))?.verbs;
    expect(verbs('services')).toEqual(['get', 'list', 'watch']);
    const crossplane = crossplaneSource('v2');
    const v = validatorFor(
      parseYaml(readFileSync(join(crossplane, 'cluster', 'crds', 'pkg.crossplane.io_deploymentruntimeconfigs.yaml'), 'utf8'))[0]!,
      'v1beta1',
    );
    for (const d of objs.filter((o) => o.kind === 'DeploymentRuntimeConfig')) expect(v(d).errors, d.metadata.name).toEqual([]);
  });

  it('adds monitoring where an overlay asks for its Component: the rules, scrape targets and dashboard, beside the whole bundle', () => {
    const overlay = overlayOf('overlay-monitoring', {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../dist/control-plane'],
      components: ['../dist/control-plane/monitoring'],
    });
    const base = build(join(dir, 'dist', 'control-plane'));
    const objs = build(overlay);
    const added = objs.filter((o) => !base.some((b) => b.kind === o.kind && b.metadata.name === o.metadata.name));
    const settingsOf = (list: Obj[]) =>
      list.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('klutch-bind-backend-settings'));
    expect(
      added
        .filter((o) => o !== settingsOf(objs))
        .map((o) => `${o.kind}/${o.metadata.name}`)
        .sort(),
    ).toEqual([
      'ConfigMap/klutch-kit-dashboard',
      'NetworkPolicy/scrape-klutch-bind-backend',
      'NetworkPolicy/scrape-klutch-kit-function-dataservices',
      'PodMonitor/klutch-bind-konnectors',
      'PodMonitor/klutch-kit-function-dataservices',
      'PrometheusRule/klutch-kit',
      'ServiceMonitor/klutch-bind-backend',
    ]);
    // The settings gain the monitoring namespace (a new ConfigMap name, which the Deployment follows): the backend
    // then lets Prometheus reach the konnectors it runs in binding root namespaces.
    const settings = settingsOf(objs) as any;
    expect(settings.data).toEqual({ ...(settingsOf(base) as any).data, BACKEND_MONITORING_NAMESPACE: 'monitoring' });
    expect(one(objs, 'Deployment').spec.template.spec.containers[0].envFrom).toEqual([{ configMapRef: { name: settings.metadata.name } }]);
    expect(objs).toHaveLength(base.length + added.length - 1);
    expect(one(objs, 'ServiceMonitor').metadata.namespace).toBe('klutch-bind-backend');
    expect(one(objs, 'PodMonitor', 'klutch-kit-function-dataservices').metadata.namespace).toBe('crossplane-system');
    // The konnectors' PodMonitor selects, in any namespace, the Pods the backend's AppClusterBinding controller makes,
    // on their probe port, and names the binding in each series.
    const konnectors = one(objs, 'PodMonitor', 'klutch-bind-konnectors') as any;
    const acb = {
      metadata: { name: 'prod', namespace: 'team-a', uid: '6a1f0c2e-0000-4000-8000-000000000001' },
      spec: { kubeconfigSecretRef: { name: 'app-kubeconfig', key: 'kubeconfig' } },
    } as unknown as AppClusterBinding;
    const pod = konnectorDeployment(acb, 'klutch-bind-team-a-prod', {
      image: 'konnector:v1',
      args: [],
      env: [],
      resources: KONNECTOR_RESOURCES,
    }).spec!.template;
    const labels = pod.metadata!.labels!;
    expect(konnectors.metadata.namespace).toBe('klutch-bind-backend');
    expect(konnectors.spec.namespaceSelector).toEqual({ any: true });
    expect(Object.entries(konnectors.spec.selector.matchLabels).every(([k, v]) => labels[k] === v)).toBe(true);
    for (const e of konnectors.spec.selector.matchExpressions) expect(labels, e.key).toHaveProperty([e.key]);
    // What an AppClusterBinding's Pods carry and no other Pod the backend makes does (the backend's own, a
    // consumer's) is what it matches on: the binding's uid label.
    expect(Object.keys(labels)).toContain(AcbLabels.uid);
    const port = konnectors.spec.podMetricsEndpoints[0].port;
    expect(pod.spec!.containers[0]!.ports).toEqual(expect.arrayContaining([expect.objectContaining({ name: port })]));
    const relabelled = (konnectors.spec.podMetricsEndpoints[0].relabelings as { sourceLabels: string[]; targetLabel: string }[]).map(
      (r) => `${r.targetLabel}=${labels[Object.keys(labels).find((k) => podLabelMeta(k) === r.sourceLabels[0])!]}`,
    );
    expect(relabelled).toEqual(['appclusterbinding=prod', 'appclusterbinding_namespace=team-a']);
  });

  it("adds production settings where an overlay asks for its Component: the backend's disruption budget over its own Pods, spread over nodes and zones", () => {
    const overlay = overlayOf('overlay-production', {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../dist/control-plane'],
      components: ['../dist/control-plane/production'],
    });
    const base = build(join(dir, 'dist', 'control-plane'));
    const objs = build(overlay);
    const added = objs.filter((o) => !base.some((b) => b.kind === o.kind && b.metadata.name === o.metadata.name));
    expect(added.map((o) => `${o.kind}/${o.metadata.namespace}/${o.metadata.name}`)).toEqual([
      'PodDisruptionBudget/klutch-bind-backend/klutch-bind-backend',
    ]);
    const deployment = one(objs, 'Deployment', 'klutch-bind-backend') as any;
    const podLabels = deployment.spec.template.metadata.labels as Record<string, string>;
    const selects = (s: { matchLabels: Record<string, string> }) => Object.entries(s.matchLabels).every(([k, v]) => podLabels[k] === v);
    // The budget and both spread constraints select exactly the backend's Pods (a selector that matched none would do nothing).
    const budget = added[0] as any;
    expect(budget.spec).toMatchObject({ maxUnavailable: 1 });
    // Labelled as the base's objects are (`kubectl get pdb -l app.kubernetes.io/part-of=klutch-kit` finds it).
    expect(budget.metadata.labels).toMatchObject({ 'app.kubernetes.io/part-of': 'klutch-kit' });
    expect(selects(budget.spec.selector)).toBe(true);
    const spread = deployment.spec.template.spec.topologySpreadConstraints as any[];
    expect(spread.map((c) => `${c.topologyKey} ${c.whenUnsatisfiable}`)).toEqual([
      'kubernetes.io/hostname ScheduleAnyway',
      'topology.kubernetes.io/zone ScheduleAnyway',
    ]);
    for (const c of spread) expect(selects(c.labelSelector)).toBe(true);
    // Nothing else of the bundle changes.
    const without = (o: Obj) =>
      JSON.stringify(o.kind === 'Deployment' && o.metadata.name === 'klutch-bind-backend' ? { ...o, spec: null } : o);
    expect(objs.filter((o) => !added.includes(o)).map(without)).toEqual(base.map(without));
  });

  it("pulls from a private registry where an overlay asks for its Component: the backend's Pods, and Crossplane the function's and provider-kubernetes' packages and images", () => {
    const overlay = overlayOf('overlay-private-registry', {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../dist/control-plane'],
      components: ['../dist/control-plane/private-registry', '../dist/control-plane/production'],
    });
    const base = build(join(dir, 'dist', 'control-plane'));
    const objs = build(overlay);
    const pullSecrets = [{ name: REGISTRY_PULL_SECRET }];
    const deployment = one(objs, 'Deployment', 'klutch-bind-backend') as any;
    expect(deployment.spec.template.spec.imagePullSecrets).toEqual(pullSecrets);
    // The production Component's patch of the same Deployment still holds beside it.
    expect(deployment.spec.template.spec.topologySpreadConstraints).toHaveLength(2);
    const packages = objs.filter((o) => o.apiVersion.startsWith('pkg.crossplane.io/') && ['Function', 'Provider'].includes(o.kind));
    expect(packages.map((o) => o.kind).sort()).toEqual(['Function', 'Provider']);
    // As both Crossplane lines' CRDs define the field (a misspelt one would be pruned, and nothing pulled with it).
    for (const line of ['v1', 'v2'] as const)
      for (const o of packages) {
        const crd = parseYaml(
          readFileSync(join(crossplaneSource(line), 'cluster', 'crds', `pkg.crossplane.io_${o.kind.toLowerCase()}s.yaml`), 'utf8'),
        )[0]!;
        expect(validatorFor(crd, 'v1')(o).errors, `${line} ${o.kind}`).toEqual([]);
        expect((o as any).spec.packagePullSecrets, o.kind).toEqual(pullSecrets);
      }
    // Nothing else of the bundle changes (the budget aside).
    const patched = (o: Obj) => o.kind === 'Deployment' || packages.some((p) => p.kind === o.kind && p.metadata.name === o.metadata.name);
    const without = (o: Obj) => JSON.stringify(patched(o) ? { ...o, spec: null } : o);
    expect(objs.filter((o) => o.kind !== 'PodDisruptionBudget').map(without)).toEqual(base.map(without));
  });

  it('exposes /export where an overlay asks for it: an Ingress of its host and class, or a Gateway route with the backend verified', () => {
    const ingress = one(
      build(
        overlayOf('ingress', {
          apiVersion: 'kustomize.config.k8s.io/v1beta1',
          kind: 'Kustomization',
          resources: ['../dist/control-plane'],
          components: ['../dist/control-plane/ingress'],
          patches: [
            {
              target: { kind: 'Ingress', name: 'klutch-bind-backend' },
              patch: stringify([
                { op: 'replace', path: '/spec/rules/0/host', value: 'bind.acme.example' },
                { op: 'replace', path: '/spec/tls/0/hosts/0', value: 'bind.acme.example' },
                { op: 'add', path: '/spec/ingressClassName', value: 'traefik' },
                { op: 'add', path: '/metadata/annotations', value: { 'cert-manager.io/cluster-issuer': 'letsencrypt' } },
              ]),
            },
          ],
        }),
      ),
      'Ingress',
    );
    expect(ingress.metadata).toMatchObject({
      labels: { 'app.kubernetes.io/part-of': 'klutch-kit' },
      annotations: { 'cert-manager.io/cluster-issuer': 'letsencrypt' },
    });
    expect(ingress.spec).toMatchObject({
      ingressClassName: 'traefik',
      tls: [{ hosts: ['bind.acme.example'], secretName: 'klutch-bind-export-tls' }],
      rules: [
        { host: 'bind.acme.example', http: { paths: [{ backend: { service: { name: 'klutch-bind-backend', port: { number: 443 } } } }] } },
      ],
    });
    const gateway = build(
      overlayOf('gateway', {
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['../dist/control-plane'],
        components: ['../dist/control-plane/gateway'],
      }),
    );
    // The route goes to the Service port that serves HTTPS, which the policy has the Gateway verify.
    const service = one(gateway, 'Service', 'klutch-bind-backend');
    const route = one(gateway, 'HTTPRoute');
    const port = route.spec.rules[0].backendRefs[0].port;
    expect(service.spec.ports.find((p: any) => p.port === port).name).toBe('https');
    expect(one(gateway, 'BackendTLSPolicy').spec.targetRefs).toEqual([{ group: '', kind: 'Service', name: service.metadata.name }]);
  });

  it("lets Prometheus' namespace, and no other, reach the metrics ports its monitors scrape, where the CNI enforces policies", () => {
    const withComponent = build(
      overlayOf('overlay-monitoring-scrape', {
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['../dist/control-plane'],
        components: ['../dist/control-plane/monitoring'],
      }),
    );
    const policies = (objs: Obj[]) => objs.filter((o) => o.kind === 'NetworkPolicy') as never[];
    const prometheus = (namespace: string): Source => ({
      namespace,
      namespaceLabels: { 'kubernetes.io/metadata.name': namespace },
      labels: { 'app.kubernetes.io/name': 'prometheus' },
      ip: '10.0.3.7',
    });
    const backend = { namespace: 'klutch-bind-backend', labels: selectorLabels('klutch-bind-backend') };
    const fn = { namespace: 'crossplane-system', labels: { 'pkg.crossplane.io/function': 'klutch-kit-function-dataservices' } };
    for (const [target, port] of [
      [backend, BACKEND_PROBE_PORT],
      [fn, FUNCTION_METRICS_PORT],
    ] as const) {
      expect(admitsIngress(policies(withComponent), target, prometheus('monitoring'), port), target.namespace).toBe(true);
      expect(admitsIngress(policies(withComponent), target, prometheus('team-a'), port), target.namespace).toBe(false);
      // The bundle alone keeps the port shut: the Component is what opens it.
      expect(admitsIngress(policies(build(join(dir, 'dist', 'control-plane'))), target, prometheus('monitoring'), port)).toBe(false);
    }
    // In the app cluster: the konnector's policies and the one beside its PodMonitor.
    const konnector = { namespace: 'klutch-bind', labels: selectorLabels('konnector') };
    const appPolicies = (withScrape: boolean) =>
      policies([
        ...(parseYaml(readFileSync(join(dir, 'dist', 'app-cluster', 'konnector', 'konnector.yaml'), 'utf8')) as Obj[]),
        ...(withScrape
          ? (parseYaml(
              readFileSync(join(dir, 'dist', 'app-cluster', 'monitoring', 'networkpolicy-scrape-konnector.yaml'), 'utf8'),
            ) as Obj[])
          : []),
      ]);
    expect(admitsIngress(appPolicies(true), konnector, prometheus('monitoring'), KONNECTOR_PROBE_PORT)).toBe(true);
    expect(admitsIngress(appPolicies(true), konnector, prometheus('team-a'), KONNECTOR_PROBE_PORT)).toBe(false);
    expect(admitsIngress(appPolicies(false), konnector, prometheus('monitoring'), KONNECTOR_PROBE_PORT)).toBe(false);
  });

  it("labels the rules and scrape targets for kube-prometheus-stack's selectors with the documented patch, and nothing else", () => {
    // docs/monitoring.md, "On kube-prometheus-stack": the same patch, as an operator copies it.
    const overlay = overlayOf('overlay-monitoring-release', {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../dist/control-plane'],
      components: ['../dist/control-plane/monitoring'],
      patches: [
        {
          target: { group: 'monitoring.coreos.com' },
          patch: '- op: add\n  path: /metadata/labels\n  value:\n    release: kube-prometheus-stack\n',
        },
      ],
    });
    const objs = build(overlay);
    const labelled = objs.filter((o) => o.metadata.labels?.release === 'kube-prometheus-stack');
    expect(labelled.map((o) => o.kind).sort()).toEqual(['PodMonitor', 'PodMonitor', 'PrometheusRule', 'ServiceMonitor']);
  });

  it('takes every documented knob from an overlay: settings, Secrets, image, replicas, a ProviderConfig URL', () => {
    const overlay = overlayOf(
      'overlay',
      {
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['../dist/control-plane'],
        configMapGenerator: [
          {
            name: 'klutch-bind-backend-settings',
            namespace: 'klutch-bind-backend',
            behavior: 'merge',
            literals: [
              'BACKEND_OIDC_ISSUER_URL=https://login.acme.test/realms/platform',
              'BACKEND_OIDC_CALLBACK_URL=https://bind.acme.test/callback',
            ],
          },
        ],
        secretGenerator: [
          { name: 'oidc-client', namespace: 'klutch-bind-backend', literals: ['client-secret=s3cret'] },
          { name: 'cookie-keys', namespace: 'klutch-bind-backend', literals: ['keys=a2V5'] },
          { name: 'klutch-bind-backend-tls', namespace: 'klutch-bind-backend', type: 'kubernetes.io/tls', files: ['tls.crt', 'tls.key'] },
        ],
        images: [{ name: 'ghcr.io/klutch-kit/bind-backend', newName: 'registry.acme.test/bind-backend', newTag: 'v0.2.0' }],
        replicas: [{ name: 'klutch-bind-backend', count: 3 }],
        patches: [
          {
            target: { group: 'dataservices.anynines.com', kind: 'ProviderConfig', name: 'postgresql-service-broker' },
            patch: stringify([{ op: 'replace', path: '/spec/url', value: 'https://pg-broker.acme.test' }]),
          },
        ],
      },
      { 'tls.crt': 'CERT\n', 'tls.key': 'KEY\n' },
    );
    const objs = build(overlay);
    const settings = one(objs, 'ConfigMap');
    expect(settings.data).toMatchObject({
      BACKEND_OIDC_ISSUER_URL: 'https://login.acme.test/realms/platform',
      BACKEND_OIDC_CALLBACK_URL: 'https://bind.acme.test/callback',
      BACKEND_OIDC_ISSUER_CLIENT_ID: 'klutch-bind',
    });
    const d = one(objs, 'Deployment');
    expect(d.spec.replicas).toBe(3);
    const pod = d.spec.template.spec;
    expect(pod.containers[0].image).toBe('registry.acme.test/bind-backend:v0.2.0');
    expect(pod.containers[0].envFrom).toEqual([{ configMapRef: { name: settings.metadata.name } }]);
    // Generated Secrets carry a hash suffix; kustomize rewrites every reference to them, so the Pods roll on a change.
    const secret = (prefix: string) => objs.find((o) => o.kind === 'Secret' && o.metadata.name.startsWith(`${prefix}-`))!.metadata.name;
    const volumes = Object.fromEntries(pod.volumes.map((v: any) => [v.name, v.secret?.secretName]));
    expect(volumes).toMatchObject({ 'cookie-keys': secret('cookie-keys'), tls: secret('klutch-bind-backend-tls') });
    const env = pod.containers[0].env.find((e: any) => e.name === 'BACKEND_OIDC_ISSUER_CLIENT_SECRET');
    expect(env.valueFrom.secretKeyRef.name).toBe(secret('oidc-client'));
    expect(one(objs, 'Secret', secret('klutch-bind-backend-tls')).type).toBe('kubernetes.io/tls');
    expect(one(objs, 'ProviderConfig', 'postgresql-service-broker').spec.url).toBe('https://pg-broker.acme.test');
    expect(one(objs, 'ProviderConfig', 'mariadb-service-broker').spec.url).toBe('https://mariadb-service-broker.example.com');
  });

  it('takes the object store of backups from an overlay as docs/backups.md shows it: its address, root keys, CA and egress', () => {
    const overlay = overlayOf(
      'overlay-backup-store',
      {
        apiVersion: 'kustomize.config.k8s.io/v1beta1',
        kind: 'Kustomization',
        resources: ['../dist/control-plane'],
        configMapGenerator: [
          {
            name: 'klutch-bind-backend-settings',
            namespace: 'klutch-bind-backend',
            behavior: 'merge',
            literals: [
              'BACKEND_BACKUP_STORE_ENDPOINT=https://versitygw.klutch-object-store.svc:7070',
              'BACKEND_BACKUP_STORE_CA_FILE=/etc/klutch-bind/backup-store-ca/ca.crt',
            ],
          },
          { name: 'klutch-backup-store-ca', namespace: 'klutch-bind-backend', files: ['ca.crt=store-ca.crt'] },
        ],
        secretGenerator: [
          { name: 'klutch-backup-store-admin', namespace: 'klutch-bind-backend', literals: ['access-key=ROOT', 'secret-key=s3cret'] },
        ],
        patches: [
          {
            target: { kind: 'NetworkPolicy', name: 'klutch-bind-backend' },
            patch: stringify([
              {
                op: 'add',
                path: '/spec/egress/-',
                value: {
                  to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'klutch-object-store' } } }],
                  ports: [{ port: 7070, protocol: 'TCP' }],
                },
              },
            ]),
          },
        ],
      },
      { 'store-ca.crt': 'STORE CA\n' },
    );
    const objs = build(overlay);
    const generated = (kind: string, prefix: string) =>
      objs.find((o) => o.kind === kind && o.metadata.name.startsWith(`${prefix}-`))!.metadata.name as string;
    const pod = one(objs, 'Deployment').spec.template.spec;
    const env = Object.fromEntries(pod.containers[0].env.map((e: any) => [e.name, e.valueFrom?.secretKeyRef]));
    expect(env.BACKEND_BACKUP_STORE_ADMIN_ACCESS_KEY).toEqual({
      name: generated('Secret', 'klutch-backup-store-admin'),
      key: 'access-key',
      optional: true,
    });
    expect(env.BACKEND_BACKUP_STORE_ADMIN_SECRET_KEY).toEqual({
      name: generated('Secret', 'klutch-backup-store-admin'),
      key: 'secret-key',
      optional: true,
    });
    const ca = pod.volumes.find((v: any) => v.name === 'backup-store-ca').configMap;
    expect(ca).toMatchObject({ name: generated('ConfigMap', 'klutch-backup-store-ca'), optional: true });
    const mount = pod.containers[0].volumeMounts.find((m: any) => m.name === 'backup-store-ca');
    expect(`${mount.mountPath}/${ca.items[0].path}`).toBe(BACKUP_STORE_CA_FILE);
    // The backend takes what the Pod gets: its settings and the keys from the Secret.
    const settings = objs.find((o) => o.kind === 'ConfigMap' && o.metadata.name.startsWith('klutch-bind-backend-settings-'))!.data;
    const o = parseOptions([`--cookie-keys-file=/k`], {
      ...settings,
      BACKEND_OIDC_ISSUER_CLIENT_SECRET: 's',
      BACKEND_BACKUP_STORE_ADMIN_ACCESS_KEY: 'ROOT',
      BACKEND_BACKUP_STORE_ADMIN_SECRET_KEY: 's3cret',
    });
    expect(o).toMatchObject({
      backupStore: {
        endpoint: 'https://versitygw.klutch-object-store.svc:7070',
        caFile: BACKUP_STORE_CA_FILE,
        bucket: 'klutch-%s',
        secret: 'klutch-backup-store',
      },
    });
    const egress = one(objs, 'NetworkPolicy', 'klutch-bind-backend').spec.egress.at(-1);
    expect(egress.ports).toEqual([{ port: 7070, protocol: 'TCP' }]);
    // Without the overlay's knobs the Pod starts the same, and makes no tenants.
    const bare = one(build(join(dir, 'dist', 'control-plane')), 'Deployment').spec.template.spec;
    expect(bare.volumes.find((v: any) => v.name === 'backup-store-ca').configMap.optional).toBe(true);
  });

  it('fails closed (issue 34, item 10): its backend lets nobody bind an API until the overlay grants it on the template', () => {
    /** The policy the bundle's backend runs with (its args and settings, as the Pod gets them) applied to `who`. */
    const decide = (objs: Obj[], who: BindIdentity) => {
      const c = one(objs, 'Deployment').spec.template.spec.containers[0];
      const env = { ...one(objs, 'ConfigMap').data, BACKEND_OIDC_ISSUER_CLIENT_SECRET: 's' };
      const o = parseOptions(c.args, env);
      if (typeof o === 'string') throw new Error(`the Deployment asks for --${o}`);
      return objs.filter((x) => x.kind === 'APIServiceExportTemplate').map((t) => mayBind(who, t as never, o.defaultBindPolicy));
    };
    const alice: BindIdentity = { subject: 'alice', groups: ['dba'] };
    const shipped = decide(build(join(dir, 'dist', 'control-plane')), alice);
    expect(shipped.length).toBeGreaterThan(5);
    expect(shipped.filter((d) => d.allowed)).toEqual([]);
    expect(shipped.every((d) => !d.allowed && d.reason === 'default-deny')).toBe(true);
    // The documented grant: one patch over every template (or one per API, naming it).
    const granted = overlayOf('grant', {
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: ['../dist/control-plane'],
      patches: [
        {
          target: { kind: 'APIServiceExportTemplate' },
          patch: stringify({
            apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
            kind: 'APIServiceExportTemplate',
            metadata: { name: 'any', annotations: { [BindAnnotations.allowedGroups]: 'dba' } },
          }),
        },
      ],
    });
    expect(decide(build(granted), alice).every((d) => d.allowed)).toBe(true);
    expect(decide(build(granted), { subject: 'mallory', groups: ['dev'] }).some((d) => d.allowed)).toBe(false);
  });

  it("on the v2 target names provider-kubernetes' cluster-scoped ClusterProviderConfig, valid against its CRD", async () => {
    synthesize({ apis: await loadCatalog(), outdir: join(dir, 'v2'), target: 'v2' });
    const objs = build(join(dir, 'v2', 'control-plane'));
    const config = one(objs, 'ClusterProviderConfig', 'kubernetes-provider');
    expect(config.apiVersion).toBe('kubernetes.m.crossplane.io/v1alpha1');
    const pk = goModuleSource(
      wrapperModule('harness/tools/provider-kubernetes'),
      'github.com/crossplane-contrib/provider-kubernetes',
      'v1.3.1',
    );
    const crd = parseYaml(readFileSync(join(pk, 'package', 'crds', 'kubernetes.m.crossplane.io_clusterproviderconfigs.yaml'), 'utf8'))[0]!;
    expect(validatorFor(crd, 'v1alpha1')(config).errors).toEqual([]);
    expect(objs.filter((o) => o.kind === 'ProviderConfig' && o.apiVersion.startsWith('kubernetes.'))).toEqual([]);
  });

  it('fails an overlay whose knob names no object of the bundle (kustomize says which), so the check can fail', () => {
    const overlay = overlayOf('overlay-typo', {
      resources: ['../dist/control-plane'],
      configMapGenerator: [{ name: 'klutch-bind-backend-setings', namespace: 'klutch-bind-backend', behavior: 'merge', literals: ['A=b'] }],
    });
    expect(() => build(overlay)).toThrow(/klutch-bind-backend-setings/);
  });
});

const ROOT_SCHEMAS = join(import.meta.dirname, '..', 'schemas');

function readdirYaml(folder: string): Obj[] {
  const out: Obj[] = [];
  const walk = (d: string): void => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      if (e.isDirectory()) walk(join(d, e.name));
      else if (e.name.endsWith('.yaml')) out.push(...(parseYaml(readFileSync(join(d, e.name), 'utf8')) as Obj[]));
    }
  };
  walk(folder);
  return out;
}
