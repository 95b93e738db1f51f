/**
 * The OpenID provider, through openid-client: discovery (retried with backoff until it answers, so a backend whose
 * issuer is down starts anyway and reports not ready), the authorization URL with PKCE (S256) and nonce, and the
 * code exchange, whose ID token is verified in full — signature against the issuer's JWKS, issuer, audience, expiry
 * and nonce — before the caller may trust a single claim.
 */
import { readFileSync } from 'node:fs';
import { createSecureContext, rootCertificates } from 'node:tls';
import * as oidc from 'openid-client';
import type { Logger } from 'pino';
import { Agent, fetch as undiciFetch } from 'undici';
import { isLoopbackHost } from '../../lib/address';
import { backoffDelay } from '../../controller';
import { sleep } from '../../lib/abort';

export interface IssuerOptions {
  readonly issuerUrl: string;
  readonly clientId: string;
  readonly clientSecret: string;
  /** The redirect URI registered for the client (the backend's /callback as browsers reach it). */
  readonly callbackUrl: string;
  /** PEM CAs trusted for the issuer besides the system ones. */
  readonly caFile?: string;
  /** The ID token claim holding the user's groups. @default groups */
  readonly groupsClaim?: string;
  /** Scopes asked for besides `openid profile email` (e.g. `groups`, which Dex needs to put groups in ID tokens). */
  readonly extraScopes?: readonly string[];
  readonly log: Logger;
}

/** Why a login was refused: a metric label and the start of the message a user sees. */
export type LoginFailure =
  | 'code-refused'
  | 'id-token-signature'
  | 'id-token-issuer'
  | 'id-token-audience'
  | 'id-token-expired'
  | 'id-token-nonce'
  | 'id-token-invalid'
  | 'issuer-unavailable';

export class LoginError extends Error {
  constructor(
    readonly reason: LoginFailure,
    message: string,
    /** What it failed on, kept for the log. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

export interface Identity {
  readonly issuer: string;
  readonly subject: string;
  readonly email?: string;
  /** From the verified ID token's groups claim (--oidc-groups-claim); empty when it has none. */
  readonly groups: readonly string[];
}

const SCOPES = 'openid profile email';
/** Discovery retries: half a second, doubling, at most 30 s. */
const RETRY = { baseMs: 500, maxMs: 30_000 };
/** undici's error for a connection closed under a request (fetch's TypeError, the SocketError as its cause). */
const socketClosed = (e: unknown) => (e as { cause?: { code?: string } } | undefined)?.cause?.code === 'UND_ERR_SOCKET';
/** Connections to the OpenID provider at most (per origin); more requests at once wait for one. */
export const ISSUER_CONNECTIONS = 8;

export class Issuer {
  private config: oidc.Configuration | undefined;
  private lastError = 'discovery not tried yet';
  /** How the issuer is reached (its CA, one TLS context); the access-token verifier fetches the JWKS with it too. */
  readonly fetch: (url: string, init: RequestInit) => Promise<Response>;

