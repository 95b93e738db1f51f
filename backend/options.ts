/**
 * The backend's flags, each with an environment variable twin (`--oidc-issuer-url` ↔ `BACKEND_OIDC_ISSUER_URL`), from
 * one table (lib/flags.ts, the mechanism every process shares) that also writes `--help` and is checked against the
 * table of docs/backend.md. A flag wins over its variable. Names follow Klutch's
 * backend where it has the same setting, so an existing Deployment's arguments keep their meaning; every other flag of
 * Klutch's example-backend (and klog's `-v`) is either mapped onto ours, with a note for the log saying what it became
 * and what to prefer, or refused with a message naming it and why. None is ignored.
 */
import { DEFAULT_BIND_POLICIES, type DefaultBindPolicy } from './authz/bind-policy';
import type { ClaimedAccess, ConsumerScope } from './consumer-access';
import {
  imagePatternProblem,
  KONNECTOR_MAX_RESOURCES,
  konnectorQuantityProblem,
  TUNABLE_RESOURCES,
} from './app-cluster-binding/app-cluster-binding.overrides';
import { imageRepository } from '../lib/image-reference';
import { TrustedProxies } from './http/trusted-proxies';
import {
  addressFlag,
  countFlag,
  durationFlag,
  envVariable,
  flagDefault,
  flagHelp,
  HELP_FLAG,
  logLevelFlag,
  parseFlags,
  switchFlag,
  UsageError,
  VERSION_FLAG,
  type Flag,
  type FlagTable,
  type MappedFlag,
} from '../lib/flags';
import { isLoopbackHost } from '../lib/address';
import { parseGoDuration } from '../lib/duration';
import { KONNECTOR_IMAGE, releaseDoc } from '../lib/version';

const SECURITY = releaseDoc('SECURITY.md');

/** The shortest ServiceAccount token Kubernetes issues (`expirationSeconds` of a TokenRequest: 600). */
const MIN_TOKEN_LIFETIME_MS = 600_000;

/**
 * What is wrong with a `--token-lifetime` value, or undefined: the one rule the backend and its construct
 * (backend/deploy/bind-backend.ts) both apply, so that synth never writes a value the backend refuses at start.
 */
export function tokenLifetimeProblem(value: string): string | undefined {
  const ms = parseGoDuration(value);
  if (ms === undefined) return `"${value}" is not a duration such as 1h, 90m or 1h30m`;
  if (ms < MIN_TOKEN_LIFETIME_MS) return `"${value}" is less than 10m, the shortest token Kubernetes issues`;
  return undefined;
}

export interface BackendOptions {
  /**
   * Klutch's control-plane mode: controllers only (AppClusterBindings are the way to bind), no bind endpoints, OIDC
   * or cookies; the OIDC fields are then empty and the web flags refused.
   */
  readonly controlPlaneMode: boolean;
  readonly listenAddress: string;
  readonly probeAddress: string;
  readonly tlsCertFile?: string;
  readonly tlsKeyFile?: string;
  readonly httpRequestTimeoutMs: number;
  readonly httpHeadersTimeoutMs: number;
  readonly httpKeepAliveTimeoutMs: number;
  readonly httpMaxConnections: number;
  readonly loginRateLimit: number;
  readonly loginRateBurst: number;
  /** Proxies in front of the backend whose X-Forwarded-For names the client the login limit counts. */
  readonly loginRateTrustedProxies: TrustedProxies;
  readonly oidcIssuerUrl: string;
  readonly oidcClientId: string;
  readonly oidcClientSecret: string;
  readonly oidcCallbackUrl: string;
  readonly oidcCaFile?: string;
  /** The ID token claim holding the user's groups, for the bind rules. */
  readonly oidcGroupsClaim: string;
  /** Scopes asked for besides `openid profile email`. */
  readonly oidcExtraScopes: readonly string[];
  /** What applies to an APIServiceExportTemplate without a bind rule (authz/bind-policy.ts). */
  readonly defaultBindPolicy: DefaultBindPolicy;
  /** Machine binding (CI): access tokens of the client-credentials grant on /resources and /bind. */
  readonly machineBind: boolean;
  /** The resource indicator kubectl bind asks machine tokens for; undefined: the backend's external URL. */
  readonly machineBindResource?: string;
  /** Exactly one of cookieKeysFile and klutchCookieKeys. */
  readonly cookieKeysFile?: string;
  /** Klutch's --cookie-signing-key and --cookie-encryption-key, decoded. */
  readonly klutchCookieKeys?: { readonly signing: Buffer; readonly encryption?: Buffer };
  readonly kubeconfig?: string;
  /** Undefined: the Pod's namespace, else the kubeconfig context's, else `default` (resolved at start). */
  readonly namespace?: string;
  readonly namespacePrefix: string;
  readonly prettyName: string;
  readonly consumerScope: ConsumerScope;
  /** The only isolation this backend does (Klutch's default). */
  readonly clusterScopedIsolation: 'Prefixed';
  /** Undefined: the server of the kubeconfig (Klutch's "service account's hosts"), resolved at start. */
  readonly externalAddress?: string;
  readonly externalCaFile?: string;
  readonly externalServerName?: string;
  readonly tokenLifetimeMs: number;
  readonly tokenRefreshBeforeMs: number;
  readonly exportRequestTimeoutMs: number;
  readonly claimedAccess: ClaimedAccess;
  readonly unboundConsumerTtlMs: number;
  readonly abandonedConsumerAfterMs: number;
  readonly legacyTokenGraceMs: number;
  readonly legacyTokenMaxAgeMs: number;
  readonly maxClustersPerSubject: number;
  /** How many AppClusterBindings of one namespace are bound, the oldest first. */
  readonly maxAppClusterBindings: number;
  readonly maxServiceNamespaces: number;
  readonly maxExportRequests: number;
  /** The ResourceQuota of every provider namespace (--claim-quota), by ResourceQuota resource name; empty: none. */
  readonly claimQuota: Readonly<Record<string, string>>;
  /** The image of the control-plane konnectors the AppClusterBinding controller deploys. */
  readonly konnectorImage: string;
  /** Images an AppClusterBinding's override may name besides konnectorImage: references, or `<repository>:*`. */
  readonly konnectorAllowedImages: readonly string[];
  /** The most an AppClusterBinding's override may give its konnector, per resource (cpu, memory, ephemeral-storage). */
  readonly konnectorMaxResources: Readonly<Record<string, string>>;
  /** TCP ports the NetworkPolicy of binding root namespaces lets konnectors reach (API servers). */
  readonly konnectorApiPorts: readonly number[];
  /** The namespace whose Pods may scrape root konnectors' probe port; undefined: none (kubelet probes only). */
  readonly monitoringNamespace?: string;
  /** The object store every provider namespace gets a backup tenant in (--backup-store-*); undefined: none. */
  readonly backupStore?: BackupStoreOptions;
  readonly leaderElection: boolean;
  readonly leaseName: string;
  readonly identity: string;
  readonly logLevel: string;
  /** Klutch flags given in Klutch's form, and what they became. */
  readonly mapped: readonly MappedFlag[];
}

