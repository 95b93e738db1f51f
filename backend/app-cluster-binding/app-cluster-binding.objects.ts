/**
 * What the AppClusterBinding controller writes, as plain objects (the backend bundle carries no construct library),
 * with Klutch's names where they are safe: in the binding root namespace on the control plane (its name:
 * app-cluster-binding.root.ts) the ServiceAccount `klutch-binder` with a Role for the control-plane konnector, the
 * APIServiceBindings, a NetworkPolicy, and the konnector Deployment `konnector-<name>` with Klutch's arguments. All
 * are labelled `klutch.anynines.com/appclusterbinding-name|-namespace` (Klutch's) and with the AppClusterBinding's
 * uid (ours: whose they are). Pods pass the `restricted` profile, which the root namespace enforces.
 */
import type {
  V1Container,
  V1Deployment,
  V1Namespace,
  V1NetworkPolicy,
  V1NetworkPolicyIngressRule,
  V1NetworkPolicyPeer,
  V1NetworkPolicySpec,
  V1Role,
  V1RoleBinding,
  V1Secret,
} from '@kubernetes/client-node';
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
import { KONNECTOR_PROBE_PORT, KONNECTOR_RUNTIME_ENV } from '../../lib/konnector-runtime';
import { PROBE_TIMEOUT_SECONDS } from '../../lib/probes';
import { Labels, MANAGED_BY } from '../labels';
import { BINDER } from '../provision/rbac';
import { KONNECTOR_RESOURCES, type VettedOverrides } from './app-cluster-binding.overrides';
import { AcbLabels } from './app-cluster-binding.root';

/** On the AppClusterBinding while the controller owns objects for it: they go, in order, before it does. */
export const ACB_FINALIZER = 'klutch-kit.anynines.com/appclusterbinding';
/** The app cluster's kubeconfig, copied into the root namespace for the konnector (its key is kept). */
export const APP_KUBECONFIG_SECRET = 'app-cluster-kubeconfig';
/** The provider kubeconfig (the consumer's, as an OIDC bind hands it out) in the root namespace; bindings name it. */
export const PROVIDER_KUBECONFIG_SECRET = 'kubeconfig';
const RUNTIME_USER = 65532;

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
  return {
    [AcbLabels.name]: acb.metadata.name!,
    [AcbLabels.namespace]: acb.metadata.namespace!,
    [AcbLabels.uid]: acb.metadata.uid!,
    [Labels.managedBy]: MANAGED_BY,
  };
}

export function rootNamespaceObject(acb: AppClusterBinding, root: string): V1Namespace {
  return {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: {
      name: root,
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
export function rootSecret(acb: AppClusterBinding, root: string, name: string, data: Record<string, string>): V1Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: root, labels: acbLabels(acb) },
    type: 'Opaque',
    data,
  };
}

/**
 * Role `klutch-binder` in the root namespace: what the control-plane konnector does there — its bindings and their
 * status, the kubeconfig Secrets they name (read, and the provider's updated on rotation), its Lease, its events.
 */
export function konnectorRole(acb: AppClusterBinding, root: string): V1Role {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'Role',
    metadata: { name: BINDER, namespace: root, labels: acbLabels(acb) },
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

export function konnectorRoleBinding(acb: AppClusterBinding, ns: string): V1RoleBinding {
  return {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'RoleBinding',
    metadata: { name: BINDER, namespace: ns, labels: acbLabels(acb) },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: BINDER },
    subjects: [{ kind: 'ServiceAccount', name: BINDER, namespace: ns }],
  };
}

