/**
 * The control plane's install bundle (`dist/control-plane/kustomization.yaml`) installed as an operator installs it:
 * `kubectl apply -k` of an overlay that sets only the bundle's documented knobs (docs/install-bundle.md) — the OpenID
 * issuer, its CA, the public callback, the external address consumers' kubeconfigs name, TLS — then waits until the
 * backend's Deployment has its replicas Ready. The sandbox and platform-pods.test.ts install it.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { BindAnnotations } from '../../backend/authz/bind-policy';
import { BACKUP_STORE_CA_FILE } from '../../backend/deploy/bind-backend';
import { TEMPLATE_API_VERSION } from '../../exports/bind-api';
import { kubeBinaryPath } from '../tools/kube';
import { BACKEND_CLIENT, newKey } from '../parts/bind-backend';
import type { ClusterInfo } from '../cluster/control-plane';
import { eventually, getObject, type Kube, kubeFor, type WireObject } from '../cluster/kube';
import type { Node } from '../node/node';
import { runCommand } from '../cluster/processes';
import { deploymentAvailable } from './crossplane-deployed';

export const BACKEND_NAMESPACE = 'klutch-bind-backend';
export const BACKEND_DEPLOYMENT = 'klutch-bind-backend';

export interface BindBundleOptions {
  readonly cluster: ClusterInfo;
  readonly node: Node;
  /** `npm run synth` output. */
  readonly dist: string;
  /** Where the overlay is written. */
  readonly dir: string;
  /** The issuer URL and the PEM of its CA. */
  readonly issuer: string;
  readonly issuerCa: string;
  /** The backend's public URL (its /callback is the OpenID redirect). */
  readonly publicUrl: string;
  /** `https://<host:port>` of the control plane's API server as consumers reach it. */
  readonly externalAddress: string;
  /** The backend's serving certificate and key (PEM). */
  readonly tls: { readonly cert: string; readonly key: string };
  /**
   * OIDC subjects the overlay lets bind every API of the bundle: the bundle's backend binds nothing for a template
   * without a rule (--default-bind-policy=deny-all), so the overlay grants them on the templates, as an operator does.
   */
  readonly bindAllowedSubjects: readonly string[];
  /**
   * The platform's object store, set as docs/backups.md shows: the backend then makes every provider namespace a
   * backup tenant there. @default none
   */
  readonly backupStore?: {
    /** As the backend's Pods reach it (the Service's DNS name). */
    readonly endpoint: string;
    readonly ca: string;
    readonly admin: { readonly accessKeyId: string; readonly secretAccessKey: string };
  };
  readonly log: (line: string) => void;
  /** Ends the wait for the kinds the bundle needs from elsewhere (the sandbox's start failed meanwhile). */
  readonly signal?: AbortSignal;
}

/**
 * `kubectl <args>` (the harness/tools/kube binary's kubectl mode, as an operator types it) against `cluster`, without
 * blocking the event loop (the sandbox installs the bundle beside other steps).
 */
export async function kubectl(cluster: ClusterInfo, args: readonly string[]): Promise<{ code: number; out: string }> {
  const r = await runCommand(kubeBinaryPath(), ['kubectl', `--kubeconfig=${cluster.kubeconfig}`, ...args], { timeoutMs: 180_000 });
  return { code: r.code, out: r.output };
}

/**
 * The kinds the bundle applies that neither Kubernetes nor the bundle's own CRDs define (`group/version Kind`):
 * Crossplane's package kinds and the ProviderConfigs of the providers the Configuration brings.
 */
export function kindsFromElsewhere(dist: string): string[] {
  const root = join(dist, 'control-plane');
  const resources = (parse(readFileSync(join(root, 'kustomization.yaml'), 'utf8')) as { resources: string[] }).resources;
  const docs = resources.flatMap((r) => parseAllDocuments(readFileSync(join(root, r), 'utf8')).map((d) => d.toJS() as WireObject | null));
  const own = new Set(docs.filter((d) => d?.kind === 'CustomResourceDefinition').map((d) => d!.spec.group as string));
  const builtIn = (group: string) => !group.includes('.') || group.endsWith('.k8s.io');
  const kinds = new Set<string>();
  for (const d of docs) {
    if (!d?.apiVersion?.includes('/')) continue;
    const group = (d.apiVersion as string).split('/')[0]!;
    if (!builtIn(group) && !own.has(group)) kinds.add(`${d.apiVersion} ${d.kind}`);
  }
  return [...kinds].sort();
}

