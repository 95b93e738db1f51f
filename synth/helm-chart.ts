/**
 * The control plane's Helm chart (`charts/klutch-kit/`, issue 37 item 3), beside the kustomize bundle and made of the
 * same objects: every object the bundle installs, read back from the files synth just rendered for it, with the
 * bundle's knobs as values. Nothing is written twice: a change to a construct changes both, and
 * synth/helm-chart.test.ts holds `helm template` equal to `kubectl kustomize` for each knob.
 *
 * | kustomize (docs/install-bundle.md)              | values                                    |
 * |-------------------------------------------------|-------------------------------------------|
 * | `images:` of the backend                         | `backend.image.repository`, `.tag`        |
 * | `replicas:` of the backend                       | `backend.replicas`                        |
 * | the settings ConfigMap's `configMapGenerator`    | `backend.settings` (merged over defaults) |
 * | the `monitoring/` Component                      | `monitoring.enabled`                      |
 * | the `production/` Component                      | `production.enabled`                      |
 * | the `private-registry/` Component                | `privateRegistry.enabled`                 |
 * | the `ingress/`, `gateway/` Components            | `ingress.*`, `gateway.*`                  |
 * | the second `kubectl apply` once providers run    | `providerConfigs.enabled`                 |
 *
 * The ProviderConfigs are off by default: their kinds exist only once provider-kubernetes (in the chart) and
 * provider-anynines (from the Configuration's dependsOn) run, and Helm cannot install an object of a kind the API
 * server does not know yet; `helm upgrade --set providerConfigs.enabled=true` adds them then. The bind API's CRDs are
 * in `crds/`: Helm installs them before anything else (templates of kinds a CRD of the same release defines cannot be
 * mapped), never deletes them (that would delete every binding) and never upgrades them (docs/helm.md: an upgrade
 * applies them first, with kubectl).
 */
import { parseAllDocuments, stringify } from 'yaml';
import { VERSION } from '../lib/version';
import { DEFAULT_GATEWAY } from '../backend/deploy/exposure';
import { BACKEND_SETTINGS, backendSpread, REGISTRY_PULL_SECRET } from './install-bundle';

export const CHART_DIR = 'charts/klutch-kit';

type Obj = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  [k: string]: any;
};

export interface HelmChartProps {
  /** The bundle's files, relative to `control-plane/`: YAML files are templates, kustomization.yaml files are not. */
  readonly files: ReadonlyMap<string, string>;
  /** Folders of the bundle's Components, relative to `control-plane/`. */
  readonly monitoringDir: string;
  readonly productionDir: string;
  readonly ingressDir: string;
  readonly gatewayDir: string;
  readonly providerConfigsDir: string;
  readonly backend: {
    readonly namespace: string;
    readonly name: string;
    readonly image: string;
    readonly replicas: number;
    readonly settings: Readonly<Record<string, string>>;
  };
  /** What the monitoring Component merges into the backend's settings. */
  readonly monitoringSettings: Readonly<Record<string, string>>;
}

const PART_OF = { 'app.kubernetes.io/part-of': 'klutch-kit' };
const SETTINGS_TEMPLATE = 'backend/configmap-settings.yaml';

/** The chart's files, relative to CHART_DIR. */
export function helmChart(p: HelmChartProps): Map<string, string> {
  const out = new Map<string, string>();
  const colon = p.backend.image.lastIndexOf(':');
  const [repository, tag] =
    colon > p.backend.image.lastIndexOf('/')
      ? [p.backend.image.slice(0, colon), p.backend.image.slice(colon + 1)]
      : [p.backend.image, 'latest'];
  out.set(
    'Chart.yaml',
    stringify(
      {
        apiVersion: 'v2',
        name: 'klutch-kit',
        description:
          "klutch-kit's control plane: the bind backend, the bind API's CRDs, the export templates, the composition function and provider-kubernetes (Crossplane must run first)",
        type: 'application',
        version: VERSION.replace(/^v/, ''),
        appVersion: VERSION,
        kubeVersion: '>=1.30.0-0',
      },
      { lineWidth: 0 },
    ),
  );
  out.set(
    'values.yaml',
    `# The knobs of the install bundle (docs/install-bundle.md), as values; docs/helm.md says what each does.\n${stringify({
      backend: {
        image: { repository, tag },
        replicas: p.backend.replicas,
        settings: Object.fromEntries(Object.entries(p.backend.settings).sort(([a], [b]) => a.localeCompare(b))),
      },
      monitoring: { enabled: false },
      production: { enabled: false },
      privateRegistry: { enabled: false },
      // The host is BACKEND_OIDC_CALLBACK_URL's: the login comes back where /export is served.
      ingress: { enabled: false, className: '', annotations: {} },
      gateway: { enabled: false, parentRef: { ...DEFAULT_GATEWAY } },
      providerConfigs: { enabled: false },
    })}`,
  );
  out.set(`templates/${SETTINGS_TEMPLATE}`, settingsTemplate(p));
  const condition = (path: string) =>
    path.startsWith(`${p.monitoringDir}/`)
      ? '.Values.monitoring.enabled'
      : path.startsWith(`${p.productionDir}/`)
        ? '.Values.production.enabled'
        : path.startsWith(`${p.ingressDir}/`)
          ? '.Values.ingress.enabled'
          : path.startsWith(`${p.gatewayDir}/`)
            ? '.Values.gateway.enabled'
            : path.startsWith(`${p.providerConfigsDir}/`)
              ? '.Values.providerConfigs.enabled'
              : undefined;
  for (const [path, text] of p.files) {
    if (!path.endsWith('.yaml') || path.endsWith('kustomization.yaml')) continue;
    const blocks: string[] = [];
    const docs = parseAllDocuments(text).map((d) => templated(d.toJS() as Obj, p, blocks));
    // Helm installs crds/ before it maps the templates' kinds, which a CRD among the templates would define too late.
    if (docs.every((o) => o.kind === 'CustomResourceDefinition')) {
      out.set(`crds/${path.split('/').pop()}`, docs.map((o) => stringify(o, { version: '1.1', lineWidth: 0 })).join('---\n'));
      continue;
    }
    let body = docs.map((o) => render(o, blocks)).join('---\n');
    const when = condition(path);
    if (when) body = `{{- if ${when} }}\n${body}{{- end }}\n`;
    out.set(`templates/${path}`, body);
  }
  return out;
}