/** The platform's object store (versitygw's admin API) and what each provider namespace gets there. */
export interface BackupStoreOptions {
  readonly endpoint: string;
  readonly adminAccessKey: string;
  readonly adminSecretKey: string;
  readonly caFile?: string;
  /** With one `%s` for the provider namespace. */
  readonly bucket: string;
  readonly secret: string;
  /** A deleted instance's or tenant's backups are swept this long after the last object written there. */
  readonly keepDeletedMs: number;
  readonly sweepIntervalMs: number;
}

interface BackendFlag extends Flag {
  /** The option it sets; none for a flag that is only refused. */
  readonly key?: keyof BackendOptions;
}

/** Every flag, in --help order. */
export const FLAGS: readonly BackendFlag[] = [
  {
    name: 'listen-address',
    key: 'listenAddress',
    arg: 'host:port',
    default: '0.0.0.0:8080',
    help: 'the bind endpoints (/export, /authorize, /callback, /resources, /bind)',
  },
  {
    name: 'listen-ip',
    key: 'listenAddress',
    arg: 'ip',
    optional: true,
    help: "Klutch's: with --listen-port, becomes --listen-address <ip>:<port> (ip default 0.0.0.0, port 8080); not with --listen-address; prefer --listen-address",
  },
  { name: 'listen-port', key: 'listenAddress', arg: 'port', optional: true, help: "Klutch's: see --listen-ip" },
  {
    name: 'probe-address',
    key: 'probeAddress',
    arg: 'host:port',
    default: '0.0.0.0:8081',
    help: '/healthz, /readyz and Prometheus /metrics',
  },
  {
    name: 'tls-cert-file',
    key: 'tlsCertFile',
    arg: 'file',
    optional: true,
    help: 'serve the bind endpoints over HTTPS with this certificate (and --tls-key-file)',
  },
  { name: 'tls-key-file', key: 'tlsKeyFile', arg: 'file', optional: true, help: 'the private key of --tls-cert-file' },
  {
    name: 'http-request-timeout',
    key: 'httpRequestTimeoutMs',
    arg: 'duration',
    default: '30s',
    help: 'a client must send its whole request within this (slow clients hold a connection)',
  },
  {
    name: 'http-headers-timeout',
    key: 'httpHeadersTimeoutMs',
    arg: 'duration',
    default: '10s',
    help: 'a client must send its request headers within this (at most --http-request-timeout)',
  },
  {
    name: 'http-keep-alive-timeout',
    key: 'httpKeepAliveTimeoutMs',
    arg: 'duration',
    default: '5s',
    help: 'an idle keep-alive connection is closed after this',
  },
  {
    name: 'http-max-connections',
    key: 'httpMaxConnections',
    arg: 'n',
    default: '1000',
    help: 'open connections to the bind endpoints at most; more are refused',
  },
  {
    name: 'login-rate-limit',
    key: 'loginRateLimit',
    arg: 'per-minute',
    default: '30',
    help: 'requests per minute one client address (an IPv6 /64) may make to /authorize, /callback and /bind after the burst; more are answered 429 with Retry-After (0: no limit). Behind a proxy every client has its address unless --login-rate-trusted-proxies names it',
  },
  {
    name: 'login-rate-burst',
    key: 'loginRateBurst',
    arg: 'n',
    default: '20',
    help: 'requests one client address may make to those endpoints at once',
  },
  {
    name: 'login-rate-trusted-proxies',
    key: 'loginRateTrustedProxies',
    arg: 'cidrs',
    default: 'none',
    help: 'the load balancers or ingress proxies in front of the backend, comma-separated addresses or networks (10.0.0.0/8, fd00::/8): for a connection from one of them the login limit counts the client X-Forwarded-For names (the rightmost address no trusted proxy holds) instead of the proxy. Without it everyone behind a proxy shares one limit; never name addresses clients can connect from, or they choose their own',
  },
  {
    name: 'oidc-issuer-url',
    key: 'oidcIssuerUrl',
    arg: 'url',
    help: 'the OpenID provider (https; http only on loopback); its discovery document is read at start and retried until it answers',
  },
  { name: 'oidc-issuer-client-id', key: 'oidcClientId', arg: 'id', help: 'the client registered at the OpenID provider' },
  {
    name: 'oidc-issuer-client-secret',
    key: 'oidcClientSecret',
    arg: 'secret',
    help: 'its secret (prefer the environment variable, from a Secret)',
  },
  {
    name: 'oidc-callback-url',
    key: 'oidcCallbackUrl',
    arg: 'url',
    help: "the redirect URI registered for the client: <external URL of this backend>/callback (also /export's authorize URL); https (plain http only on a loopback address)",
  },
  {
    name: 'oidc-authorize-url',
    key: 'oidcCallbackUrl',
    arg: 'url',
    optional: true,
    help: "Klutch's: /export's authorize URL; ours is always --oidc-callback-url with /authorize for /callback, so this may only say that (any other URL is refused)",
  },
  {
    name: 'oidc-ca-file',
    key: 'oidcCaFile',
    arg: 'file',
    optional: true,
    help: 'PEM CAs trusted for the OpenID provider, besides the system ones',
  },
  {
    name: 'oidc-groups-claim',
    key: 'oidcGroupsClaim',
    arg: 'claim',
    default: 'groups',
    help: "the ID token claim holding the user's groups (an array of strings, or one string), which the bind rules name; read only from the verified ID token",
  },
  {
    name: 'oidc-extra-scopes',
    key: 'oidcExtraScopes',
    arg: 'scope,...',
    optional: true,
    help: 'scopes asked for besides openid profile email, e.g. groups (Dex puts groups in ID tokens only then)',
  },
  {
    name: 'default-bind-policy',
    key: 'defaultBindPolicy',
    arg: 'allow-all|deny-all',
    default: 'allow-all',
    help: "who may bind an API whose APIServiceExportTemplate has no bind rule (annotations klutch-kit.anynines.com/bind-allowed-groups, -subjects, -clients): allow-all, every logged-in user (Klutch's behaviour), or deny-all, nobody until the operator names who",
  },
  // Machine binding (kubectl bind --client-id; docs/decisions/machine-bind.md).
  {
    name: 'machine-bind',
    key: 'machineBind',
    boolean: true,
    default: 'false',
    help: 'also bind machine identities (CI pipelines, GitOps): /resources and /bind take an OAuth2 access token of the client-credentials grant, a JWT of type at+jwt (RFC 9068) signed by the --oidc-issuer-url, whose audience contains --oidc-issuer-client-id; /export then offers the OAuth2ClientCredentials method',
  },
  {
    name: 'machine-bind-resource',
    key: 'machineBindResource',
    arg: 'uri',
    default: 'the external URL of --oidc-callback-url without /callback',
    help: 'the resource indicator (RFC 8707) kubectl bind asks the OpenID provider for a machine token for; register it there with audience --oidc-issuer-client-id',
  },
  {
    name: 'cookie-keys-file',
    key: 'cookieKeysFile',
    arg: 'file',
    optional: true,
    help: "keys that seal cookies and state: one base64 key of 32 or more bytes a line, the first seals, all open; re-read when it changes (a mounted Secret). Required unless Klutch's --cookie-signing-key is given",
  },
  {
    name: 'cookie-signing-key',
    key: 'klutchCookieKeys',
    arg: 'base64',
    optional: true,
    help: "Klutch's, instead of --cookie-keys-file: a base64 key of 32 or 64 bytes; with --cookie-encryption-key it becomes one sealing key (HKDF of both), the same on every replica and restart given the same flags, never rotated; prefer --cookie-keys-file from a Secret",
  },
  {
    name: 'cookie-encryption-key',
    key: 'klutchCookieKeys',
    arg: 'base64',
    optional: true,
    help: "Klutch's, optional, only with --cookie-signing-key: a base64 key of 16, 24 or 32 bytes, mixed into that one sealing key",
  },
  {
    name: 'kubeconfig',
    key: 'kubeconfig',
    arg: 'file',
    optional: true,
    help: 'the provider cluster (default: $KUBECONFIG, else the in-cluster ServiceAccount)',
  },
  {
    name: 'namespace',
    key: 'namespace',
    arg: 'name',
    default: "$POD_NAMESPACE, else the Pod's (its ServiceAccount's namespace file), else the kubeconfig context's, else default",
    help: "the backend's own namespace: its leader-election Lease",
  },
  {
    name: 'namespace-prefix',
    key: 'namespacePrefix',
    arg: 'prefix',
    default: 'cluster',
    help: "consumers get a cluster namespace named <prefix>-<five characters of the identity's hash> (another, <prefix>-<random>, when that name is taken)",
  },
  {
    name: 'pretty-name',
    key: 'prettyName',
    arg: 'name',
    default: 'klutch-kit',
    help: "the provider's display name, in /export and on every ClusterBinding",
  },
  {
    name: 'consumer-scope',
    key: 'consumerScope',
    arg: 'Namespaced|Cluster',
    default: 'Namespaced',
    help: `the informerScope of exports, where Klutch's konnector watches claims: Namespaced, the provider namespaces made for the consumer one by one, and nothing is granted cluster-wide; Cluster, one informer over all namespaces, for which a consumer may list and watch the exported resources everywhere — other consumers' claims included (${SECURITY}) — but writes them only in its own provider namespaces, as with Namespaced. Either way only namespaced CRDs are exported (Klutch's lower-case namespaced and cluster are the same)`,
  },
  {
    name: 'cluster-scoped-isolation',
    key: 'clusterScopedIsolation',
    arg: 'Prefixed',
    default: 'Prefixed',
    help: `Klutch's: how a consumer's cluster-scoped objects are isolated on the provider. This backend exports no cluster-scoped resource (RBAC cannot hold its writes to one consumer: ${SECURITY}), so only Klutch's default Prefixed (<cluster namespace>-<name>) is accepted, and means nothing more (prefixed accepted; Klutch's namespaced and none are refused)`,
  },
  {
    name: 'external-address',
    key: 'externalAddress',
    arg: 'url',
    optional: true,
    help: "the provider API server as consumers reach it (https), written into every consumer's kubeconfig (default, as Klutch's: the server of --kubeconfig or the in-cluster one, which app clusters can rarely reach: set it)",
  },
  {
    name: 'external-ca-file',
    key: 'externalCaFile',
    arg: 'file',
    optional: true,
    help: 'its CA, inlined into the kubeconfigs (default: the CA of --kubeconfig or the in-cluster one)',
  },
  {
    name: 'external-server-name',
    key: 'externalServerName',
    arg: 'name',
    optional: true,
    help: 'TLS server name for --external-address, when it differs from the host',
  },
  {
    name: 'token-lifetime',
    key: 'tokenLifetimeMs',
    arg: 'duration',
    default: '1h',
    help: 'lifetime of the TokenRequest token in a kubeconfig (10m or more)',
  },
  {
    name: 'token-refresh-before',
    key: 'tokenRefreshBeforeMs',
    arg: 'duration',
    default: 'half the lifetime',
    help: 'how long before expiry a token is replaced in the provider-side kubeconfig Secret',
  },
  {
    name: 'export-request-timeout',
    key: 'exportRequestTimeoutMs',
    arg: 'duration',
    default: '1m',
    help: "how long an APIServiceExportRequest waits for its claim CRD (reason CRDNotFound) before it fails, as Klutch's",
  },
  {
    name: 'claimed-access',
    key: 'claimedAccess',
    arg: 'Object|Namespace',
    default: 'Object',
    help: "how consumers read claimed Secrets/ConfigMaps in their provider namespaces: Object grants get/list/watch on exactly the objects a claim shares (Role klutch-binder-claimed, by name); Namespace grants read on all of them there, and on every Secret of the consumer's cluster namespace, where Object grants only its kubeconfig Secret by name (for app clusters still running Klutch's konnector, which lists them namespace-wide), never cluster-wide",
  },
  {
    name: 'unbound-consumer-ttl',
    key: 'unboundConsumerTtlMs',
    arg: 'duration',
    default: '1h',
    help: 'a cluster namespace that never got an export within this time is deleted (an abandoned or refused bind)',
  },
  {
    name: 'abandoned-consumer-after',
    key: 'abandonedConsumerAfterMs',
    arg: 'duration',
    default: '720h',
    help: "a consumer without a konnector heartbeat for this long has its credentials revoked (its kubeconfig Secret is deleted, and an adopted consumer's legacy token Secret; no data is): condition CredentialsRevoked on its ClusterBinding; kubectl bind again restores them",
  },
  {
    name: 'legacy-token-grace',
    key: 'legacyTokenGraceMs',
    arg: 'duration',
    default: '10m',
    help: "a consumer adopted from Klutch's backend keeps its legacy ServiceAccount token until its konnector heartbeats this long after the rotated token was written; then the legacy token Secret is deleted",
  },
  {
    name: 'legacy-token-max-age',
    key: 'legacyTokenMaxAgeMs',
    arg: 'duration',
    default: '168h',
    help: "the legacy token Secret of a consumer adopted from Klutch's backend is deleted this long after the adoption at the latest, heartbeat or not (it never expires); not less than --legacy-token-grace",
  },
  {
    name: 'max-clusters-per-subject',
    key: 'maxClustersPerSubject',
    arg: 'n',
    default: '20',
    help: 'how many app clusters (cluster namespaces) one OIDC subject may bind; /bind refuses the next with 403',
  },
  {
    name: 'max-app-cluster-bindings',
    key: 'maxAppClusterBindings',
    arg: 'n',
    default: '20',
    help: "how many AppClusterBindings of one namespace (a team's) are bound, the oldest first: each runs a konnector on the control plane. A younger one waits with WithinLimit=False (TooManyAppClusterBindings) until one is deleted; one bound already stays bound when the limit is lowered",
  },
  {
    name: 'max-apiservicenamespaces',
    key: 'maxServiceNamespaces',
    arg: 'n',
    default: '100',
    help: 'APIServiceNamespaces per cluster namespace (a ResourceQuota there)',
  },
  {
    name: 'max-export-requests',
    key: 'maxExportRequests',
    arg: 'n',
    default: '50',
    help: 'APIServiceExportRequests per cluster namespace at a time (a ResourceQuota there; finished ones are deleted after 10m)',
  },
  {
    name: 'claim-quota',
    key: 'claimQuota',
    arg: 'resource=n,...',
    default: 'none',
    help: "what a consumer's claims may cost in each of its provider namespaces, a ResourceQuota there (klutch-claims): comma-separated ResourceQuota resources and limits, e.g. count/postgresqlinstances.anynines.com=5,services.loadbalancers=2,requests.storage=100Gi,persistentvolumeclaims=10. A claim beyond it is refused on the control plane, and the konnector names the refusal on the claim in the app cluster (event QuotaExceeded)",
  },
  {
    name: 'leader-election',
    key: 'leaderElection',
    boolean: true,
    default: 'true',
    help: 'run the controllers only on the replica holding the Lease (--leader-election=false: always)',
  },
  { name: 'lease-name', key: 'leaseName', arg: 'name', default: 'klutch-bind-backend', help: 'the leader-election Lease' },
  { name: 'identity', key: 'identity', arg: 'name', default: '$POD_NAME, else the host name', help: 'this replica in the Lease' },
  { name: 'log-level', key: 'logLevel', arg: 'level', default: 'info', help: 'pino level: trace, debug, info, warn, error' },
  {
    name: 'v',
    short: 'v',
    key: 'logLevel',
    arg: 'n',
    optional: true,
    help: "klog's verbosity (Klutch's -v): 0-3 becomes --log-level=info, 4-5 debug, 6 or more trace; not with --log-level; prefer --log-level",
  },
  {
    name: 'testing-auto-select',
    arg: 'resource.group',
    optional: true,
    help: "Klutch's testing aid that pre-selects a resource on the bind page: refused, this backend's bind page has no such shortcut",
  },
  {
    name: 'control-plane-mode',
    key: 'controlPlaneMode',
    boolean: true,
    default: 'false',
    help: "Klutch's control-plane mode: run the controllers only (AppClusterBindings bind app clusters), without the bind endpoints, OIDC or cookies; the flags of those (listen, tls, http, login-rate, oidc, cookie, machine-bind) are then refused",
  },
  {
    name: 'konnector-image',
    key: 'konnectorImage',
    arg: 'image',
    default: KONNECTOR_IMAGE,
    help: "the image of the konnector Deployments the AppClusterBinding controller writes (an AppClusterBinding's spec.konnector.overrides.image may name one of --konnector-allowed-images instead)",
  },
  {
    name: 'konnector-allowed-images',
    key: 'konnectorAllowedImages',
    arg: 'images',
    default: 'none: only --konnector-image',
    help: "the images an AppClusterBinding's spec.konnector.overrides.image may name besides --konnector-image, comma-separated: a reference, or <repository>:* for any tag or digest of it; any other is refused with a condition on the AppClusterBinding and runs nowhere",
  },
  {
    name: 'konnector-max-resources',
    key: 'konnectorMaxResources',
    arg: 'resource=quantity,...',
    default: 'cpu=2,memory=1Gi,ephemeral-storage=1Gi',
    help: "the most an AppClusterBinding's spec.konnector.overrides.resources may request or limit its konnector to, comma-separated, per resource (cpu, memory, ephemeral-storage; one not named keeps its default; the konnector's own requests and limits above it are lowered to it): a team's konnector shares the control plane's nodes with every other team's. More, another resource, or a request above its limit is refused with a condition on the AppClusterBinding and runs nowhere",
  },
  {
    name: 'konnector-api-ports',
    key: 'konnectorApiPorts',
    arg: 'ports',
    default: '443,6443',
    help: "TCP ports, comma-separated, that the NetworkPolicy of every binding root namespace lets konnectors reach (the app clusters' and the control plane's API servers; the port of --external-address is added); an AppClusterBinding whose app cluster listens on another is refused (AppClusterAccess PortNotAllowed)",
  },
  {
    name: 'monitoring-namespace',
    key: 'monitoringNamespace',
    arg: 'namespace',
    optional: true,
    help: "the namespace whose Pods (Prometheus) may scrape the konnectors' probe port (/metrics, 8080) in binding root namespaces; without it the NetworkPolicy of a root namespace admits nothing in (the kubelet's probes come from the node, which most CNIs let through regardless)",
  },
  {
    name: 'backup-store-endpoint',
    arg: 'url',
    optional: true,
    help: `the platform's object store (the Versity S3 Gateway's S3 port, where its admin API answers): every provider namespace gets a backup tenant there, a user of its own and the bucket of --backup-store-bucket, and Secret --backup-store-secret with its keys, which the cnpg backend's backups read (${releaseDoc('docs/backups.md')}); without it no namespace gets one`,
  },
  {
    name: 'backup-store-admin-access-key',
    arg: 'key',
    optional: true,
    help: "the store's admin (root) access key; required with --backup-store-endpoint (prefer the environment variable, from a Secret)",
  },
  {
    name: 'backup-store-admin-secret-key',
    arg: 'secret',
    optional: true,
    help: "the store's admin (root) secret key; required with --backup-store-endpoint (prefer the environment variable, from a Secret)",
  },
  {
    name: 'backup-store-ca-file',
    arg: 'file',
    optional: true,
    help: "PEM of the CA that issued the store's certificate: trusted for the admin API and put into every tenant Secret as ca.crt; none: the system's CAs",
  },
  {
    name: 'backup-store-bucket',
    arg: 'pattern',
    default: 'klutch-%s',
    help: "each provider namespace's bucket, %s standing for the namespace: the cnpg offering's backups.bucket must be the same",
  },
  {
    name: 'backup-store-secret',
    arg: 'name',
    default: 'klutch-backup-store',
    help: "the Secret each provider namespace gets (ACCESS_KEY_ID, ACCESS_SECRET_KEY, ca.crt): the cnpg offering's backups.secret must be the same",
  },
  {
    name: 'backup-store-keep-deleted',
    arg: 'duration',
    default: '720h',
    help: "how long a deleted instance's backups (and a deleted provider namespace's bucket and user) stay in the store after the last object written there: restorable with restoreFrom until then, removed by the sweep after; keep it at least the longest backups.retention of the cnpg offerings",
  },
  {
    name: 'backup-store-sweep-interval',
    arg: 'duration',
    default: '1h',
    help: 'how often the leader sweeps the store for what --backup-store-keep-deleted lets go (first when it starts leading)',
  },
];

