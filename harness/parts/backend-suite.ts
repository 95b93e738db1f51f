/**
 * The setup the backend suites share: on provider cluster `a`, the bind CRDs, the synthesized PostgresqlInstance
 * claim CRD and its export template (in a namespace of the suite), a test OpenID provider with ordinary and faulty
 * users, a loopback callback server, and the bundled backend with a namespace prefix of its own (so a suite finds
 * exactly the consumer namespaces it made). `stop()` removes what it made.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { freePorts } from '../cluster/processes';
import {
  BACKEND_CLIENT,
  callbackUri,
  installBindCrds,
  installClaimApi,
  startBindBackend,
  startLoopbackCallback,
  type RunningBindBackend,
  type BindBackendOptions,
  type LoopbackCallback,
} from './bind-backend';
import type { ClusterInfo } from '../cluster/control-plane';
import { type Kube, kubeFor } from '../cluster/kube';
import { createCa } from '../cluster/pki';
import {
  startOidcProvider,
  type IdTokenFault,
  type OidcResourceServer,
  type OidcTestClient,
  type OidcTestProvider,
  type OidcTestUser,
} from '../login/oidc';

const FAULTS: readonly IdTokenFault[] = ['signature', 'issuer', 'audience', 'expired', 'nonce'];
export const PG = { resource: 'postgresqlinstances', group: 'anynines.com' } as const;
/** ServiceBinding's template claims the provider's Secrets and ConfigMaps. */
export const SB = { resource: 'servicebindings', group: 'anynines.com' } as const;

export interface BackendSuite {
  readonly cluster: ClusterInfo;
  readonly kube: Kube;
  readonly idp: OidcTestProvider;
  readonly backend: RunningBindBackend;
  readonly callback: LoopbackCallback;
  /** PEM of the CA of the backend's serving certificate, with `tls`. */
  readonly ca?: string;
  /** Where the export template lives. */
  readonly templateNamespace: string;
  /** Consumer namespaces are `<prefix>-<random>`. */
  readonly prefix: string;
  /** A fresh ordinary user name (every test its own identity). */
  user(): string;
  stop(): Promise<void>;
}

const DEFAULT_USERS = 40;

export async function startBackendSuite(
  cluster: ClusterInfo,
  o: {
    readonly args?: readonly string[];
    readonly backend?: Partial<BindBackendOptions>;
    /** Ordinary test users (`user()` hands them out). @default 40 */
    readonly users?: number;
    /** Serve the bind endpoints over HTTPS (a certificate from a new test CA; `ca` is its PEM). @default false */
    readonly tls?: boolean;
    /** The synth output to take the claim APIs from. @default rendered in this process */
    readonly synthOutput?: Map<string, Record<string, unknown>[]>;
    /** The OpenID provider shows a sign-in form to a browser without its login cookie. @default false */
    readonly loginForm?: boolean;
    /** Named users besides the ordinary ones (e.g. with `groups`); their subs must be unique on the cluster. */
    readonly extraUsers?: readonly OidcTestUser[];
    /** Clients besides the backend's own (e.g. machine clients), and the resources they may ask tokens for. */
    readonly extraClients?: readonly OidcTestClient[];
    readonly resourceServers?: readonly OidcResourceServer[];
  } = {},
): Promise<BackendSuite> {
  const kube = kubeFor(cluster);
  const id = randomBytes(3).toString('hex');
  const prefix = `bk${id}`;
  const templateNamespace = `bkt-${id}`;
  await installBindCrds(kube);
  const ns = await kube.request('POST', '/api/v1/namespaces', { metadata: { name: templateNamespace } });
  if (ns.code >= 300) throw new Error(`cannot create ${templateNamespace}: ${JSON.stringify(ns.body)}`);
  await installClaimApi(kube, PG.resource, templateNamespace, o.synthOutput);
  await installClaimApi(kube, SB.resource, templateNamespace, o.synthOutput);
  const [port] = (await freePorts(1)) as [number];
  const ordinary = o.users ?? DEFAULT_USERS;
  const users = [
    ...Array.from({ length: ordinary }, (_, i) => ({ sub: `user-${id}-${i}` })),
    ...FAULTS.map((f) => ({ sub: `mallory-${f}`, idTokenFault: f })),
    ...(o.extraUsers ?? []),
  ];
  const ca = o.tls ? await createCa('klutch-kit test backend CA') : undefined;
  const tls = ca ? await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'], dnsNames: ['localhost'] }) : undefined;
  const idp = await startOidcProvider({
    // Its log beside the cluster's, like the backend's.
    logDir: mkdtempSync(join(dirname(cluster.kubeconfig), 'oidc-')),
    clients: [{ ...BACKEND_CLIENT, redirectUris: [callbackUri(port, Boolean(tls))] }, ...(o.extraClients ?? [])],
    users,
    ...(o.loginForm ? { loginForm: true } : {}),
    ...(o.resourceServers ? { resourceServers: o.resourceServers } : {}),
  });
  const callback = await startLoopbackCallback();
  let backend: RunningBindBackend;
  try {
    backend = await startBindBackend({
      cluster,
      idp,
      port,
      ...(tls ? { tls } : {}),
      args: [`--namespace-prefix=${prefix}`, ...(o.args ?? [])],
      ...o.backend,
    });
  } catch (e) {
    await idp.stop();
    await callback.close();
    throw e;
  }
  let next = 0;
  return {
    cluster,
    kube,
    idp,
    backend,
    callback,
    ...(ca ? { ca: ca.cert } : {}),
    templateNamespace,
    prefix,
    user: () => {
      if (next >= ordinary) throw new Error(`the suite has only ${ordinary} test users; ask startBackendSuite for more (users)`);
      return `user-${id}-${next++}`;
    },
    stop: async () => {
      await backend.stop();
      await idp.stop();
      await callback.close();
      const list = await kube.core.listNamespace();
      for (const n of list.items.map((x) => x.metadata!.name!)) {
        if (n.startsWith(`${prefix}-`) || n === templateNamespace || n === backend.namespace) {
          await kube.core.deleteNamespace({ name: n }).catch(() => undefined);
        }
      }
    },
  };
}
