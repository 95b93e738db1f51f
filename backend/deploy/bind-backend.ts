/**
 * The bind backend on a control plane, as cdk8s-plus-33 constructs: its Namespace, ServiceAccount, least-privilege
 * ClusterRole (and binding), a Role for its Leases, the Deployment (probes, resource requests, flags from props,
 * Secrets for the OIDC client secret and the cookie keys) and the Service.
 *
 * Why the ClusterRole holds what it holds: Kubernetes lets the backend grant a consumer only what it holds itself
 * (RBAC escalation check), so it holds every verb a consumer gets on the exported groups and the claimed resources
 * (Secrets, ConfigMaps) — and nothing else cluster-wide but what its controllers read and write.
 *
 * Pod security: the Pods pass the `restricted` profile, which the Namespace enforces (and warns and audits), and two
 * NetworkPolicies admit exactly the traffic the backend needs (see `networkPolicies`).
 */
import { ApiObject, Duration, JsonPatch, Size } from 'cdk8s';
import * as kplus from 'cdk8s-plus-33';
import { Construct } from 'constructs';
import { BIND_GROUP, TEMPLATE_GROUP } from '../../exports/bind-api';
import {
  DEFAULT_API_PORTS,
  NamespacePolicies,
  RESTRICTED_CONTAINER,
  RESTRICTED_NAMESPACE_LABELS,
  RUNTIME_USER,
} from '../../lib/pod-security';
import { ValidatingAdmissionPolicy } from '../../lib/admission-policy';
import { DEFAULT_BIND_POLICIES, type DefaultBindPolicy } from '../authz/bind-policy';
import { ConsumerClaimMachinery } from './consumer-claim-machinery';
import { ContainmentPolicy } from './containment-policy';
import { PROBE_TIMEOUT, selectorLabels, selectStably } from '../../lib/workload';
import { ROOT_NAMESPACE_PREFIX } from '../app-cluster-binding/app-cluster-binding.root';
import type { ConsumerScope } from '../consumer-access';
import { envName, tokenLifetimeProblem } from '../options';
import { BINDER as BINDER_SERVICE_ACCOUNT } from '../provision/rbac';
import { releaseImage } from '../../lib/version';

/** A key of a Secret the backend reads. */
export interface SecretKeyRef {
  readonly name: string;
  readonly key: string;
}

