/**
 * What the AppClusterBinding controller writes, as plain objects (the backend bundle carries no construct library),
 * with Klutch's names: the binding root namespace `klutch-bind-<namespace>-<name>` on the control plane, the
 * ServiceAccount `klutch-binder` there with a Role for the control-plane konnector, the APIServiceBindings (labelled
 * `klutch.anynines.com/appclusterbinding-name|-namespace`), and the konnector Deployment `konnector-<name>` with
 * Klutch's arguments. Pods pass the `restricted` profile, which the root namespace enforces.
 */
import type { V1Container, V1Deployment, V1EnvVar, V1Namespace, V1Role, V1RoleBinding, V1Secret } from '@kubernetes/client-node';
import {
  BIND_API_VERSION,
  BIND_GROUP,
  Kinds,
  KUBECONFIG_SECRET_KEY,
  type AcceptablePermissionClaim,
  type APIServiceBinding,
  type AppClusterBinding,
  type PermissionClaim,
} from '../../exports/bind-api';
import { KONNECTOR_RUNTIME_ENV } from '../../lib/konnector-runtime';
import { Labels, MANAGED_BY } from '../labels';
import { BINDER } from '../provision/rbac';

/** Klutch's labels on everything made for an AppClusterBinding. */
export const AcbLabels = {
  name: 'klutch.anynines.com/appclusterbinding-name',
  namespace: 'klutch.anynines.com/appclusterbinding-namespace',
} as const;

/** On the AppClusterBinding while the controller owns objects for it: they go, in order, before it does. */
export const ACB_FINALIZER = 'klutch-kit.anynines.com/appclusterbinding';
/** The app cluster's kubeconfig, copied into the root namespace for the konnector (its key is kept). */
export const APP_KUBECONFIG_SECRET = 'app-cluster-kubeconfig';
/** The provider kubeconfig (the consumer's, as an OIDC bind hands it out) in the root namespace; bindings name it. */
export const PROVIDER_KUBECONFIG_SECRET = 'kubeconfig';
export const KONNECTOR_PROBE_PORT = 8080;
const RUNTIME_USER = 65532;

/** What every binding root namespace's name starts with (the backend's admission policy holds its writes there). */
export const ROOT_NAMESPACE_PREFIX = 'klutch-bind-';

/** `klutch-bind-<namespace>-<name>`, Klutch's binding root namespace (a DNS label: at most 63 characters). */
export function rootNamespace(acb: Pick<AppClusterBinding, 'metadata'>): string {
  return `${ROOT_NAMESPACE_PREFIX}${acb.metadata.namespace}-${acb.metadata.name}`;
}

export const konnectorName = (acb: Pick<AppClusterBinding, 'metadata'>): string => `konnector-${acb.metadata.name}`;

/** The consumer identity of an AppClusterBinding (`<sub>#<cluster id>`, as an OIDC bind's): one per object, by uid. */
export function acbIdentity(acb: Pick<AppClusterBinding, 'metadata'>): string {
  return `${acbSubject(acb)}#${(acb.metadata.uid ?? '').replaceAll('-', '')}`;
}

/** The subject an AppClusterBinding binds as, in audit lines and on the ClusterBinding's record. */
export const acbSubject = (acb: Pick<AppClusterBinding, 'metadata'>): string =>
  `system:appclusterbinding:${acb.metadata.namespace}:${acb.metadata.name}`;

/**
 * The group an AppClusterBinding binds as: its namespace. Who may create AppClusterBindings in a namespace is the
 * operator's RBAC, so a template rule `bind-allowed-groups: system:appclusterbindings:<namespace>` is operator-owned.
 */
export const acbGroup = (namespace: string): string => `system:appclusterbindings:${namespace}`;

export function acbLabels(acb: Pick<AppClusterBinding, 'metadata'>): Record<string, string> {
  return { [AcbLabels.name]: acb.metadata.name!, [AcbLabels.namespace]: acb.metadata.namespace!, [Labels.managedBy]: MANAGED_BY };
}

export function rootNamespaceObject(acb: AppClusterBinding): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: rootNamespace(acb),
      labels: {
        ...acbLabels(acb),
        'pod-security.kubernetes.io/enforce': 'restricted',
        'pod-security.kubernetes.io/warn': 'restricted',
        'pod-security.kubernetes.io/audit': 'restricted',
      },
    },
  };
}

/** A Secret in the root namespace holding `data` (the app cluster's kubeconfig, or the provider's). */
export function rootSecret(acb: AppClusterBinding, name: string, data: Record<string, string>): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: rootNamespace(acb), labels: acbLabels(acb) },
    type: 'Opaque',
    data,
  };
}

/**
 * Role `klutch-binder` in the root namespace: what the control-plane konnector does there — its bindings and their
 * status, the kubeconfig Secrets they name (read, and the provider's updated on rotation), its Lease, its events.
 */