/** Waits until the API server serves every `group/version Kind` (discovery); `signal` ends the wait with an error. */
async function served(kube: Kube, kinds: readonly string[], signal?: AbortSignal): Promise<void> {
  const missing = async () => {
    const out: string[] = [];
    for (const k of kinds) {
      const [apiVersion, kind] = k.split(' ');
      const list = await getObject(kube, `/apis/${apiVersion}`);
      if (!(list?.resources as WireObject[] | undefined)?.some((r) => r.kind === kind)) out.push(k);
    }
    return out;
  };
  let left: string[] = [...kinds];
  await eventually(
    `the API server to serve ${kinds.join(', ')}`,
    async () => (signal?.aborted || (left = await missing()).length === 0 ? true : undefined),
    300_000,
  ).catch((e: Error) => {
    throw new Error(`${e.message}; still missing: ${left.join(', ')} (Crossplane and the Configuration install them)`, { cause: e });
  });
  if (signal?.aborted) throw new Error('the install bundle was not applied: the start was given up');
}

/**
 * Writes the overlay, waits until the kinds it needs from Crossplane and the providers are served (an operator installs
 * the bundle after the Configuration; the sandbox starts it beside the Configuration's install), applies it, and waits
 * for the backend's Pods; a failure names the command or the Pods.
 */