export interface BindBackendProps {
  /** The backend's image (`docker build dist/backend`). @default ghcr.io/klutch-kit/bind-backend:<release> */
  readonly image?: string;
  /** Replicas; the HTTP side is stateless and the controllers run on the Lease holder. @default 2 */
  readonly replicas?: number;
  /** @default klutch-bind-backend */
  readonly namespace?: string;
  /** The OpenID provider's issuer URL. */
  readonly issuerUrl: string;
  readonly clientId: string;
  /** Secret key holding the OIDC client secret. @default { name: 'oidc-client', key: 'client-secret' } */
  readonly clientSecret?: SecretKeyRef;
  /** Secret key holding the cookie keys (one base64 key a line, the first seals). @default { name: 'cookie-keys', key: 'keys' } */
  readonly cookieKeys?: SecretKeyRef;
  /** The backend's external URL as browsers and kubectl bind reach it (https), without a path. */
  readonly publicUrl: string;
  /** The provider API server as consumers reach it (https). */
  readonly externalAddress: string;
  /**
   * ConfigMap key with the PEM CA of `externalAddress`, inlined into consumer kubeconfigs.
   * @default { name: 'kube-root-ca.crt', key: 'ca.crt' } (the cluster's own CA, in every namespace)
   */
  readonly externalCa?: { readonly configMap: string; readonly key: string };
  /** TLS server name for `externalAddress`. @default the host of externalAddress */
  readonly externalServerName?: string;
  /** Consumers get namespaces `<prefix>-<random>`. @default cluster */
  readonly namespacePrefix?: string;
  /** @default Namespaced */
  readonly consumerScope?: ConsumerScope;
  /** Lifetime of consumer tokens, a Go duration of 10m or more. @default 1h */
  readonly tokenLifetime?: string;
  /** @default klutch-kit */
  readonly prettyName?: string;
  /** API groups the templates export: the backend must hold every verb on them to grant them. @default ['anynines.com'] */
  readonly exportedGroups?: readonly string[];
  /** @default { cpu: 100m, memory: 128Mi } requests, { memory: 512Mi } limit */
  readonly resources?: kplus.ContainerResources;
  /**
   * The namespace whose Pods may scrape the probe port (/healthz, /readyz, /metrics), the backend's and that of the
   * konnectors it runs for AppClusterBindings (`--monitoring-namespace`). @default none (kubelet probes only)
   */
  readonly monitoringNamespace?: string;
  /**
   * Who may bind an API whose APIServiceExportTemplate names nobody (`--default-bind-policy`, authz/bind-policy.ts).
   * The binary keeps Klutch's `allow-all` so Klutch's own manifests run it unchanged; what we ship fails closed: the
   * operator grants each API with annotation `klutch-kit.anynines.com/bind-allowed-groups` on its template.
   * @default deny-all
   */
  readonly defaultBindPolicy?: DefaultBindPolicy;
  /**
   * TCP ports the backend may call: the API server and the OpenID provider.
   * @default 443, 6443 and the port of issuerUrl if it names one
   */
  readonly egressPorts?: readonly number[];
  /**
   * A ConfigMap the settings an operator changes per installation come from (env twins of the flags, `settings`):
   * issuer URL, client ID, callback URL, external address and server name, the default bind policy. The install
   * bundle generates it with kustomize, so an overlay changes them and the Pods roll. @default none: they are flags in
   * the Deployment
   */
  readonly settingsConfigMap?: string;
  /**
   * Serve the bind endpoints over HTTPS with the certificate of this `kubernetes.io/tls` Secret (keys `tls.crt`,
   * `tls.key`); the Service then offers port 443. @default none: plain HTTP on port 80, TLS ends in front of it
   */
  readonly tlsSecret?: string;
  /**
   * Where the platform's object store's admin keys and CA come from, for the backup tenants the backend makes in
   * each provider namespace (`--backup-store-*`, docs/backups.md). Both are optional in the Pod: nothing is made until
   * `BACKEND_BACKUP_STORE_ENDPOINT` is set (a flag or, with `settingsConfigMap`, a setting), and the CA is read only
   * where `BACKEND_BACKUP_STORE_CA_FILE` names `BACKUP_STORE_CA_FILE`. @default Secret `klutch-backup-store-admin`
   * (keys `access-key`, `secret-key`), ConfigMap `klutch-backup-store-ca` (key `ca.crt`)
   */
  readonly backupStore?: { readonly adminSecret?: string; readonly caConfigMap?: string };
  /**
   * How long a terminating replica goes on serving before it is sent SIGTERM (a preStop `sleep` of the kubelet): the
   * time the endpoints controller and kube-proxy (or a load balancer) take to stop sending it new connections. Whole
   * seconds; 0 leaves the preStop out. @default 10 s
   */
  readonly drain?: Duration;
}

/** The image the Deployment names unless `image` is given. */
export const DEFAULT_BACKEND_IMAGE = releaseImage('bind-backend');
const CONSUMER_VERBS = ['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'];
const BIND_PORT = 8080;
/** The probe port, which serves /metrics too (the Service names it `metrics`). */
export const BACKEND_PROBE_PORT = 8081;
const PROBE_PORT = BACKEND_PROBE_PORT;
const KEYS_DIR = '/etc/klutch-bind/cookie-keys';
const CA_DIR = '/etc/klutch-bind/external-ca';
const TLS_DIR = '/etc/klutch-bind/tls';
const BACKUP_STORE_CA_DIR = '/etc/klutch-bind/backup-store-ca';
/** Where the store's CA is in the Pod when its ConfigMap exists: what `--backup-store-ca-file` names. */
export const BACKUP_STORE_CA_FILE = `${BACKUP_STORE_CA_DIR}/ca.crt`;
/** After SIGTERM the server finishes its requests in flight, which --http-request-timeout (30 s) bounds, and exits. */
const SHUTDOWN_SECONDS = 35;
export class BindBackend extends Construct {
  /**
   * With `settingsConfigMap`: what that ConfigMap must hold (environment variable → value), from the props; the
   * install bundle writes it as its `backend/settings.env`. Empty otherwise (they are flags).
   */
  readonly settings: Readonly<Record<string, string>>;
  readonly namespace: kplus.Namespace;
  readonly serviceAccount: kplus.ServiceAccount;
  readonly clusterRole: kplus.ClusterRole;
  readonly deployment: kplus.Deployment;
  readonly service: kplus.Service;

