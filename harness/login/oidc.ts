/**
 * A real OpenID provider for tests, benches and the sandbox: the `oidc-provider` package in a process of its own
 * (harness/login/oidc-server.ts) on loopback HTTPS, with the clients and users given. Logging in needs no form: the
 * provider logs in the user named by a cookie (`loginCookie(sub)`) or else the first user, and implies consent. With
 * `loginForm: true` a browser without the cookie gets a sign-in form instead (the human flow's browser test).
 *
 *   const idp = await startOidcProvider({ clients: [{ clientId, clientSecret, redirectUris }], users: [{ sub: 'alice' }] });
 *   // idp.issuer, idp.ca (PEM: trust it, e.g. NODE_EXTRA_CA_CERTS for a node process); await idp.stop();
 *
 * A user with `idTokenFault` gets ID tokens with that one thing wrong, to show a client refuses them; a user with
 * `groups` gets claim `groups` in ID tokens asked for with scope `groups`. A `machine` client gets JWT access tokens
 * (at+jwt) of the client-credentials grant for one of `resourceServers`.
 */
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { bundleProgram } from '../../synth/deployables';
import { type Ca, createCa } from '../cluster/pki';
import { freePorts, launch, probe, type Proc, waitReady } from '../cluster/processes';
import { repoRoot } from '../root';

export interface OidcTestClient {
  readonly clientId: string;
  readonly clientSecret: string;
  /** Exact redirect URIs the provider accepts (none for a machine client). */
  readonly redirectUris: readonly string[];
  /**
   * A machine client: the client-credentials grant only, for a resource of `resourceServers`. Its access tokens carry
   * `groups` when given, and with `accessTokenFault` have that one thing wrong. @default a login client
   */
  readonly machine?: { readonly groups?: readonly string[]; readonly accessTokenFault?: AccessTokenFault };
}

/** What is wrong in a faulty machine client's access tokens (re-signed by the provider; a foreign key for `signature`). */
export type AccessTokenFault = 'signature' | 'issuer' | 'expired' | 'type';

/** A resource (RFC 8707) machine clients may ask access tokens for: JWT access tokens (at+jwt) for `audience`. */
export interface OidcResourceServer {
  readonly resource: string;
  readonly audience: string;
}

/** What is wrong in a faulty user's ID tokens. */
export type IdTokenFault = 'signature' | 'issuer' | 'audience' | 'expired' | 'nonce';

export interface OidcTestUser {
  /** The subject (`sub` claim). */
  readonly sub: string;
  /** @default `<sub>@example.test` */
  readonly email?: string;
  /** @default the sub */
  readonly name?: string;
  /** @default none: correct ID tokens */
  readonly idTokenFault?: IdTokenFault;
  /**
   * Claim `groups` in the user's ID tokens when the client asks for scope `groups` (as Dex does). @default none: no
   * claim at all
   */
  readonly groups?: readonly string[];
}

export interface OidcStartOptions {
  readonly clients: readonly OidcTestClient[];
  /** At least one; the first logs in when no cookie names another. */
  readonly users: readonly OidcTestUser[];
  /** @default a free port */
  readonly port?: number;
  /** Where `oidc-provider.log` goes. @default a new folder under $TMPDIR/klutch-kit-oidc/ */
  readonly logDir?: string;
  /** The CA that signs the serving certificate, for a client that must trust it before the provider starts. @default a new one */
  readonly ca?: Ca;
  /**
   * A login without the cookie shows a sign-in form (field "User name", button "Sign in") instead of logging in the
   * first user. @default false
   */
  readonly loginForm?: boolean;
  /** Resources for machine clients; with any, the provider serves the client-credentials grant. @default none */
  readonly resourceServers?: readonly OidcResourceServer[];
  /**
   * The issuer's host, an address where a bridge reaches the provider (a node's address, where Pods reach it); the
   * provider still listens on 127.0.0.1, and its certificate names both. @default 127.0.0.1
   */
  readonly issuerHost?: string;
}

export interface OidcTestProvider {
  /** `https://127.0.0.1:<port>` (or `https://<issuerHost>:<port>`) */
  readonly issuer: string;
  readonly port: number;
  /** PEM of the CA that signed the provider's serving certificate. */
  readonly ca: string;
  /** Path of a file holding `ca`. */
  readonly caFile: string;
  readonly proc: Proc;
  /** The cookie (for the issuer's origin) that makes the next login that of `sub`. */
  loginCookie(sub: string): { readonly name: string; readonly value: string };
  /** How many requests its token endpoint has had (valid or not). */
  tokenRequests(): Promise<number>;
  stop(): Promise<void>;
}