  constructor(private readonly o: IssuerOptions) {
    const extra = o.caFile ? readFileSync(o.caFile, 'utf8') : undefined;
    // One TLS context for every connection: given as `ca`, the system roots and the extra CA would be parsed anew
    // for each connection (measured: the largest CPU cost of a bind under load). And a few connections kept open
    // rather than one per login in flight: 50 logins at once opened ~50 new TLS connections to the provider; a new
    // connection costs the client 1.6-3.2 ms of CPU against 0.3 ms for a request on a kept one, and the provider its
    // side of the handshake (docs/decisions/bind-flow-cost.md).
    const dispatcher = new Agent({
      connections: ISSUER_CONNECTIONS,
      ...(extra ? { connect: { secureContext: createSecureContext({ ca: [...rootCertificates, extra] }) } } : {}),
    });
    const send = (url: string, init: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
    // A kept connection the provider closed (its keep-alive timeout, late on a busy machine) just as a request went
    // out fails with a socket error and no answer; undici sends only idempotent requests again, and the token request
    // is a POST. It is sent again: each failure takes one dead connection out of the pool, so after at most one try per
    // connection it goes out on a new one. Had the provider redeemed the code after all, it refuses the next try.
    this.fetch = async (url, init) => {
      for (let attempt = 0; ; attempt++) {
        try {
          return await send(url, init);
        } catch (e) {
          if (!socketClosed(e) || attempt >= ISSUER_CONNECTIONS) throw e;
        }
      }
    };
  }

  /** Whether discovery has succeeded; `reason()` says why not. */
  ready(): boolean {
    return this.config !== undefined;
  }

  /** The discovered issuer and its JWKS URL (for machine access tokens, auth/access-token.ts); undefined before discovery. */
  metadata(): { readonly issuer: string; readonly jwksUri: string } | undefined {
    const m = this.config?.serverMetadata();
    return m?.jwks_uri ? { issuer: m.issuer, jwksUri: m.jwks_uri } : undefined;
  }

  reason(): string {
    return this.ready() ? 'ok' : `the OpenID provider ${this.o.issuerUrl} is not reachable yet: ${this.lastError}`;
  }

  /** Reads the discovery document, retrying with capped exponential backoff until it succeeds or `signal` aborts. */
  async discover(signal: AbortSignal): Promise<void> {
    for (let failures = 0; !signal.aborted; failures++) {
      try {
        const url = new URL(this.o.issuerUrl);
        const config = await oidc.discovery(url, this.o.clientId, this.o.clientSecret, oidc.ClientSecretBasic(this.o.clientSecret), {
          [oidc.customFetch]: this.fetch,
          // http only for a loopback issuer (development); options.ts refuses any other.
          execute: [
            oidc.enableNonRepudiationChecks,
            ...(url.protocol === 'http:' && isLoopbackHost(url.hostname) ? [oidc.allowInsecureRequests] : []),
          ],
          timeout: 10,
        });
        config[oidc.customFetch] = this.fetch;
        this.config = config;
        this.o.log.info({ issuer: this.o.issuerUrl }, 'read the OpenID provider discovery document');
        return;
      } catch (e) {
        this.lastError = describe(e);
        const wait = backoffDelay(failures, RETRY);
        this.o.log.warn(
          { issuer: this.o.issuerUrl, err: e, retryInMs: wait },
          'cannot read the OpenID provider discovery document; retrying',
        );
        await sleep(wait, signal);
      }
    }
  }

  /** The authorization URL for one login. */
  async authorizationUrl(p: { state: string; nonce: string; codeVerifier: string }): Promise<URL> {
    const config = this.requireConfig();
    return oidc.buildAuthorizationUrl(config, {
      redirect_uri: this.o.callbackUrl,
      scope: [SCOPES, ...(this.o.extraScopes ?? [])].join(' '),
      state: p.state,
      nonce: p.nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(p.codeVerifier),
      code_challenge_method: 'S256',
    });
  }

  /** Exchanges the code of a callback (its query in `query`) and returns the verified identity. */
  async exchange(query: URLSearchParams, p: { state: string; nonce: string; codeVerifier: string }): Promise<Identity> {
    const config = this.requireConfig();
    const current = new URL(this.o.callbackUrl);
    current.search = query.toString();
    let tokens;
    try {
      tokens = await oidc.authorizationCodeGrant(config, current, {
        pkceCodeVerifier: p.codeVerifier,
        expectedNonce: p.nonce,
        expectedState: p.state,
        idTokenExpected: true,
      });
    } catch (e) {
      throw loginError(e);
    }
    const claims = tokens.claims();
    if (!claims?.sub) throw new LoginError('id-token-invalid', 'the OpenID provider returned no ID token subject');
    return {
      issuer: claims.iss,
      subject: claims.sub,
      ...(typeof claims.email === 'string' ? { email: claims.email } : {}),
      groups: groupsOf(claims[this.o.groupsClaim ?? 'groups']),
    };
  }

  private requireConfig(): oidc.Configuration {
    if (!this.config) throw new LoginError('issuer-unavailable', this.reason());
    return this.config;
  }
}

/**
 * The groups claim as a list: an array of strings (the convention), or one string (some providers, for one group).
 * Anything else counts as no groups, so a malformed claim can only take rights away.
 */
export function groupsOf(claim: unknown): string[] {
  if (typeof claim === 'string') return claim ? [claim] : [];
  if (!Array.isArray(claim)) return [];
  return [...new Set(claim.filter((g): g is string => typeof g === 'string' && g !== ''))];
}

/** Maps openid-client's errors (a ClientError wrapping oauth4webapi's, whose cause names the claim) to a reason. */
function loginError(e: unknown): LoginError {
  const err = e as { code?: string; error?: string; error_description?: string; message?: string; cause?: unknown };
  if (err instanceof oidc.ResponseBodyError || err.error) {
    return new LoginError(
      'code-refused',
      `the OpenID provider refused the authorization code (${err.error}: ${err.error_description ?? ''}); it may have been used before`,
      { cause: e },
    );
  }
  const inner = (err.cause ?? {}) as { message?: string; cause?: { claim?: string } };
  const detail = inner.message ?? err.message ?? String(e);
  if (/signature/i.test(detail) || err.code === 'OAUTH_KEY_SELECTION_FAILED') {
    return new LoginError('id-token-signature', `the ID token's signature does not verify against the issuer's keys (${detail})`, {
      cause: e,
    });
  }
  if (err.code === 'OAUTH_JWT_TIMESTAMP_CHECK_FAILED')
    return new LoginError('id-token-expired', `the ID token is expired or not yet valid (${detail})`, { cause: e });
  if (err.code === 'OAUTH_JWT_CLAIM_COMPARISON_FAILED') {
    const claim = inner.cause?.claim;
    if (claim === 'iss') return new LoginError('id-token-issuer', `the ID token names another issuer (${detail})`, { cause: e });
    if (claim === 'aud') return new LoginError('id-token-audience', `the ID token is for another client (${detail})`, { cause: e });
    if (claim === 'nonce')
      return new LoginError('id-token-nonce', `the ID token's nonce is not the one this login sent (${detail})`, { cause: e });
  }
  return new LoginError('id-token-invalid', `the OpenID provider's answer did not verify (${detail})`, { cause: e });
}

function describe(e: unknown): string {
  const err = e as { message?: string; cause?: { message?: string; code?: string } };
  return [err.message ?? String(e), err.cause?.code ?? err.cause?.message].filter(Boolean).join(': ');
}