/** The backend's flag table: every flag also read from `BACKEND_<FLAG>`. */
export const BACKEND_FLAGS: FlagTable = { flags: FLAGS, envPrefix: 'BACKEND' };

/** `oidc-issuer-url` → `BACKEND_OIDC_ISSUER_URL`. */
export function envName(flag: string): string {
  return envVariable(BACKEND_FLAGS, flag) as string;
}

export function usage(): string {
  return [
    'Usage: node backend.mjs [flags]',
    '',
    'The klutch-kit bind backend: app clusters bind to the data-service APIs over OIDC (Klutch wire protocol).',
    '',
    'Flags (each also read from its environment variable; the flag wins):',
    flagHelp(BACKEND_FLAGS),
    HELP_FLAG,
    VERSION_FLAG,
  ].join('\n');
}

/** Parses `argv` and `env` into options; throws UsageError naming the flag and its variable. */
export function parseOptions(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  hostname = 'backend',
): BackendOptions | 'help' | 'version' {
  const flags = parseFlags(BACKEND_FLAGS, argv, env, { version: true });
  if (flags.help) return 'help';
  if (flags.version) return 'version';
  const raw = (name: string): string | undefined => flags.value(name);
  // A flag's value, else the default --help says (BACKEND_FLAGS): written once.
  const or = (name: string): string => raw(name) ?? flagDefault(BACKEND_FLAGS, name);
  refuseUnsupported(raw);
  // Klutch's control-plane-mode Deployment passes no OIDC flags: none is required then, and any given is refused.
  const cp = switchFlag('control-plane-mode', or('control-plane-mode'));
  if (cp) refuseWebFlags(raw);
  const required = (name: string): string => {
    const v = raw(name);
    if (!v) throw new UsageError(`--${name} (or ${envName(name)}) is required: ${FLAGS.find((f) => f.name === name)?.help}`);
    return v;
  };
  const url = (name: string, v: string): URL => {
    try {
      return new URL(v);
    } catch {
      throw new UsageError(`--${name}: "${v}" is not a URL`);
    }
  };

  const issuer = cp ? undefined : url('oidc-issuer-url', required('oidc-issuer-url'));
  if (issuer && issuer.protocol !== 'https:' && !(issuer.protocol === 'http:' && isLoopbackHost(issuer.hostname))) {
    throw new UsageError(`--oidc-issuer-url: "${issuer.href}" must be https (plain http only on a loopback address)`);
  }
  const callback = cp ? undefined : url('oidc-callback-url', required('oidc-callback-url'));
  if (callback && !callback.pathname.endsWith('/callback')) {
    throw new UsageError(`--oidc-callback-url: "${callback.href}" must end in /callback, the backend's callback endpoint`);
  }
  // Plain http only where no network is crossed: elsewhere the cookies would lose Secure and travel in the clear.
  if (callback && callback.protocol !== 'https:' && !(callback.protocol === 'http:' && isLoopbackHost(callback.hostname))) {
    throw new UsageError(
      `--oidc-callback-url: "${callback.href}" must be https (the session cookies are Secure only then); give the backend's https URL (TLS here with --tls-cert-file, or at a proxy), or a loopback address (http://127.0.0.1:<port>/callback) for development`,
    );
  }
  const externalRaw = raw('external-address');
  const external = externalRaw ? url('external-address', externalRaw) : undefined;
  if (external && external.protocol !== 'https:')
    throw new UsageError(`--external-address: "${external.href}" must be https (a kubeconfig carries a token)`);
  const mapped: MappedFlag[] = [];
  const authorize = raw('oidc-authorize-url');
  const ourAuthorize = callback?.href.replace(/\/callback$/, '/authorize');
  if (authorize !== undefined && url('oidc-authorize-url', authorize).href !== ourAuthorize) {
    throw new UsageError(
      `--oidc-authorize-url: "${authorize}" is not ${ourAuthorize}: this backend serves /authorize beside /callback, so /export names ${ourAuthorize}; drop --oidc-authorize-url or make --oidc-callback-url <that origin>/callback`,
    );
  }
  const cookies = cp ? {} : cookieKeys(raw, mapped);
  const listenAddress = klutchListenAddress(raw, mapped);
  const logLevel = logLevelFlag(raw('log-level'), raw('v'), mapped, flagDefault(BACKEND_FLAGS, 'log-level'));
  const isolation = or('cluster-scoped-isolation');
  if (isolation.toLowerCase() !== 'prefixed') {
    throw new UsageError(
      `--cluster-scoped-isolation: "${isolation}" is not supported: this backend exports no cluster-scoped resources, so it has nothing to isolate; drop the flag or set it to prefixed (Klutch's default)`,
    );
  }
  const tlsCert = raw('tls-cert-file');
  const tlsKey = raw('tls-key-file');
  if (!tlsCert !== !tlsKey) throw new UsageError('--tls-cert-file and --tls-key-file go together: give both or neither');
  // Klutch's help text spells them in lower case, its manifests capitalised; both mean the same.
  const scopeRaw = or('consumer-scope');
  const scope = ({ namespaced: 'Namespaced', cluster: 'Cluster' } as const)[scopeRaw.toLowerCase() as 'namespaced' | 'cluster'];
  if (!scope || (scopeRaw !== scope && scopeRaw !== scope.toLowerCase()))
    throw new UsageError(`--consumer-scope: "${scopeRaw}" is not Namespaced or Cluster (or Klutch's namespaced, cluster)`);
  const lifetime = durationFlag('token-lifetime', or('token-lifetime'));
  if (lifetime < MIN_TOKEN_LIFETIME_MS)
    throw new UsageError(`--token-lifetime: ${raw('token-lifetime')} is less than 10m, the shortest token Kubernetes issues`);
  const refreshRaw = raw('token-refresh-before');
  const refresh = refreshRaw ? durationFlag('token-refresh-before', refreshRaw) : lifetime / 2;
  if (refresh <= 0 || refresh >= lifetime) {
    throw new UsageError(
      `--token-refresh-before: ${refreshRaw} must be more than 0 and less than --token-lifetime (${or('token-lifetime')})`,
    );
  }
  const exportRequestTimeout = durationFlag('export-request-timeout', or('export-request-timeout'));
  if (exportRequestTimeout <= 0) throw new UsageError(`--export-request-timeout: ${raw('export-request-timeout')} must be more than 0`);
  const claimed = or('claimed-access');
  if (claimed !== 'Object' && claimed !== 'Namespace') throw new UsageError(`--claimed-access: "${claimed}" is not Object or Namespace`);
  // A duration that must be more than 0, and a whole number: the readers every process shares (lib/flags.ts).
  const positive = (name: string): number => {
    const ms = durationFlag(name, or(name));
    if (ms <= 0) throw new UsageError(`--${name}: ${raw(name)} must be more than 0`);
    return ms;
  };
  const count = (name: string, min = 1): number => countFlag(name, or(name), min);
  const legacyGrace = positive('legacy-token-grace');
  const legacyMaxAge = positive('legacy-token-max-age');
  if (legacyMaxAge < legacyGrace)
    throw new UsageError(
      `--legacy-token-max-age: ${or('legacy-token-max-age')} is less than --legacy-token-grace (${or('legacy-token-grace')}): a live konnector could lose its legacy token before it has copied the rotated one`,
    );
  const prefix = or('namespace-prefix');
  if (!/^[a-z0-9]([-a-z0-9]{0,40}[a-z0-9])?$/.test(prefix)) {
    throw new UsageError(
      `--namespace-prefix: "${prefix}" must be a DNS label of at most 42 characters (namespaces are <prefix>-<five characters>)`,
    );
  }
  addressFlag('listen-address', listenAddress);
  const requestTimeout = positive('http-request-timeout');
  const headersTimeout = positive('http-headers-timeout');
  if (headersTimeout > requestTimeout)
    throw new UsageError(
      `--http-headers-timeout: ${or('http-headers-timeout')} is longer than --http-request-timeout (${or('http-request-timeout')}); make it shorter`,
    );
  addressFlag('probe-address', or('probe-address'));
  const groupsClaim = or('oidc-groups-claim');
  if (!groupsClaim.trim())
    throw new UsageError('--oidc-groups-claim: is empty; give the ID token claim that holds groups (default groups)');
  const extraScopes = (raw('oidc-extra-scopes') ?? '').split(/[\s,]+/).filter(Boolean);
  const badScope = extraScopes.find((x) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(x));
  if (badScope !== undefined) throw new UsageError(`--oidc-extra-scopes: "${badScope}" is not an OAuth scope (RFC 6749 3.3)`);
  const bindPolicy = or('default-bind-policy');
  if (!(DEFAULT_BIND_POLICIES as readonly string[]).includes(bindPolicy))
    throw new UsageError(`--default-bind-policy: "${bindPolicy}" is not ${DEFAULT_BIND_POLICIES.join(' or ')}`);
  const machineBind = switchFlag('machine-bind', or('machine-bind'));
  const machineResource = raw('machine-bind-resource');
  if (machineResource !== undefined) {
    if (!machineBind) throw new UsageError('--machine-bind-resource: only with --machine-bind');
    const r = url('machine-bind-resource', machineResource);
    if (r.hash)
      throw new UsageError(`--machine-bind-resource: "${machineResource}" has a fragment; a resource indicator may not (RFC 8707)`);
  }

  const konnectorImage = or('konnector-image');
  if (imageRepository(konnectorImage) === undefined)
    throw new UsageError(`--konnector-image: "${konnectorImage}" is not an image reference`);
  const allowedImages = (raw('konnector-allowed-images') ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean);
  for (const p of allowedImages) {
    const problem = imagePatternProblem(p);
    if (problem) throw new UsageError(`--konnector-allowed-images: ${problem}`);
  }
  let trustedProxies: TrustedProxies;
  try {
    const given = raw('login-rate-trusted-proxies') ?? 'none';
    trustedProxies = new TrustedProxies(
      (given === 'none' ? '' : given)
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    );
  } catch (e) {
    throw new UsageError(`--login-rate-trusted-proxies: ${(e as Error).message}`, { cause: e });
  }
  const apiPorts = or('konnector-api-ports')
    .split(',')
    .map((x) => x.trim());
  const badPort = apiPorts.find((x) => !/^\d{1,5}$/.test(x) || Number(x) < 1 || Number(x) > 65535);
  if (badPort !== undefined || !apiPorts.length)
    throw new UsageError(`--konnector-api-ports: "${badPort ?? ''}" is not a TCP port (give ports such as 443,6443)`);
  const monitoring = raw('monitoring-namespace');
  if (monitoring !== undefined && !/^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/.test(monitoring))
    throw new UsageError(`--monitoring-namespace: "${monitoring}" is not a namespace name (a DNS label)`);

  const backupStore = parseBackupStore(raw, or);

  return {
    controlPlaneMode: cp,
    listenAddress,
    probeAddress: or('probe-address'),
    ...(tlsCert ? { tlsCertFile: tlsCert, tlsKeyFile: tlsKey } : {}),
    httpRequestTimeoutMs: requestTimeout,
    httpHeadersTimeoutMs: headersTimeout,
    httpKeepAliveTimeoutMs: positive('http-keep-alive-timeout'),
    httpMaxConnections: count('http-max-connections'),
    loginRateLimit: count('login-rate-limit', 0),
    loginRateBurst: count('login-rate-burst'),
    loginRateTrustedProxies: trustedProxies,
    oidcIssuerUrl: issuer?.href.replace(/\/$/, '') ?? '',
    oidcClientId: cp ? '' : required('oidc-issuer-client-id'),
    oidcClientSecret: cp ? '' : required('oidc-issuer-client-secret'),
    oidcCallbackUrl: callback?.href ?? '',
    oidcCaFile: raw('oidc-ca-file'),
    oidcGroupsClaim: groupsClaim,
    oidcExtraScopes: extraScopes,
    defaultBindPolicy: bindPolicy as DefaultBindPolicy,
    machineBind,
    ...(machineResource !== undefined ? { machineBindResource: machineResource } : {}),
    ...cookies,
    kubeconfig: raw('kubeconfig'),
    namespace: raw('namespace') ?? (env.POD_NAMESPACE || undefined),
    namespacePrefix: prefix,
    prettyName: or('pretty-name'),
    consumerScope: scope,
    clusterScopedIsolation: 'Prefixed',
    externalAddress: external?.href.replace(/\/$/, ''),
    externalCaFile: raw('external-ca-file'),
    externalServerName: raw('external-server-name'),
    tokenLifetimeMs: lifetime,
    tokenRefreshBeforeMs: refresh,
    exportRequestTimeoutMs: exportRequestTimeout,
    claimedAccess: claimed,
    unboundConsumerTtlMs: positive('unbound-consumer-ttl'),
    abandonedConsumerAfterMs: positive('abandoned-consumer-after'),
    legacyTokenGraceMs: legacyGrace,
    legacyTokenMaxAgeMs: legacyMaxAge,
    maxClustersPerSubject: count('max-clusters-per-subject'),
    maxAppClusterBindings: count('max-app-cluster-bindings'),
    maxServiceNamespaces: count('max-apiservicenamespaces'),
    maxExportRequests: count('max-export-requests'),
    claimQuota: parseClaimQuota(raw('claim-quota') ?? 'none'),
    konnectorImage,
    konnectorAllowedImages: allowedImages,
    konnectorMaxResources: parseKonnectorMaxResources(raw('konnector-max-resources')),
    konnectorApiPorts: [...new Set(apiPorts.map(Number))],
    ...(monitoring !== undefined ? { monitoringNamespace: monitoring } : {}),
    ...(backupStore ? { backupStore } : {}),
    leaderElection: switchFlag('leader-election', or('leader-election')),
    leaseName: or('lease-name'),
    identity: raw('identity') ?? (env.POD_NAME || hostname),
    logLevel,
    mapped,
  };
}

