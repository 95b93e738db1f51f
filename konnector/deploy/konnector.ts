/**
 * `Konnector`: what `kubectl bind` installs in an app cluster — Namespace, ServiceAccount, least-privilege RBAC, the
 * APIServiceBinding CRD and the Deployment running dist/konnector/konnector.mjs (leader election, probes, requests).
 *
 * Least privilege (Klutch's konnector runs with `*` on `*`): on its own it may manage APIServiceBindings, create
 * CRDs and update only the APIServiceBinding CRD, read namespaces, write events, and — in its namespace — hold its
 * Lease and read and update kubeconfig Secrets. Each bound API needs a `KonnectorApiAccess` (the `apis` prop, or
 * dist/app-cluster/konnector/access/<plural>.yaml applied beside it).
 *
 * Pod security: the Pods pass the `restricted` profile, which the Namespace enforces, and NetworkPolicies let them
 * reach only DNS and the API servers, and be reached on the probe port only from `monitoringNamespace`.
 */
import { ApiObject, Duration } from 'cdk8s';
import {
  ClusterRole,
  ClusterRoleBinding,
  Cpu,
  Deployment,
  EnvFieldPaths,
  EnvValue,
  ImagePullPolicy,
  Namespace,
  Probe,
  Role,
  RoleBinding,
  Secret,
  ServiceAccount,
  type IApiEndpoint,
  type IApiResource,
} from 'cdk8s-plus-33';
import { Size } from 'cdk8s';
import { Construct } from 'constructs';
import { apiServiceBindingCrd, BIND_GROUP } from '../../exports/bind-api';
import { BindResources } from '../runtime';
import { KonnectorApiAccess, type KonnectorApiAccessProps } from './access';
import { KONNECTOR_NODE_OPTIONS, KONNECTOR_PROBE_PORT, KONNECTOR_RUNTIME_ENV } from '../../lib/konnector-runtime';
import { PROBE_TIMEOUT, selectorLabels, selectStably } from '../../lib/workload';
import { checkPorts, NamespacePolicies, RESTRICTED_CONTAINER, RESTRICTED_NAMESPACE_LABELS, RUNTIME_USER } from '../../lib/pod-security';
import { KONNECTOR_IMAGE } from '../../lib/version';

export const DEFAULT_KONNECTOR_NAMESPACE = 'klutch-bind';
export const KONNECTOR_NAME = 'konnector';
/** The konnector's node settings, one definition for every Deployment of it (lib/konnector-runtime.ts). */
export { KONNECTOR_NODE_OPTIONS, KONNECTOR_RUNTIME_ENV };
/** The probe port, which serves /metrics too. */
const PROBE_PORT = KONNECTOR_PROBE_PORT;

export interface KonnectorProps {
  /** The konnector image (dist/konnector/Dockerfile). @default ghcr.io/klutch-kit/konnector:<release> */
  readonly image?: string;
  /**
   * A Secret of type `kubernetes.io/dockerconfigjson` in the konnector's namespace that the kubelet pulls the image
   * with (a private registry or mirror). @default none
   */
  readonly imagePullSecret?: string;
  /** Replicas; one leads, the others stand by. @default 2 */
  readonly replicas?: number;
  /** Namespace of the konnector, its Lease and the kubeconfig Secrets. @default klutch-bind */
  readonly namespace?: string;
  /** Create the Namespace object. @default true */
  readonly createNamespace?: boolean;
  /** Further namespaces whose kubeconfig Secrets bindings may refer to. @default none (only `namespace`) */
  readonly kubeconfigNamespaces?: readonly string[];
  /** APIs to grant access to right away (see KonnectorApiAccess). @default none */
  readonly apis?: readonly Omit<KonnectorApiAccessProps, 'namespace' | 'kubeconfigNamespaces'>[];
  /** Extra konnector flags, e.g. `--workers=32`. @default none */
  readonly args?: readonly string[];
  /** The namespace whose Pods may scrape the probe port (/healthz, /readyz, /metrics). @default none (kubelet probes only) */
  readonly monitoringNamespace?: string;
  /** TCP ports the konnector may call: the app cluster's and the providers' API servers. @default 443, 6443 */
  readonly egressPorts?: readonly number[];
}