/** What the server process reads from $OIDC_TEST_CONFIG. */
export interface OidcServerConfig {
  readonly issuer: string;
  readonly port: number;
  readonly certFile: string;
  readonly keyFile: string;
  readonly cookieKey: string;
  readonly clients: readonly OidcTestClient[];
  readonly users: readonly OidcTestUser[];
  readonly loginForm: boolean;
  readonly resourceServers: readonly OidcResourceServer[];
}

/**
 * The provider's program (harness/login/oidc-server.ts with oidc-provider and its packages inside), bundled once per process
 * and reused across runs while its inputs are unchanged: a start is plain `node <file>`.
 */
let serverBundle: Promise<string> | undefined;
function oidcServerBundle(): Promise<string> {
  serverBundle ??= bundleProgram(repoRoot(), 'oidc-server', join('harness', 'login', 'oidc-server.ts')).catch((e: unknown) => {
    serverBundle = undefined;
    throw e;
  });
  return serverBundle;
}

/** Starts the provider; resolves once its discovery document is served. */
export async function startOidcProvider(o: OidcStartOptions): Promise<OidcTestProvider> {
  if (o.users.length === 0) throw new Error('startOidcProvider: users is empty; give at least one test user');
  const subs = new Set(o.users.map((u) => u.sub));
  if (subs.size !== o.users.length) throw new Error(`startOidcProvider: users repeat a sub: ${o.users.map((u) => u.sub).join(', ')}`);
  const port = o.port ?? (await freePorts(1))[0]!;
  const issuer = `https://${o.issuerHost ?? '127.0.0.1'}:${port}`;
  // Where the test process itself reaches it.
  const local = `https://127.0.0.1:${port}`;
  const dir = o.logDir ?? mkdtempSync(join(tmpdir(), 'klutch-kit-oidc-'));
  mkdirSync(dir, { recursive: true });
  // A folder of its own goes when the provider stops; in a given one only the log stays.
  const cleanUp = () => (o.logDir ? rmSync(join(dir, 'tls.key'), { force: true }) : rmSync(dir, { recursive: true, force: true }));
  const ca = o.ca ?? (await createCa('klutch-kit test OpenID provider CA'));
  const pair = await ca.issue({
    commonName: '127.0.0.1',
    ips: [...new Set(['127.0.0.1', o.issuerHost ?? '127.0.0.1'])],
    dnsNames: ['localhost'],
  });
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  const caFile = join(dir, 'ca.crt');
  writeFileSync(certFile, pair.cert);
  writeFileSync(keyFile, pair.key, { mode: 0o600 });
  writeFileSync(caFile, ca.cert);
  const config: OidcServerConfig = {
    issuer,
    port,
    certFile,
    keyFile,
    cookieKey: randomBytes(32).toString('hex'),
    clients: o.clients,
    users: o.users,
    loginForm: o.loginForm ?? false,
    resourceServers: o.resourceServers ?? [],
  };
  const proc = launch({
    command: process.execPath,
    args: [await oidcServerBundle()],
    role: 'oidc-provider',
    owner: issuer,
    logDir: dir,
    env: { ...process.env, OIDC_TEST_CONFIG: JSON.stringify(config) },
  });
  try {
    await waitReady(proc, () => probe(`${local}/.well-known/openid-configuration`).then((r) => r.code === 200), 60_000);
  } catch (e) {
    await proc.stop();
    cleanUp();
    throw e;
  }
  return {
    issuer,
    port,
    ca: ca.cert,
    caFile,
    proc,
    loginCookie: (sub) => {
      if (!subs.has(sub)) throw new Error(`the test OpenID provider has no user "${sub}"; it has ${[...subs].join(', ')}`);
      return { name: 'oidc-test-user', value: sub };
    },
    tokenRequests: async () => {
      const r = await probe(`${local}/test/token-requests`);
      if (r.code !== 200) throw new Error(`the test OpenID provider answered ${r.code} for its token request count: ${r.body}`);
      return (JSON.parse(r.body) as { tokenRequests: number }).tokenRequests;
    },
    stop: async () => {
      await proc.stop(5_000);
      cleanUp();
    },
  };
}