type Raw = (name: string) => string | undefined;

/** `--backup-store-*`: all or nothing, the endpoint an https URL of host and port, the bucket a pattern with one %s. */
function parseBackupStore(raw: Raw, or: (name: string) => string): BackupStoreOptions | undefined {
  const endpoint = raw('backup-store-endpoint');
  const given = ['backup-store-admin-access-key', 'backup-store-admin-secret-key', 'backup-store-ca-file'].filter(
    (f) => raw(f) !== undefined,
  );
  if (endpoint === undefined) {
    if (given.length) throw new UsageError(`--${given[0]}: given without --backup-store-endpoint; name the store or leave it out`);
    return undefined;
  }
  let url: URL | undefined;
  try {
    url = new URL(endpoint);
  } catch {
    url = undefined;
  }
  if (!url || !['https:', 'http:'].includes(url.protocol) || url.pathname !== '/' || url.search || url.username)
    throw new UsageError(
      `--backup-store-endpoint: "${endpoint}" is not the URL of the store's S3 port; write the scheme, host and port only, e.g. https://versitygw.klutch-object-store.svc:7070`,
    );
  for (const f of ['backup-store-admin-access-key', 'backup-store-admin-secret-key'])
    if (!raw(f)) throw new UsageError(`--${f} (or ${envName(f)}) is required with --backup-store-endpoint`);
  const bucket = or('backup-store-bucket');
  if (bucket.split('%s').length !== 2 || !/^[a-z0-9][a-z0-9.-]*[a-z0-9]$/.test(bucket.replace('%s', 'ns')))
    throw new UsageError(`--backup-store-bucket: "${bucket}" is not a bucket name with one %s for the namespace (e.g. klutch-%s)`);
  const secret = or('backup-store-secret');
  if (!/^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/.test(secret))
    throw new UsageError(`--backup-store-secret: "${secret}" is not a Secret name (lower-case letters, digits, "-" and ".")`);
  const caFile = raw('backup-store-ca-file');
  const duration = (name: string): number => {
    const ms = durationFlag(name, or(name));
    if (ms <= 0) throw new UsageError(`--${name}: ${or(name)} must be more than 0`);
    return ms;
  };
  return {
    endpoint: url.origin,
    adminAccessKey: raw('backup-store-admin-access-key') as string,
    adminSecretKey: raw('backup-store-admin-secret-key') as string,
    ...(caFile !== undefined ? { caFile } : {}),
    bucket,
    secret,
    keepDeletedMs: duration('backup-store-keep-deleted'),
    sweepIntervalMs: duration('backup-store-sweep-interval'),
  };
}

