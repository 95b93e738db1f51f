/**
 * The backend process, wired: bind endpoints on every replica (stateless), controllers on the leader, probes and
 * metrics, and a graceful stop. Nothing here exits on a missing dependency: an unreachable issuer, a missing CRD or
 * a refused bootstrap is retried with backoff and reported by /readyz (and the log) by name, with the fix.
 */
import { readFileSync } from 'node:fs';
import { KubeConfig } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { newLogger } from '../lib/log';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { backoffDelay, eventRecorder, LeaderElector, podNamespace, serveProbes, type Probes } from '../controller';
import { AccessTokenVerifier } from './auth/access-token';
import { Issuer } from './auth/issuer';
import { type Key, KeyRing, klutchCookieKey } from './auth/keys';
import { ReplayGuard } from './auth/replay';
import { Sealer } from './auth/sealer';
import type { RecordedBinder } from './authz/binder';
import { storeObjects } from './backup-store/objects';
import { storeAdmin } from './backup-store/versitygw';
import { type ControllerDeps, runControllers } from './controllers';
import type { HttpDeps } from './http/deps';
import { RateLimiter } from './http/rate-limit';
import { bindHandler, listen, type ListeningServer } from './http/server';
import { cachedExportables, cachedNamespaces, servingInformers, startAll, stopAll } from './informers';
import { messageOf, BindResources, type BackendClients, backendClients, crdName, isNotFound } from './kube';
import { backendMetrics } from './metrics';
import { addressFlag } from '../lib/flags';
import { type BackendOptions, type BackupStoreOptions } from './options';
import { applyBinderClusterRole, provisionConsumer } from './provision/consumer';
import type { KubeconfigTarget } from './provision/kubeconfig';
import { sleep } from '../lib/abort';
import { releaseDoc } from '../lib/version';

export interface RunningBackend {
  readonly port: number;
  readonly probePort: number;
  /** Stops: no new requests, in-flight requests and reconciles finish, the Lease is released. */
  stop(): Promise<void>;
}

/** The CRDs the backend cannot work without, and how to install them. */
const REQUIRED = Object.values(BindResources);
/** Server-side, as docs/install-bundle.md says: the CRDs are larger than the annotation a client-side apply keeps. */
const INSTALL_HINT = `install the bind CRDs, the install bundle's crds/: kubectl apply --server-side -k <the bundle or your overlay> (${releaseDoc('docs/install-bundle.md', 'install')})`;

function kubeConfigFor(o: Pick<BackendOptions, 'kubeconfig'>): KubeConfig {
  const kc = new KubeConfig();
  if (o.kubeconfig) kc.loadFromFile(o.kubeconfig);
  else kc.loadFromDefault();
  return kc;
}

/**
 * Where consumers reach the provider: --external-address (else, as Klutch's, the server of our own kubeconfig) and its
 * CA (the file, else the CA of our own kubeconfig).
 */
function kubeconfigTarget(o: BackendOptions, kc: KubeConfig): KubeconfigTarget {
  const server = o.externalAddress ?? kc.getCurrentCluster()?.server;
  if (!server?.startsWith('https://'))
    throw new Error(`no --external-address, and the kubeconfig's server (${server ?? 'none'}) is not https: give --external-address`);
  let ca: string | undefined;
  if (o.externalCaFile) ca = readFileSync(o.externalCaFile, 'utf8');
  else {
    const cluster = kc.getCurrentCluster();
    ca = cluster?.caData
      ? Buffer.from(cluster.caData, 'base64').toString()
      : cluster?.caFile
        ? readFileSync(cluster.caFile, 'utf8')
        : undefined;
  }
  if (!ca) throw new Error('no CA for the kubeconfigs: give --external-ca-file (the PEM CA of --external-address)');
  return { server, ca, ...(o.externalServerName ? { serverName: o.externalServerName } : {}) };
}

/** Retries `step` with capped backoff until it succeeds or `signal` aborts; `problem` holds the last failure. */
async function retry(
  name: string,
  signal: AbortSignal,
  log: Logger,
  state: { problem?: string },
  step: () => Promise<void>,
): Promise<void> {
  for (let failures = 0; !signal.aborted; failures++) {
    try {
      await step();
      state.problem = undefined;
      return;
    } catch (e) {
      state.problem = e instanceof Error ? e.message : String(e);
      const wait = backoffDelay(failures, { baseMs: 500, maxMs: 30_000 });
      log.error({ step: name, err: e, retryInMs: wait }, `${name} failed; retrying`);
      await sleep(wait, signal);
    }
  }
}

async function checkCrds(c: BackendClients): Promise<void> {
  const missing: string[] = [];
  for (const r of REQUIRED) {
    try {
      await c.crds.readCustomResourceDefinition({ name: crdName(r) });
    } catch (e) {
      if (!isNotFound(e)) throw new Error(`cannot read CRD ${crdName(r)}: ${messageOf(e)}`, { cause: e });
      missing.push(crdName(r));
    }
  }
  if (missing.length) throw new Error(`missing CRD${missing.length > 1 ? 's' : ''} ${missing.join(', ')}: ${INSTALL_HINT}`);
}