/** The APIServiceBinding of one API in the root namespace, its claims accepted (the operator registered it). */
export function rootBinding(acb: AppClusterBinding, ns: string, name: string, claims: readonly PermissionClaim[]): APIServiceBinding {
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
export function konnectorArgs(acb: AppClusterBinding, ns: string): string[] {
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
function baseContainer(acb: AppClusterBinding, root: string, image: string): V1Container {
  return {
    name: 'konnector',
    image,
    args: konnectorArgs(acb, root),
    env: [
      { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
      { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      // The node settings every konnector Deployment runs with, the Konnector construct's too.
      ...Object.entries(KONNECTOR_RUNTIME_ENV).map(([name, value]) => ({ name, value })),
    ],
    ports: [{ name: 'probes', containerPort: KONNECTOR_PROBE_PORT }],
    readinessProbe: { httpGet: { path: '/readyz', port: KONNECTOR_PROBE_PORT }, periodSeconds: 5, timeoutSeconds: PROBE_TIMEOUT_SECONDS },
    livenessProbe: {
      httpGet: { path: '/healthz', port: KONNECTOR_PROBE_PORT },
      periodSeconds: 10,
      timeoutSeconds: PROBE_TIMEOUT_SECONDS,
      failureThreshold: 6,
    },
    resources: { requests: { ...KONNECTOR_RESOURCES.requests }, limits: { ...KONNECTOR_RESOURCES.limits } },
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

/**
 * The container with the vetted overrides (app-cluster-binding.overrides.ts) merged as Klutch merges them: args are
 * appended to Klutch's (which the konnector needs), env entries replace ours by name, resources key by key (vetted),
 * image and imagePullPolicy replace ours. The root namespace still enforces `restricted`.
 */
function konnectorContainer(acb: AppClusterBinding, root: string, o: VettedOverrides): V1Container {
  const c = baseContainer(acb, root, o.image);
  return {
    ...c,
    ...(o.imagePullPolicy ? { imagePullPolicy: o.imagePullPolicy } : {}),
    resources: o.resources,
    args: [...c.args!, ...o.args],
    env: [...c.env!.filter((e) => !o.env.some((t) => t.name === e.name)), ...o.env],
  };
}

export function konnectorDeployment(acb: AppClusterBinding, root: string, o: VettedOverrides): V1Deployment {
  const name = konnectorName(acb);
  const select = { app: name };
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: root, labels: { ...acbLabels(acb), 'app.kubernetes.io/name': 'konnector' } },
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
          containers: [konnectorContainer(acb, root, o)],
        },
      },
    },
  };
}

/** The NetworkPolicy of every root namespace; one name, so the controller applies it in place. */
export const ROOT_NETWORK_POLICY = 'klutch-bind-root';

/** As it goes on the wire: client-node's type names `from` `_from`, but a patch body is sent as written. */
export type WireNetworkPolicy = Omit<V1NetworkPolicy, 'spec'> & {
  spec: Omit<V1NetworkPolicySpec, 'ingress'> & {
    ingress?: (Omit<V1NetworkPolicyIngressRule, '_from'> & { from?: V1NetworkPolicyPeer[] })[];
  };
};

/**
 * Default deny for every Pod of the root namespace, but DNS and TCP to `apiPorts` (the control plane's and the app
 * cluster's API servers; by port, as the backend's own policy: addresses are known only at run time) out, and the
 * probe port in only from `monitoringNamespace` (--monitoring-namespace), as the backend's and the konnector's own
 * deploy policies (lib/pod-security.ts): no path to a tenant's database Service, and no Pod of another namespace (a
 * tenant's database, another root namespace's konnector) reaches the konnector's listener. The kubelet's probes need
 * no rule: they come from the node, whose address is not known here, and most CNIs let host traffic through.
 */
export function rootNetworkPolicy(
  acb: AppClusterBinding,
  root: string,
  apiPorts: readonly number[],
  monitoringNamespace?: string,
): WireNetworkPolicy {
  const anywhere: V1NetworkPolicyPeer[] = [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }];
  const probes = [{ protocol: 'TCP', port: KONNECTOR_PROBE_PORT }];
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: ROOT_NETWORK_POLICY, namespace: root, labels: acbLabels(acb) },
    spec: {
      podSelector: {},
      policyTypes: ['Ingress', 'Egress'],
      // Without a monitoring namespace no rule at all (applied, that removes the one an earlier version wrote).
      ...(monitoringNamespace
        ? {
            ingress: [
              { from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': monitoringNamespace } } }], ports: probes },
            ],
          }
        : {}),
      egress: [
        // Cluster DNS runs as Pods or on the node (NodeLocal DNSCache): both kinds of peer.
        {
          to: [{ namespaceSelector: {} }, ...anywhere],
          ports: [
            { protocol: 'UDP', port: 53 },
            { protocol: 'TCP', port: 53 },
          ],
        },
        { to: anywhere, ports: [...new Set(apiPorts)].sort((a, b) => a - b).map((port) => ({ protocol: 'TCP', port })) },
      ],
    },
  };
}