/** Klutch's flags this backend cannot honour: refused by name, never ignored. */
function refuseUnsupported(raw: Raw): void {
  const select = raw('testing-auto-select');
  if (select !== undefined) {
    throw new UsageError(
      `--testing-auto-select: "${select}" is not supported: it is a testing aid of Klutch's example-backend (pre-selects a resource on the bind page), and this backend's bind page has no such shortcut; drop the flag`,
    );
  }
}

/** What only the bind endpoints use: with --control-plane-mode there are none, so giving one is a mistake, named. */
const WEB_FLAG = /^(listen-|tls-|http-|login-rate-|oidc-|cookie-|machine-bind)/;

function refuseWebFlags(raw: Raw): void {
  const given = FLAGS.filter((f) => WEB_FLAG.test(f.name) && raw(f.name) !== undefined && !(f.boolean && raw(f.name) === 'false'));
  if (given.length)
    throw new UsageError(
      `--${given[0]!.name} (or ${envName(given[0]!.name)}): has no meaning with --control-plane-mode, which serves no bind endpoints (no web server, OIDC or cookies); drop it, or drop --control-plane-mode`,
    );
}

/** Base64 (standard or URL-safe, padded or not) of one of `lengths` bytes. */
function base64Key(name: string, v: string, lengths: readonly number[]): Buffer {
  const bytes = Buffer.from(v, 'base64');
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(v) || !lengths.includes(bytes.length)) {
    throw new UsageError(
      `--${name}: is not base64 of ${lengths.join(', ').replace(/, (\d+)$/, ' or $1')} bytes (Klutch's lengths); make one with \`openssl rand -base64 32\``,
    );
  }
  return bytes;
}