/** The sealing keys: the rotating file, or the one fixed key Klutch's cookie flags stand for. */
function cookieKeys(o: BackendOptions): () => readonly Key[] {
  if (o.klutchCookieKeys) {
    const fixed = [klutchCookieKey(o.klutchCookieKeys.signing, o.klutchCookieKeys.encryption)];
    return () => fixed;
  }
  if (!o.cookieKeysFile) throw new Error('no cookie keys: give --cookie-keys-file');
  const ring = new KeyRing(o.cookieKeysFile);
  return () => ring.current();
}

/** --machine-bind: access tokens verified against the issuer's discovered JWKS (auth/access-token.ts). */
function machineBind(o: BackendOptions, issuer: Issuer): NonNullable<HttpDeps['machine']> {
  return {
    verifier: new AccessTokenVerifier({
      metadata: () => issuer.metadata(),
      audience: o.oidcClientId,
      groupsClaim: o.oidcGroupsClaim,
      fetch: issuer.fetch,
    }),
    issuerUrl: o.oidcIssuerUrl,
    resource: o.machineBindResource ?? o.oidcCallbackUrl.replace(/\/callback$/, ''),
  };
}

export async function startBackend(o: BackendOptions, log: Logger = newLogger({ level: o.logLevel })): Promise<RunningBackend> {
  const kc = kubeConfigFor(o);
  const clients = backendClients(kc);
  const target = kubeconfigTarget(o, kc);
  if (!o.externalAddress)
    log.warn(
      { flag: '--external-address', became: target.server },
      "no --external-address: consumers' kubeconfigs name the API server of this backend's own kubeconfig, as Klutch's backend does; set --external-address to the address app clusters reach",
    );
  // Where the Lease goes: the Pod's namespace; outside a Pod (Klutch's command line, which names none) the kubeconfig
  // context's, else `default`, as kubectl resolves a context without one: a namespace every cluster has.
  const namespace = o.namespace ?? podNamespace() ?? (kc.getContextObject(kc.getCurrentContext())?.namespace || 'default');
  // --control-plane-mode: controllers only (AppClusterBindings bind), no bind endpoints, OIDC or cookies.
  const web = !o.controlPlaneMode;
  const keys = web ? cookieKeys(o) : undefined;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const metrics = backendMetrics(registry);
  const issuer = web
    ? new Issuer({
        issuerUrl: o.oidcIssuerUrl,
        clientId: o.oidcClientId,
        clientSecret: o.oidcClientSecret,
        callbackUrl: o.oidcCallbackUrl,
        caFile: o.oidcCaFile,
        groupsClaim: o.oidcGroupsClaim,
        extraScopes: o.oidcExtraScopes,
        log,
      })
    : undefined;
  log.info(
    { defaultBindPolicy: o.defaultBindPolicy, groupsClaim: o.oidcGroupsClaim },
    o.defaultBindPolicy === 'allow-all'
      ? 'templates without a bind rule may be bound by every logged-in user (--default-bind-policy=allow-all)'
      : 'templates without a bind rule may be bound by nobody (--default-bind-policy=deny-all)',
  );
  const stopping = new AbortController();
  const serving = servingInformers(clients, log);
  const crds: { problem?: string } = { problem: 'not checked yet' };
  const bootstrap: { problem?: string } = { problem: 'not applied yet' };
  const tokens = { lifetimeMs: o.tokenLifetimeMs, refreshBeforeMs: o.tokenRefreshBeforeMs };

  const background: Promise<unknown>[] = [];
  if (issuer) background.push(issuer.discover(stopping.signal));
  const informersStarted = retry('checking the bind CRDs', stopping.signal, log, crds, () => checkCrds(clients)).then(async () => {
    if (!stopping.signal.aborted) await startAll(serving, stopping.signal);
  });
  background.push(informersStarted);
  background.push(
    retry(
      'applying ClusterRole klutch-binder',
      stopping.signal,
      log,
      bootstrap,
      async () => void (await applyBinderClusterRole(clients, o.claimedAccess)),
    ),
  );

  const provision = (identity: string, who?: RecordedBinder) =>
    provisionConsumer(
      {
        clients,
        namespaces: cachedNamespaces(serving),
        prefix: o.namespacePrefix,
        prettyName: o.prettyName,
        target,
        tokens,
        maxClustersPerSubject: o.maxClustersPerSubject,
        quota: { serviceNamespaces: o.maxServiceNamespaces, exportRequests: o.maxExportRequests },
      },
      identity,
      who,
    );
  let http: ListeningServer | undefined;
  if (issuer && keys) {
    const handler = bindHandler({
      issuer,
      sealer: new Sealer(keys),
      replay: new ReplayGuard(),
      exportables: cachedExportables(serving),
      provision,
      defaultBindPolicy: o.defaultBindPolicy,
      prettyName: o.prettyName,
      secureCookies: new URL(o.oidcCallbackUrl).protocol === 'https:',
      externalUrl: o.oidcCallbackUrl.replace(/\/callback$/, ''),
      ...(o.machineBind ? { machine: machineBind(o, issuer) } : {}),
      limiter: new RateLimiter({ perMinute: o.loginRateLimit, burst: o.loginRateBurst }),
      trustedProxies: o.loginRateTrustedProxies,
      metrics,
      log,
    });
    http = await listen(handler, {
      ...addressFlag('listen-address', o.listenAddress),
      tlsCertFile: o.tlsCertFile,
      tlsKeyFile: o.tlsKeyFile,
      limits: {
        requestTimeoutMs: o.httpRequestTimeoutMs,
        headersTimeoutMs: o.httpHeadersTimeoutMs,
        keepAliveTimeoutMs: o.httpKeepAliveTimeoutMs,
        maxConnections: o.httpMaxConnections,
      },
    });
    log.info({ address: o.listenAddress, port: http.port, tls: Boolean(o.tlsCertFile) }, 'serving the bind endpoints');
  } else log.info('--control-plane-mode: no bind endpoints, OIDC or cookies; the controllers bind app clusters by AppClusterBinding');

  const controllerBase = {
    clients,
    serving,
    consumerScope: o.consumerScope,
    defaultBindPolicy: o.defaultBindPolicy,
    claimedAccess: o.claimedAccess,
    prefix: o.namespacePrefix,
    target,
    tokens,
    exportRequestTimeoutMs: o.exportRequestTimeoutMs,
    unboundConsumerTtlMs: o.unboundConsumerTtlMs,
    abandonedConsumerAfterMs: o.abandonedConsumerAfterMs,
    legacyTokenGraceMs: o.legacyTokenGraceMs,
    legacyTokenMaxAgeMs: o.legacyTokenMaxAgeMs,
    provision,
    konnectorImage: o.konnectorImage,
    konnectorAllowedImages: o.konnectorAllowedImages,
    konnectorMaxResources: o.konnectorMaxResources,
    maxAppClusterBindings: o.maxAppClusterBindings,
    konnectorApiPorts: o.konnectorApiPorts,
    ...(o.monitoringNamespace !== undefined ? { monitoringNamespace: o.monitoringNamespace } : {}),
    claimQuota: o.claimQuota,
    ...(o.backupStore ? { backupStore: backupStore(o.backupStore) } : {}),
    log,
    registry,
    warn: eventRecorder({ core: clients.core, log, component: 'klutch-bind-backend' }),
  };
  const leading = o.leaderElection
    ? new LeaderElector({
        kc,
        namespace,
        name: o.leaseName,
        identity: o.identity,
        log,
        registry,
        namespaceFlag: '--namespace',
        onStartedLeading: async (signal) => {
          await informersStarted;
          await runControllers(controllerBase, signal);
        },
      }).run(stopping.signal)
    : informersStarted.then(() => runControllers(controllerBase, stopping.signal));

  const probes: Probes = await serveProbes({
    address: o.probeAddress,
    registry,
    ready: {
      // A terminating replica takes no new work: whatever still routes by readiness stops sending it requests.
      stopping: () => !stopping.signal.aborted || 'shutting down: finishing the requests in flight',
      ...(issuer ? { issuer: () => issuer.ready() || issuer.reason() } : {}),
      crds: () => !crds.problem || crds.problem,
      informers: () => {
        const waiting = Object.entries(serving).filter(([, i]) => !i.hasSynced());
        const error = waiting.map(([, i]) => i.lastError()).find(Boolean);
        return !waiting.length || `waiting for the informers of ${waiting.map(([k]) => k).join(', ')}${error ? `: ${error}` : ''}`;
      },
      bootstrap: () => !bootstrap.problem || `ClusterRole klutch-binder: ${bootstrap.problem}`,
    },
  });
  log.info({ address: o.probeAddress, port: probes.port }, 'serving /healthz, /readyz and /metrics');

  return {
    port: http?.port ?? 0,
    probePort: probes.port,
    stop: async () => {
      stopping.abort();
      await http?.close();
      await leading.catch((e: unknown) => log.error({ err: e }, 'controllers ended with an error'));
      await Promise.allSettled(background);
      await stopAll(serving);
      await probes.close();
    },
  };
}

/** The store's admin client and what each tenant gets, from --backup-store-*. */
function backupStore(o: BackupStoreOptions): NonNullable<ControllerDeps['backupStore']> {
  const ca = o.caFile !== undefined ? readFileSync(o.caFile, 'utf8') : undefined;
  const keys = { endpoint: o.endpoint, accessKeyId: o.adminAccessKey, secretAccessKey: o.adminSecretKey, ...(ca ? { ca } : {}) };
  return {
    admin: storeAdmin(keys),
    settings: { bucket: o.bucket, secret: o.secret, ...(ca !== undefined ? { ca } : {}) },
    sweep: { objects: storeObjects(keys), keepMs: o.keepDeletedMs, intervalMs: o.sweepIntervalMs },
  };
}