/** The settings ConfigMap kustomize generates: the defaults, the values' settings over them, monitoring's on top. */
function settingsTemplate(p: HelmChartProps): string {
  const monitoring = Object.entries(p.monitoringSettings).map(([k, v]) => `${JSON.stringify(k)} ${JSON.stringify(v)}`);
  return [
    'apiVersion: v1',
    'kind: ConfigMap',
    'metadata:',
    `  name: ${BACKEND_SETTINGS}`,
    `  namespace: ${p.backend.namespace}`,
    '  labels:',
    '    app.kubernetes.io/part-of: klutch-kit',
    '{{- $settings := .Values.backend.settings }}',
    `{{- if .Values.monitoring.enabled }}{{- $settings = merge (dict ${monitoring.join(' ')}) $settings }}{{- end }}`,
    'data:',
    '  {{- range $key, $value := $settings }}',
    '  {{ $key }}: {{ $value | toString | quote }}',
    '  {{- end }}',
    '',
  ].join('\n');
}

/** A Helm expression or block in place of a value or key of the object (render() swaps them in). */
const EXPRESSION = (i: number) => `__HELM_${i}__`;

/** The object with the chart's labels, and its knobs as placeholders of `blocks` (Helm text). */
function templated(o: Obj, p: HelmChartProps, blocks: string[]): Obj {
  const put = (helm: string) => EXPRESSION(blocks.push(helm) - 1);
  o.metadata.labels = { ...o.metadata.labels, ...PART_OF };
  if (o.kind === 'Deployment' && o.metadata.name === p.backend.name && o.metadata.namespace === p.backend.namespace) {
    o.spec.replicas = put('{{ .Values.backend.replicas }}');
    const pod = o.spec.template;
    pod.metadata.annotations = {
      ...pod.metadata.annotations,
      'checksum/settings': put(`{{ include (print $.Template.BasePath "/${SETTINGS_TEMPLATE}") . | sha256sum | quote }}`),
    };
    for (const c of pod.spec.containers)
      if (c.name === p.backend.name || pod.spec.containers.length === 1)
        c.image = put('{{ .Values.backend.image.repository }}:{{ .Values.backend.image.tag }}');
    pod.spec[put(`if .Values.privateRegistry.enabled\nimagePullSecrets:\n  - name: ${REGISTRY_PULL_SECRET}`)] = null;
    pod.spec[put(`if .Values.production.enabled\ntopologySpreadConstraints:\n${indent(stringify(backendSpread(p.backend)), 2)}`)] = null;
  }
  const host = () => put('{{ (split ":" (urlParse .Values.backend.settings.BACKEND_OIDC_CALLBACK_URL).host)._0 }}');
  if (o.kind === 'Ingress') {
    o.spec.tls[0].hosts = [host()];
    o.spec.rules[0].host = host();
    o.spec[put('with .Values.ingress.className\ningressClassName: {{ . }}')] = null;
    (o.metadata as Record<string, unknown>)[put('with .Values.ingress.annotations\nannotations:\n  {{- toYaml . | nindent 4 }}')] = null;
  }
  if (o.kind === 'HTTPRoute') {
    o.spec.hostnames = [host()];
    o.spec.parentRefs = [
      { name: put('{{ .Values.gateway.parentRef.name }}'), namespace: put('{{ .Values.gateway.parentRef.namespace }}') },
    ];
  }
  if (o.kind === 'BackendTLSPolicy') o.spec.validation.hostname = host();
  if (o.apiVersion.startsWith('pkg.crossplane.io/') && (o.kind === 'Function' || o.kind === 'Provider'))
    o.spec[put(`if .Values.privateRegistry.enabled\npackagePullSecrets:\n  - name: ${REGISTRY_PULL_SECRET}`)] = null;
  return o;
}

const indent = (text: string, n: number) =>
  text
    .trimEnd()
    .split('\n')
    .map((l) => ' '.repeat(n) + l)
    .join('\n');

/** The object as YAML, Helm's braces in it escaped, each placeholder replaced by its expression or block. */
function render(o: Obj, blocks: string[]): string {
  const text = stringify(o, { version: '1.1', lineWidth: 0 }).replace(/\{\{|\}\}/g, (m) => (m === '{{' ? '{{ "{{" }}' : '{{ "}}" }}'));
  return text
    .replace(/^( *)__HELM_(\d+)__: null$/gm, (_, pad: string, i: string) => {
      // A block: `if <condition>` then the keys it adds at this indentation.
      const [head, ...lines] = blocks[Number(i)]!.split('\n');
      return `${pad}{{- ${head} }}\n${indent(lines.join('\n'), pad.length)}\n${pad}{{- end }}`;
    })
    .replace(/(['"]?)__HELM_(\d+)__\1/g, (_, _q: string, i: string) => blocks[Number(i)]!);
}