/** --cookie-keys-file, or Klutch's --cookie-signing-key (and --cookie-encryption-key) as one fixed key. */
function cookieKeys(raw: Raw, mapped: MappedFlag[]): Pick<BackendOptions, 'cookieKeysFile' | 'klutchCookieKeys'> {
  const file = raw('cookie-keys-file');
  const signing = raw('cookie-signing-key');
  const encryption = raw('cookie-encryption-key');
  if (encryption !== undefined && signing === undefined)
    throw new UsageError('--cookie-encryption-key: only with --cookie-signing-key (as Klutch: the signing key is the required one)');
  if (signing === undefined) {
    if (!file)
      throw new UsageError(
        `--cookie-keys-file (or ${envName('cookie-keys-file')}) is required (or Klutch's --cookie-signing-key): keys that seal cookies and state, one base64 key a line`,
      );
    return { cookieKeysFile: file };
  }
  if (file)
    throw new UsageError("--cookie-keys-file and --cookie-signing-key: give one (the file; Klutch's key is the fallback), not both");
  const keys = {
    signing: base64Key('cookie-signing-key', signing, [32, 64]),
    ...(encryption !== undefined ? { encryption: base64Key('cookie-encryption-key', encryption, [16, 24, 32]) } : {}),
  };
  mapped.push({
    flag: encryption !== undefined ? '--cookie-signing-key, --cookie-encryption-key' : '--cookie-signing-key',
    became: 'one key sealing cookies and state (HKDF of the flags: the same on every replica and restart), which never rotates',
    prefer: '--cookie-keys-file from a mounted Secret: keys rotate without logging anyone out, and no key is on the command line',
  });
  return { klutchCookieKeys: keys };
}