const endpoint = (r: IApiResource): IApiEndpoint => ({ asApiResource: () => r, asNonApiResource: () => undefined });

export class Konnector extends Construct {
  readonly namespace: string;
  readonly kubeconfigNamespaces: readonly string[];
  readonly serviceAccount: ServiceAccount;
  readonly deployment: Deployment;

  constructor(scope: Construct, id: string, props: KonnectorProps = {}) {
    super(scope, id);
    const ns = props.namespace ?? DEFAULT_KONNECTOR_NAMESPACE;
    const replicas = props.replicas ?? 2;
    if (!Number.isInteger(replicas) || replicas < 1)
      throw new Error(`Konnector: replicas must be a positive integer, not ${props.replicas}`);
    if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(ns)) throw new Error(`Konnector: namespace "${ns}" is not a DNS label`);
    for (const [field, n] of [
      ...(props.kubeconfigNamespaces ?? []).map((n) => ['kubeconfigNamespaces', n] as const),
      ...(props.monitoringNamespace !== undefined ? [['monitoringNamespace', props.monitoringNamespace] as const] : []),
    ])
      if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(n)) throw new Error(`Konnector: ${field}: "${n}" is not a DNS label`);
    checkPorts('Konnector', 'egressPorts', props.egressPorts);
    this.namespace = ns;
    this.kubeconfigNamespaces = [...(props.kubeconfigNamespaces ?? [])];
    // Cluster-scoped names carry the namespace: `klutch-bind-konnector` by default, as Klutch names its role.
    const clusterName = `${ns}-${KONNECTOR_NAME}`;

    if (props.createNamespace ?? true)
      new Namespace(this, 'Namespace', { metadata: { name: ns, labels: { ...RESTRICTED_NAMESPACE_LABELS } } });
    new ApiObject(this, 'APIServiceBindingCrd', apiServiceBindingCrd() as never);
    this.serviceAccount = new ServiceAccount(this, 'ServiceAccount', { metadata: { name: KONNECTOR_NAME, namespace: ns } });

    const cluster = new ClusterRole(this, 'ClusterRole', { metadata: { name: clusterName } });
    const bindings = BindResources.bindings.plural;
    cluster.allow(['get', 'list', 'watch', 'update', 'patch'], endpoint({ apiGroup: BIND_GROUP, resourceType: bindings }));
    cluster.allow(['get', 'update', 'patch'], endpoint({ apiGroup: BIND_GROUP, resourceType: `${bindings}/status` }));
    const crds = 'customresourcedefinitions';
    cluster.allow(['get', 'list', 'watch', 'create'], endpoint({ apiGroup: 'apiextensions.k8s.io', resourceType: crds }));
    cluster.allow(
      ['update', 'patch'],
      endpoint({ apiGroup: 'apiextensions.k8s.io', resourceType: crds, resourceName: `${bindings}.${BIND_GROUP}` }),
    );
    cluster.allow(['get', 'list', 'watch'], endpoint({ apiGroup: '', resourceType: 'namespaces' }));
    cluster.allow(['create', 'patch'], endpoint({ apiGroup: '', resourceType: 'events' }));
    cluster.allow(['create'], endpoint({ apiGroup: 'authorization.k8s.io', resourceType: 'selfsubjectaccessreviews' }));
    new ClusterRoleBinding(this, 'ClusterRoleBinding', { metadata: { name: clusterName }, role: cluster }).addSubjects(this.serviceAccount);

    for (const [i, secretsNs] of [ns, ...this.kubeconfigNamespaces].entries()) {
      const role = new Role(this, i === 0 ? 'Role' : `KubeconfigRole-${secretsNs}`, {
        metadata: { name: KONNECTOR_NAME, namespace: secretsNs },
      });
      role.allow(['get', 'list', 'watch', 'update', 'patch'], { apiGroup: '', resourceType: 'secrets' });
      if (i === 0) role.allow(['get', 'create', 'update'], { apiGroup: 'coordination.k8s.io', resourceType: 'leases' });
      new RoleBinding(this, i === 0 ? 'RoleBinding' : `KubeconfigRoleBinding-${secretsNs}`, {
        metadata: { name: KONNECTOR_NAME, namespace: secretsNs },
        role,
      }).addSubjects(this.serviceAccount);
    }

    this.deployment = new Deployment(this, 'Deployment', {
      metadata: { name: KONNECTOR_NAME, namespace: ns, labels: selectorLabels(KONNECTOR_NAME) },
      // Klutch's konnector Pods carry `app: konnector`; ours too, so what selects Klutch's (policies, dashboards) finds ours.
      podMetadata: { labels: { app: KONNECTOR_NAME } },
      select: false,
      replicas,
      serviceAccount: this.serviceAccount,
      ...(props.imagePullSecret ? { dockerRegistryAuth: Secret.fromSecretName(this, 'ImagePullSecret', props.imagePullSecret) } : {}),
      // It watches and writes the app cluster's API: it needs its token.
      automountServiceAccountToken: true,
      securityContext: { ensureNonRoot: true, user: RUNTIME_USER, group: RUNTIME_USER },
      containers: [
        {
          name: KONNECTOR_NAME,
          image: props.image ?? KONNECTOR_IMAGE,
          // A tagged release: what the node has is that image (cdk8s-plus' default, Always, needs the registry on every restart).
          imagePullPolicy: ImagePullPolicy.IF_NOT_PRESENT,
          args: [`--lease-namespace=${ns}`, `--probe-address=:${PROBE_PORT}`, ...(props.args ?? [])],
          ports: [{ number: PROBE_PORT, name: 'probes' }],
          envVariables: {
            POD_NAME: EnvValue.fromFieldRef(EnvFieldPaths.POD_NAME),
            POD_NAMESPACE: EnvValue.fromFieldRef(EnvFieldPaths.POD_NAMESPACE),
            ...Object.fromEntries(Object.entries(KONNECTOR_RUNTIME_ENV).map(([k, v]) => [k, EnvValue.fromValue(v)])),
          },
          readiness: Probe.fromHttpGet('/readyz', { port: PROBE_PORT, periodSeconds: Duration.seconds(5), timeoutSeconds: PROBE_TIMEOUT }),
          liveness: Probe.fromHttpGet('/healthz', {
            port: PROBE_PORT,
            periodSeconds: Duration.seconds(10),
            timeoutSeconds: PROBE_TIMEOUT,
            failureThreshold: 6,
          }),
          resources: {
            cpu: { request: Cpu.millis(50), limit: Cpu.millis(1000) },
            memory: { request: Size.mebibytes(128), limit: Size.mebibytes(384) },
          },
          securityContext: RESTRICTED_CONTAINER,
        },
      ],
    });
    const pods = selectStably(this.deployment, KONNECTOR_NAME);
    new NamespacePolicies(this, 'NetworkPolicies', {
      namespace: ns,
      name: KONNECTOR_NAME,
      pods,
      probePorts: [PROBE_PORT],
      monitoringNamespace: props.monitoringNamespace,
      apiPorts: props.egressPorts,
      denyNamespace: props.createNamespace ?? true,
    });

    for (const api of props.apis ?? []) this.grant(api);
  }

  /** Grants the konnector access to one more bound API. */
  grant(api: Omit<KonnectorApiAccessProps, 'namespace' | 'kubeconfigNamespaces'>): KonnectorApiAccess {
    return new KonnectorApiAccess(this, `Access-${api.resource}.${api.group}`, {
      ...api,
      namespace: this.namespace,
      kubeconfigNamespaces: this.kubeconfigNamespaces,
    });
  }
}