export async function installBindBundle(o: BindBundleOptions): Promise<void> {
  const overlay = join(o.dir, 'overlay');
  mkdirSync(overlay, { recursive: true });
  writeFileSync(join(overlay, 'tls.crt'), o.tls.cert);
  writeFileSync(join(overlay, 'tls.key'), o.tls.key, { mode: 0o600 });
  writeFileSync(join(overlay, 'oidc-ca.crt'), o.issuerCa);
  const store = o.backupStore;
  if (store) writeFileSync(join(overlay, 'backup-store-ca.crt'), store.ca);
  writeFileSync(
    join(overlay, 'kustomization.yaml'),
    stringify({
      apiVersion: 'kustomize.config.k8s.io/v1beta1',
      kind: 'Kustomization',
      resources: [relative(overlay, join(o.dist, 'control-plane'))],
      // The production settings an operator adds (docs/install-bundle.md): the backend's disruption budget and spread.
      components: [relative(overlay, join(o.dist, 'control-plane', 'production'))],
      configMapGenerator: [
        {
          name: 'klutch-bind-backend-settings',
          namespace: BACKEND_NAMESPACE,
          behavior: 'merge',
          literals: [
            `BACKEND_OIDC_ISSUER_URL=${o.issuer}`,
            `BACKEND_OIDC_CALLBACK_URL=${o.publicUrl}/callback`,
            `BACKEND_EXTERNAL_ADDRESS=${o.externalAddress}`,
            'BACKEND_EXTERNAL_SERVER_NAME=kubernetes.default.svc',
            'BACKEND_OIDC_CA_FILE=/etc/klutch-bind/oidc-ca/ca.crt',
            ...(store ? [`BACKEND_BACKUP_STORE_ENDPOINT=${store.endpoint}`, `BACKEND_BACKUP_STORE_CA_FILE=${BACKUP_STORE_CA_FILE}`] : []),
          ],
        },
        { name: 'oidc-ca', namespace: BACKEND_NAMESPACE, files: ['ca.crt=oidc-ca.crt'] },
        ...(store ? [{ name: 'klutch-backup-store-ca', namespace: BACKEND_NAMESPACE, files: ['ca.crt=backup-store-ca.crt'] }] : []),
      ],
      secretGenerator: [
        { name: 'oidc-client', namespace: BACKEND_NAMESPACE, literals: [`client-secret=${BACKEND_CLIENT.clientSecret}`] },
        { name: 'cookie-keys', namespace: BACKEND_NAMESPACE, literals: [`keys=${newKey()}`] },
        { name: 'klutch-bind-backend-tls', namespace: BACKEND_NAMESPACE, type: 'kubernetes.io/tls', files: ['tls.crt', 'tls.key'] },
        ...(store
          ? [
              {
                name: 'klutch-backup-store-admin',
                namespace: BACKEND_NAMESPACE,
                literals: [`access-key=${store.admin.accessKeyId}`, `secret-key=${store.admin.secretAccessKey}`],
              },
            ]
          : []),
      ],
      patches: [
        // The backend's egress to the store's port (docs/backups.md).
        ...(store
          ? [
              {
                target: { kind: 'NetworkPolicy', name: BACKEND_DEPLOYMENT },
                patch: stringify([
                  {
                    op: 'add',
                    path: '/spec/egress/-',
                    value: {
                      to: [
                        {
                          namespaceSelector: {
                            matchLabels: { 'kubernetes.io/metadata.name': new URL(store.endpoint).hostname.split('.')[1] },
                          },
                        },
                      ],
                      ports: [{ port: Number(new URL(store.endpoint).port || 443), protocol: 'TCP' }],
                    },
                  },
                ]),
              },
            ]
          : []),
        // Who may bind: the documented grant, one patch over every APIServiceExportTemplate of the bundle.
        {
          target: { kind: 'APIServiceExportTemplate' },
          patch: stringify({
            apiVersion: TEMPLATE_API_VERSION,
            kind: 'APIServiceExportTemplate',
            metadata: { name: 'every-template', annotations: { [BindAnnotations.allowedSubjects]: o.bindAllowedSubjects.join(',') } },
          }),
        },
        // The issuer's CA, which no public root signs here: the documented patch.
        {
          target: { kind: 'Deployment', name: BACKEND_DEPLOYMENT },
          patch: stringify({
            apiVersion: 'apps/v1',
            kind: 'Deployment',
            metadata: { name: BACKEND_DEPLOYMENT, namespace: BACKEND_NAMESPACE },
            spec: {
              template: {
                spec: {
                  volumes: [{ name: 'oidc-ca', configMap: { name: 'oidc-ca' } }],
                  containers: [
                    { name: 'backend', volumeMounts: [{ name: 'oidc-ca', mountPath: '/etc/klutch-bind/oidc-ca', readOnly: true }] },
                  ],
                },
              },
            },
          }),
        },
      ],
    }),
  );
  // The documented install: apply, wait for the bundle's CRDs, apply again (a kind a CRD of the same apply defines is
  // not known yet when kubectl maps the objects). --force-conflicts: objects the platform step applied already (the
  // Function, provider-kubernetes, the ProviderConfig) become kubectl's, with the same content.
  await served(kubeFor(o.cluster), kindsFromElsewhere(o.dist), o.signal);
  const apply = () => kubectl(o.cluster, ['apply', '-k', overlay, '--server-side', '--force-conflicts']);
  const first = await apply();
  if (first.code !== 0) {
    const wait = await kubectl(o.cluster, [
      'wait',
      '--for=condition=Established',
      '--timeout=60s',
      'crd',
      '-l',
      'app.kubernetes.io/part-of=klutch-kit',
    ]);
    const second = wait.code === 0 ? await apply() : wait;
    if (second.code !== 0) throw new Error(`kubectl apply -k ${overlay} failed:\n${first.out}\n${second.out}`);
  }
  o.log(`kubectl apply -k ${overlay} (the install bundle with the overlay's settings)`);
  await deploymentAvailable(
    kubeFor(o.cluster),
    o.node,
    BACKEND_NAMESPACE,
    BACKEND_DEPLOYMENT,
    'app.kubernetes.io/name=klutch-bind-backend',
  );
}