/** --listen-address, or Klutch's --listen-ip/--listen-port. */
function klutchListenAddress(raw: Raw, mapped: MappedFlag[]): string {
  const address = raw('listen-address');
  const ip = raw('listen-ip');
  const port = raw('listen-port');
  if (ip === undefined && port === undefined) return address ?? flagDefault(BACKEND_FLAGS, 'listen-address');
  if (address !== undefined)
    throw new UsageError('--listen-ip/--listen-port and --listen-address: give --listen-address alone (it says both)');
  if (port !== undefined && (!/^\d+$/.test(port) || Number(port) > 65535))
    throw new UsageError(`--listen-port: "${port}" is not a port number (0-65535)`);
  const host = ip ?? '0.0.0.0';
  const made = `${host.includes(':') ? `[${host}]` : host}:${port ?? '8080'}`;
  mapped.push({
    flag: ['--listen-ip', '--listen-port'].filter((f) => raw(f.slice(2)) !== undefined).join(', '),
    became: `--listen-address=${made}`,
    prefer: '--listen-address',
  });
  return made;
}

/** A ResourceQuota resource name: `count/<resource>[.<group>]`, or one of the compute, storage and object names. */
const QUOTA_RESOURCE =
  /^(count\/[a-z0-9]([a-z0-9.-]*[a-z0-9])?|(requests|limits)\.(cpu|memory|storage|ephemeral-storage)|[a-z0-9.-]+\.storageclass\.storage\.k8s\.io\/(requests\.storage|persistentvolumeclaims)|services(\.loadbalancers|\.nodeports)?|persistentvolumeclaims|pods|secrets|configmaps|cpu|memory)$/;