  constructor(scope: Construct, id: string, props: BindBackendProps) {
    super(scope, id);
    const p = {
      image: props.image ?? DEFAULT_BACKEND_IMAGE,
      replicas: props.replicas ?? 2,
      namespace: props.namespace ?? 'klutch-bind-backend',
      clientSecret: props.clientSecret ?? { name: 'oidc-client', key: 'client-secret' },
      cookieKeys: props.cookieKeys ?? { name: 'cookie-keys', key: 'keys' },
      externalCa: props.externalCa ?? { configMap: 'kube-root-ca.crt', key: 'ca.crt' },
      namespacePrefix: props.namespacePrefix ?? 'cluster',
      consumerScope: props.consumerScope ?? 'Namespaced',
      tokenLifetime: props.tokenLifetime ?? '1h',
      prettyName: props.prettyName ?? 'klutch-kit',
      exportedGroups: props.exportedGroups ?? ['anynines.com'],
      drainSeconds: (props.drain ?? Duration.seconds(10)).toMilliseconds() / 1000,
      defaultBindPolicy: props.defaultBindPolicy ?? 'deny-all',
    };
    const fail = (field: string, problem: string): never => {
      throw new Error(`BindBackend ${id}: ${field}: ${problem}`);
    };
    if (!Number.isInteger(p.replicas) || p.replicas < 1) fail('replicas', `${p.replicas} is not a positive integer`);
    for (const [field, v] of [
      ['publicUrl', props.publicUrl],
      ['externalAddress', props.externalAddress],
      ['issuerUrl', props.issuerUrl],
    ] as const) {
      if (!/^https:\/\/[^/]+/.test(v)) fail(field, `"${v}" must be an https URL`);
    }
    if (/\/.+/.test(props.publicUrl.replace(/^https:\/\//, '').replace(/\/$/, '')))
      fail('publicUrl', `"${props.publicUrl}" must have no path`);
    if (!props.clientId) fail('clientId', 'is empty');
    if (!Number.isInteger(p.drainSeconds) || p.drainSeconds < 0)
      fail('drain', `${p.drainSeconds} s is not a whole number of seconds, 0 or more`);
    const lifetime = tokenLifetimeProblem(p.tokenLifetime);
    if (lifetime) fail('tokenLifetime', lifetime);
    if (!DEFAULT_BIND_POLICIES.includes(p.defaultBindPolicy))
      fail('defaultBindPolicy', `"${p.defaultBindPolicy}" is not ${DEFAULT_BIND_POLICIES.join(' or ')}`);
    if (p.consumerScope !== 'Namespaced' && p.consumerScope !== 'Cluster')
      fail('consumerScope', `"${p.consumerScope}" is not Namespaced or Cluster`);
    if (props.monitoringNamespace !== undefined && !/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(props.monitoringNamespace))
      fail('monitoringNamespace', `"${props.monitoringNamespace}" is not a DNS label`);
    if (props.egressPorts?.length === 0) fail('egressPorts', "is empty; leave it out for 443, 6443 and the issuer's port");
    for (const n of props.egressPorts ?? []) if (!Number.isInteger(n) || n < 1 || n > 65535) fail('egressPorts', `${n} is not a TCP port`);
    const issuerPort = Number(URL.canParse(props.issuerUrl) ? new URL(props.issuerUrl).port || 443 : fail('issuerUrl', 'is not a URL'));
    const egressPorts = [...new Set(props.egressPorts ?? [...DEFAULT_API_PORTS, issuerPort])].sort((a, b) => a - b);

    const labels = selectorLabels('klutch-bind-backend');
    this.namespace = new kplus.Namespace(this, 'Namespace', {
      metadata: { name: p.namespace, labels: { ...labels, ...RESTRICTED_NAMESPACE_LABELS } },
    });
    const meta = (name: string) => ({ name, namespace: p.namespace, labels });
    this.serviceAccount = new kplus.ServiceAccount(this, 'ServiceAccount', { metadata: meta('klutch-bind-backend'), automountToken: true });

    // Cluster-wide: what the controllers and provisioning touch, and what consumers are granted (see above).
    const role = (this.clusterRole = new kplus.ClusterRole(this, 'ClusterRole', { metadata: { name: 'klutch-bind-backend', labels } }));
    const res = (apiGroup: string, ...resourceTypes: string[]) =>
      resourceTypes.map((resourceType) => kplus.ApiResource.custom({ apiGroup, resourceType }));
    role.allow(['get', 'list', 'watch', 'create', 'delete'], ...res('', 'namespaces'));
    role.allow(['get', 'create'], ...res('', 'serviceaccounts'));
    role.allow(['create'], ...res('', 'serviceaccounts/token'));
    role.allow(CONSUMER_VERBS, ...res('', 'secrets', 'configmaps'));
    // The consumers' ClusterRoles and ClusterRoleBindings are watched: written only when the cached one differs.
    role.allow(['get', 'list', 'watch', 'create', 'update', 'patch'], ...res('rbac.authorization.k8s.io', 'clusterroles'));
    // Role and RoleBinding klutch-binder-claimed are watched; a consumer may read its Role, so the backend holds that.
    role.allow(['get', 'list', 'watch', 'create', 'update', 'patch'], ...res('rbac.authorization.k8s.io', 'roles', 'rolebindings'));
    role.allow(['get', 'create', 'update', 'patch'], ...res('', 'resourcequotas', 'resourcequotas/status'));
    // The backup store's sweep (backup-store/janitor.ts) keeps the archive of every CloudNativePG Cluster that exists.
    role.allow(['list'], ...res('postgresql.cnpg.io', 'clusters'));
    role.allow(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ...res('rbac.authorization.k8s.io', 'clusterrolebindings'));
    role.allow(
      CONSUMER_VERBS,
      ...res(BIND_GROUP, 'apiserviceexports', 'apiserviceexportrequests', 'apiservicenamespaces', 'clusterbindings'),
    );
    role.allow(
      // list and watch too: ClusterRole klutch-binder grants them on these status subresources, and only a holder may grant.
      ['get', 'list', 'watch', 'update', 'patch'],
      ...res(
        BIND_GROUP,
        'apiserviceexports/status',
        'apiserviceexportrequests/status',
        'apiservicenamespaces/status',
        'clusterbindings/status',
      ),
    );
    // The AppClusterBinding controller (backend/app-cluster-binding/app-cluster-binding.*): its objects and status, and in each
    // binding root namespace the Namespace, ServiceAccount, Role (whose rules it must hold: APIServiceBindings,
    // Leases, events), APIServiceBindings and the konnector Deployment.
    role.allow(['get', 'list', 'watch', 'update', 'patch'], ...res(BIND_GROUP, 'appclusterbindings'));
    role.allow(['get', 'update', 'patch'], ...res(BIND_GROUP, 'appclusterbindings/status'));
    role.allow(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ...res(BIND_GROUP, 'apiservicebindings'));
    role.allow(['get', 'update', 'patch'], ...res(BIND_GROUP, 'apiservicebindings/status'));
    role.allow(['patch'], ...res('', 'namespaces', 'serviceaccounts'));
    role.allow(['get', 'create', 'update'], ...res('coordination.k8s.io', 'leases'));
    role.allow(['create', 'patch'], ...res('', 'events'));
    role.allow(['get', 'create', 'update', 'patch', 'delete'], ...res('apps', 'deployments'));
    // The root namespaces' NetworkPolicy; no delete: it goes with its namespace.
    role.allow(['get', 'create', 'patch'], ...res('networking.k8s.io', 'networkpolicies'));
    // Deployments, Leases and NetworkPolicies anywhere would let a compromised backend run a Pod as any
    // ServiceAccount (kube-system's included), take over other controllers' Leases or open other namespaces' traffic:
    // an admission policy holds these writes of the backend to the binding root namespaces (`klutch-bind-…`,
    // Deployments only as their `klutch-binder`) and, for its own Lease, its namespace. Its Warning Events go on the
    // objects it refuses or acts against (an export request, a ClusterBinding), in the consumers' namespaces: the
    // containment policy holds them, as every other namespaced write, to namespaces it made and its own.
    const backendUser = `system:serviceaccount:${p.namespace}:klutch-bind-backend`;
    new ValidatingAdmissionPolicy(this, 'WritesInRootNamespaces', {
      name: 'klutch-bind-backend-root-namespaces',
      labels,
      resourceRules: [
        { apiGroups: ['apps'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['deployments'] },
        { apiGroups: ['coordination.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['leases'] },
        { apiGroups: ['networking.k8s.io'], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['networkpolicies'] },
      ],
      matchConditions: [{ name: 'backend', expression: `request.userInfo.username == '${backendUser}'` }],
      validations: [
        {
          // Its own namespace begins with the prefix too (klutch-bind-backend): only its Lease there.
          expression: `request.namespace == '${p.namespace}' ? request.resource.resource == 'leases' : request.namespace.startsWith('${ROOT_NAMESPACE_PREFIX}')`,
          messageExpression: `'the bind backend writes ' + request.resource.resource + ' only in binding root namespaces (${ROOT_NAMESPACE_PREFIX}…), not in ' + request.namespace`,
          reason: 'Forbidden',
        },
        {
          expression: `request.resource.resource != 'deployments' || object.spec.template.spec.serviceAccountName == '${BINDER_SERVICE_ACCOUNT}'`,
          messageExpression: `'the bind backend runs konnector Deployments only as ServiceAccount ${BINDER_SERVICE_ACCOUNT}, not ' + object.spec.template.spec.serviceAccountName`,
          reason: 'Forbidden',
        },
      ],
    });
    // Namespaces, Secrets and tokens cluster-wide (above) are bounded by admission to what the backend made or adopted.
    new ContainmentPolicy(this, 'Containment', { namespace: p.namespace, serviceAccount: 'klutch-bind-backend', labels });
    new ConsumerSecretTypes(this, 'ConsumerSecretTypes', { labels });
    new ConsumerClaimMachinery(this, 'ConsumerClaimMachinery', { exportedGroups: p.exportedGroups, labels });
    role.allow(['get', 'list', 'watch'], ...res(TEMPLATE_GROUP, 'apiserviceexporttemplates'));
    role.allow(['get', 'list', 'watch'], ...res('apiextensions.k8s.io', 'customresourcedefinitions'));
    for (const g of [...p.exportedGroups].sort()) role.allow(CONSUMER_VERBS, ...res(g, '*'));
    new kplus.ClusterRoleBinding(this, 'ClusterRoleBinding', { metadata: { name: 'klutch-bind-backend', labels }, role }).addSubjects(
      this.serviceAccount,
    );

    // In its own namespace: the leader-election Lease and the per-identity locks.
    const leases = new kplus.Role(this, 'LeaseRole', { metadata: meta('klutch-bind-backend-leases') });
    leases.allow(['get', 'list', 'watch', 'create', 'update', 'patch', 'delete'], ...res('coordination.k8s.io', 'leases'));
    new kplus.RoleBinding(this, 'LeaseRoleBinding', { metadata: meta('klutch-bind-backend-leases'), role: leases }).addSubjects(
      this.serviceAccount,
    );

    const publicUrl = props.publicUrl.replace(/\/$/, '');
    // Settings an operator sets per installation: flags, or (settingsConfigMap) their environment twins in a ConfigMap.
    const perInstall: [string, string][] = [
      ['oidc-issuer-url', props.issuerUrl],
      ['oidc-issuer-client-id', props.clientId],
      ['oidc-callback-url', `${publicUrl}/callback`],
      ['external-address', props.externalAddress],
      ...(props.externalServerName ? [['external-server-name', props.externalServerName] as [string, string]] : []),
      // A setting, not a fixed flag: an overlay that wants Klutch's behaviour sets BACKEND_DEFAULT_BIND_POLICY=allow-all.
      ['default-bind-policy', p.defaultBindPolicy],
    ];
    this.settings = props.settingsConfigMap ? Object.fromEntries(perInstall.map(([flag, v]) => [envName(flag), v])) : {};
    this.deployment = new kplus.Deployment(this, 'Deployment', {
      metadata: meta('klutch-bind-backend'),
      replicas: p.replicas,
      serviceAccount: this.serviceAccount,
      // Its controllers and provisioning call the API server: it needs its token.
      automountServiceAccountToken: true,
      select: false,
      securityContext: { ensureNonRoot: true, user: RUNTIME_USER, group: RUNTIME_USER },
      // The drain, then the shutdown: past this the kubelet kills the container.
      terminationGracePeriod: Duration.seconds(p.drainSeconds + SHUTDOWN_SECONDS),
    });
    const pods = selectStably(this.deployment, 'klutch-bind-backend');
    const keys = kplus.Volume.fromSecret(this, 'CookieKeys', kplus.Secret.fromSecretName(this, 'CookieKeysSecret', p.cookieKeys.name), {
      name: 'cookie-keys',
      items: { [p.cookieKeys.key]: { path: 'keys' } },
    });
    const ca = kplus.Volume.fromConfigMap(
      this,
      'ExternalCa',
      kplus.ConfigMap.fromConfigMapName(this, 'ExternalCaConfigMap', p.externalCa.configMap),
      {
        name: 'external-ca',
        items: { [p.externalCa.key]: { path: 'ca.crt' } },
      },
    );
    const storeAdmin = kplus.Secret.fromSecretName(this, 'BackupStoreAdmin', props.backupStore?.adminSecret ?? 'klutch-backup-store-admin');
    const storeCa = kplus.Volume.fromConfigMap(
      this,
      'BackupStoreCa',
      kplus.ConfigMap.fromConfigMapName(this, 'BackupStoreCaConfigMap', props.backupStore?.caConfigMap ?? 'klutch-backup-store-ca'),
      { name: 'backup-store-ca', optional: true, items: { 'ca.crt': { path: 'ca.crt' } } },
    );
    const container = this.deployment.addContainer({
      name: 'backend',
      image: p.image,
      // A tagged release: what the node has is that image (cdk8s-plus' default, Always, needs the registry on every restart).
      imagePullPolicy: kplus.ImagePullPolicy.IF_NOT_PRESENT,
      args: [
        `--listen-address=0.0.0.0:${BIND_PORT}`,
        `--probe-address=0.0.0.0:${PROBE_PORT}`,
        ...(props.settingsConfigMap ? [] : perInstall.map(([flag, v]) => `--${flag}=${v}`)),
        `--cookie-keys-file=${KEYS_DIR}/keys`,
        `--external-ca-file=${CA_DIR}/ca.crt`,
        ...(props.tlsSecret ? [`--tls-cert-file=${TLS_DIR}/tls.crt`, `--tls-key-file=${TLS_DIR}/tls.key`] : []),
        `--namespace-prefix=${p.namespacePrefix}`,
        `--consumer-scope=${p.consumerScope}`,
        `--token-lifetime=${p.tokenLifetime}`,
        `--pretty-name=${p.prettyName}`,
        // The root namespaces' konnectors are scraped from the same namespace as the backend (their NetworkPolicy).
        ...(props.monitoringNamespace !== undefined ? [`--monitoring-namespace=${props.monitoringNamespace}`] : []),
      ],
      envVariables: {
        BACKEND_OIDC_ISSUER_CLIENT_SECRET: kplus.EnvValue.fromSecretValue({
          secret: kplus.Secret.fromSecretName(this, 'OidcClientSecret', p.clientSecret.name),
          key: p.clientSecret.key,
        }),
        // The object store's admin keys, where the operator made their Secret (docs/backups.md).
        ...Object.fromEntries(
          (
            [
              ['BACKEND_BACKUP_STORE_ADMIN_ACCESS_KEY', 'access-key'],
              ['BACKEND_BACKUP_STORE_ADMIN_SECRET_KEY', 'secret-key'],
            ] as const
          ).map(([name, key]) => [name, kplus.EnvValue.fromSecretValue({ secret: storeAdmin, key }, { optional: true })]),
        ),
        POD_NAME: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAME),
        POD_NAMESPACE: kplus.EnvValue.fromFieldRef(kplus.EnvFieldPaths.POD_NAMESPACE),
      },
      ports: [
        { number: BIND_PORT, name: 'http' },
        { number: PROBE_PORT, name: 'probes' },
      ],
      liveness: kplus.Probe.fromHttpGet('/healthz', {
        port: PROBE_PORT,
        periodSeconds: Duration.seconds(10),
        timeoutSeconds: PROBE_TIMEOUT,
      }),
      readiness: kplus.Probe.fromHttpGet('/readyz', {
        port: PROBE_PORT,
        periodSeconds: Duration.seconds(5),
        timeoutSeconds: PROBE_TIMEOUT,
      }),
      resources: props.resources ?? {
        cpu: { request: kplus.Cpu.millis(100) },
        memory: { request: Size.mebibytes(128), limit: Size.mebibytes(512) },
      },
      securityContext: RESTRICTED_CONTAINER,
    });
    if (p.drainSeconds > 0) {
      // A deleted Pod leaves the Service's endpoints a moment after it is told to stop; a replica that stopped
      // listening at once had kube-proxy still sending it new connections, which were refused (a browser's login
      // dropped while the leader's Pod was deleted, seen end to end on Pods). The kubelet's sleep action (on by default since Kubernetes 1.30) keeps it
      // serving meanwhile without a shell in the image; cdk8s-plus' Handler has no sleep, hence the patch.
      ApiObject.of(this.deployment).addJsonPatch(
        JsonPatch.add('/spec/template/spec/containers/0/lifecycle', { preStop: { sleep: { seconds: p.drainSeconds } } }),
      );
    }
    container.mount(KEYS_DIR, keys, { readOnly: true });
    container.mount(CA_DIR, ca, { readOnly: true });
    container.mount(BACKUP_STORE_CA_DIR, storeCa, { readOnly: true });
    if (props.settingsConfigMap) {
      container.env.copyFrom(kplus.Env.fromConfigMap(kplus.ConfigMap.fromConfigMapName(this, 'Settings', props.settingsConfigMap)));
    }
    if (props.tlsSecret) {
      const tls = kplus.Volume.fromSecret(this, 'Tls', kplus.Secret.fromSecretName(this, 'TlsSecret', props.tlsSecret), { name: 'tls' });
      container.mount(TLS_DIR, tls, { readOnly: true });
    }
    this.service = new kplus.Service(this, 'Service', {
      metadata: meta('klutch-bind-backend'),
      selector: pods,
      // The probe port too, named `metrics`, so a ServiceMonitor (or any scraper) finds /metrics by the Service; the
      // NetworkPolicy still admits it only from the monitoring namespace.
      ports: [
        props.tlsSecret ? { port: 443, targetPort: BIND_PORT, name: 'https' } : { port: 80, targetPort: BIND_PORT, name: 'http' },
        { port: PROBE_PORT, targetPort: PROBE_PORT, name: 'metrics' },
      ],
    });
    new NamespacePolicies(this, 'NetworkPolicies', {
      namespace: p.namespace,
      name: 'klutch-bind-backend',
      pods,
      publicPorts: [BIND_PORT],
      probePorts: [PROBE_PORT],
      monitoringNamespace: props.monitoringNamespace,
      apiPorts: egressPorts,
    });
  }
}

/** The name of the admission policy ConsumerSecretTypes ships. */
export const CONSUMER_SECRET_TYPES_POLICY = 'klutch-bind-consumer-secret-types';

/**
 * Consumer-owned Secret claims (`selector.owner: Consumer`) let a consumer create Secrets in its provider namespaces
 * and read back those marked `klutch.anynines.com/resource-owner: Consumer` (provision/claimed.ts). A Secret of type
 * `kubernetes.io/service-account-token` naming a ServiceAccount there would be filled in by the token controller: a
 * token of any ServiceAccount of the namespace (the data-service operator's Pods' too) in the consumer's hands. RBAC
 * cannot look at a type, so this policy does: a consumer writes Secrets only of type Opaque — what Klutch's konnector
 * copies up for an app, and every credential Secret of the claims. It holds the identity every consumer grant is
 * bound to, ServiceAccount `klutch-binder` of a consumer's namespace (the backend puts back any other subject of its
 * RoleBindings), whichever backend made it; one policy per control plane, the same from every backend.
 */
export class ConsumerSecretTypes extends Construct {
  constructor(scope: Construct, id: string, props: { readonly labels?: Readonly<Record<string, string>> } = {}) {
    super(scope, id);
    const type = "(has(object.type) ? object.type : 'Opaque')";
    new ValidatingAdmissionPolicy(this, 'Policy', {
      name: CONSUMER_SECRET_TYPES_POLICY,
      ...(props.labels ? { labels: props.labels } : {}),
      resourceRules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['secrets'] }],
      matchConditions: [
        {
          name: 'consumer',
          expression: `request.userInfo.username.startsWith('system:serviceaccount:') && request.userInfo.username.endsWith(':${BINDER_SERVICE_ACCOUNT}')`,
        },
      ],
      validations: [
        {
          expression: `${type} == 'Opaque'`,
          messageExpression:
            `request.operation + ' of Secret ' + request.namespace + '/' + request.name + ' refused: a consumer ` +
            `(' + request.userInfo.username + ') writes Secrets on the control plane only of type Opaque, not ' + ${type} + ` +
            `' (field type): Kubernetes fills credentials into some types, such as a ServiceAccount token; copy the ` +
            `app Secret as type Opaque (the type cannot change: recreate it in the app cluster) or leave it out of the claim'`,
          reason: 'Forbidden',
        },
      ],
    });
  }
}