export function konnectorRole(acb: AppClusterBinding): V1Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: BINDER, namespace: rootNamespace(acb), labels: acbLabels(acb) },
    rules: [
      { apiGroups: [BIND_GROUP], resources: ['apiservicebindings'], verbs: ['get', 'list', 'watch', 'update', 'patch'] },
      { apiGroups: [BIND_GROUP], resources: ['apiservicebindings/status'], verbs: ['get', 'update', 'patch'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'list', 'watch'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: [PROVIDER_KUBECONFIG_SECRET], verbs: ['update', 'patch'] },
      { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
      { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    ],
  };
}

export function konnectorRoleBinding(acb: AppClusterBinding): V1RoleBinding {
  const ns = rootNamespace(acb);
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: BINDER, namespace: ns, labels: acbLabels(acb) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: BINDER },
    subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: ns }],
  };
}

/** The APIServiceBinding of one API in the root namespace, its claims accepted (the operator registered it). */
export function rootBinding(acb: AppClusterBinding, name: string, claims: readonly PermissionClaim[]): APIServiceBinding {
  const ns = rootNamespace(acb);
  const accepted: AcceptablePermissionClaim[] = claims.map((c) => ({ ...c, state: 'Accepted' }));
  return {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceBinding,
    metadata: { name, namespace: ns, labels: acbLabels(acb) },
    spec: {
      kubeconfigSecretRef: { name: PROVIDER_KUBECONFIG_SECRET, namespace: ns, key: KUBECONFIG_SECRET_KEY },
      ...(accepted.length ? { permissionClaims: accepted } : {}),
    },
  };
}

/** The konnector's arguments, exactly Klutch's (plus the probe address, which our konnector takes). */
export function konnectorArgs(acb: AppClusterBinding): string[] {
  const ns = rootNamespace(acb);
  return [
    '--control-plane-mode',
    `--app-cluster-kubeconfig-secret-name=${APP_KUBECONFIG_SECRET}`,
    `--app-cluster-kubeconfig-secret-namespace=${ns}`,
    `--app-cluster-kubeconfig-secret-key=${acb.spec.kubeconfigSecretRef.key ?? KUBECONFIG_SECRET_KEY}`,
    `--binding-root-namespace=${ns}`,
    '--lease-namespace=$(POD_NAMESPACE)',
    `--probe-address=:${KONNECTOR_PROBE_PORT}`,
  ];
}

/** The konnector container before overrides. */
function baseContainer(acb: AppClusterBinding, image: string): V1Container {
  return {
    name: 'konnector',
    image,
    args: konnectorArgs(acb),
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      // The node settings every konnector Deployment runs with, the Konnector construct's too.
      ...Object.entries(KONNECTOR_RUNTIME_ENV).map(([name, value]) => ({ name, value })),
    ],
    ports: [{ name: 'probes', containerPort: KONNECTOR_PROBE_PORT }],
    readinessProbe: { httpGet: { path: '/readyz', port: KONNECTOR_PROBE_PORT }, periodSeconds: 5 },
    livenessProbe: { httpGet: { path: '/healthz', port: KONNECTOR_PROBE_PORT }, periodSeconds: 10, failureThreshold: 6 },
    resources: { requests: { cpu: '50m', memory: '128Mi' }, limits: { cpu: '1', memory: '384Mi' } },
    securityContext: {
      runAsNonRoot: true,
      runAsUser: RUNTIME_USER,
      runAsGroup: RUNTIME_USER,
      privileged: false,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    },
  };
}

const empty = (v: unknown): boolean =>
  v === undefined ||
  v === null ||
  v === '' ||
  (Array.isArray(v) && v.length === 0) ||
  (typeof v === 'object' && Object.keys(v as object).length === 0);

/**
 * `spec.konnector.overrides` merged into the container as Klutch does (empty fields ignored): args are appended to
 * Klutch's (which the konnector needs), env entries replace ours by name except POD_NAME and POD_NAMESPACE, the
 * name stays `konnector`, every other field replaces ours. The root namespace still enforces `restricted`.
 */
export function konnectorContainer(acb: AppClusterBinding, image: string): V1Container {
  const c = baseContainer(acb, image);
  const o = acb.spec.konnector?.overrides ?? {};
  const out: Record<string, unknown> = { ...c };
  for (const [k, v] of Object.entries(o)) {
    if (empty(v) || k === 'name') continue;
    if (k === 'args') out.args = [...c.args!, ...(v as string[])];
    else if (k === 'env') {
      const theirs = (v as V1EnvVar[]).filter((e) => e.name !== 'POD_NAME' && e.name !== 'POD_NAMESPACE');
      out.env = [...c.env!.filter((e) => !theirs.some((t) => t.name === e.name)), ...theirs];
    } else out[k] = v;
  }
  return out as unknown as V1Container;
}

export function konnectorDeployment(acb: AppClusterBinding, image: string): V1Deployment {
  const name = konnectorName(acb);
  const select = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: rootNamespace(acb), labels: { ...acbLabels(acb), 'app.kubernetes.io/name': 'konnector' } },
    spec: {
      replicas: 1,
      selector: { matchLabels: select },
      template: {
        metadata: { labels: { ...select, ...acbLabels(acb) } },
        spec: {
          serviceAccountName: BINDER,
          // It calls the control plane's API server as klutch-binder: it needs the token.
          automountServiceAccountToken: true,
          securityContext: {
            runAsNonRoot: true,
            runAsUser: RUNTIME_USER,
            runAsGroup: RUNTIME_USER,
            seccompProfile: { type: 'RuntimeDefault' },
          },
          containers: [konnectorContainer(acb, image)],
        },
      },
    },
  };
}