/** A Kubernetes quantity (resource.Quantity's decimal and binary suffixes). */
const QUANTITY = /^\d+(\.\d+)?([KMGTPE]i|[mkMGTPE])?$/;

/** `--konnector-max-resources`: `resource=quantity` pairs over the defaults, each resource one a konnector is given. */
function parseKonnectorMaxResources(v: string | undefined): Record<string, string> {
  const max: Record<string, string> = { ...KONNECTOR_MAX_RESOURCES };
  for (const pair of (v ?? '')
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [k = '', q, extra] = pair.split('=').map((x) => x.trim());
    if (q === undefined || extra !== undefined)
      throw new UsageError(`--konnector-max-resources: "${pair}" is not resource=quantity (e.g. cpu=2,memory=1Gi)`);
    if (!(TUNABLE_RESOURCES as readonly string[]).includes(k))
      throw new UsageError(`--konnector-max-resources: "${k}" is not a resource a konnector is given (${TUNABLE_RESOURCES.join(', ')})`);
    const problem = konnectorQuantityProblem(q);
    if (problem) throw new UsageError(`--konnector-max-resources: ${k}: "${q}" ${problem}`);
    max[k] = q;
  }
  return max;
}

/** `--claim-quota`: `resource=n` pairs, each a ResourceQuota resource and a quantity; `none` for none. */
function parseClaimQuota(v: string): Record<string, string> {
  if (v.trim() === 'none' || !v.trim()) return {};
  const hard: Record<string, string> = {};
  for (const pair of v
    .split(',')
    .map((x) => x.trim())
    .filter(Boolean)) {
    const [k = '', n, extra] = pair.split('=').map((x) => x.trim());
    if (n === undefined || extra !== undefined)
      throw new UsageError(`--claim-quota: "${pair}" is not resource=n (e.g. count/postgresqlinstances.anynines.com=5)`);
    if (!QUOTA_RESOURCE.test(k))
      throw new UsageError(
        `--claim-quota: "${k}" is not a ResourceQuota resource (count/<plural>.<group> for claims, services.loadbalancers, requests.storage, persistentvolumeclaims, ...)`,
      );
    if (!QUANTITY.test(n)) throw new UsageError(`--claim-quota: ${k}: "${n}" is not a quantity (e.g. 5, 100Gi)`);
    hard[k] = n;
  }
  return hard;
}
