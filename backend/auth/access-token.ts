/**
 * Machine identities (CI pipelines, GitOps bootstraps) bind with an OAuth2 access token of the client-credentials
 * grant instead of a browser login. Such a token is checked as strictly as an ID token (docs/decisions/machine-bind.md):
 *
 * - a JWT access token of RFC 9068: header `typ: at+jwt`, so an ID token (typ JWT, whose audience is this backend's
 *   client too) or a token minted for something else is never taken for one;
 * - signed with an asymmetric algorithm by a key of the issuer's JWKS (an unsigned `alg: none` token, an HMAC token
 *   and a foreign key are refused);
 * - `iss` exactly the discovered issuer, `aud` containing this backend's OIDC client ID, `exp` in the future (with
 *   the clock tolerance openid-client allows ID tokens), `nbf` passed;
 * - `sub` and `client_id` present (RFC 9068 requires both).
 *
 * Opaque tokens (introspection) are not accepted: every provider we target issues JWT access tokens for a resource.
 */
import { createRemoteJWKSet, customFetch, errors, jwtVerify, type JWTPayload } from 'jose';
import { groupsOf } from './issuer';

/** Why a token was refused: a metric label (klutch_backend_authentication_failures_total) and the start of the message. */
export type AccessTokenFailure =
  | 'access-token-malformed'
  | 'access-token-type'
  | 'access-token-signature'
  | 'access-token-issuer'
  | 'access-token-audience'
  | 'access-token-expired'
  | 'access-token-claims'
  | 'issuer-unavailable';

export class AccessTokenError extends Error {
  constructor(
    readonly reason: AccessTokenFailure,
    message: string,
    /** What it failed on, kept for the log. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

/** Who a verified access token stands for. */
export interface MachineIdentity {
  readonly issuer: string;
  /** `sub`: for the client-credentials grant the client itself (RFC 9068 §2.2; Keycloak: its service account). */
  readonly subject: string;
  /** `client_id`: what `bind-allowed-clients` names. */
  readonly clientId: string;
  /** From the token's groups claim (--oidc-groups-claim), when the provider puts one there. */
  readonly groups: readonly string[];
}

/** Only asymmetric signatures: the JWKS is public, so an HMAC "signed" with it would prove nothing. */
const ACCESS_TOKEN_ALGORITHMS = ['RS256', 'RS384', 'RS512', 'PS256', 'PS384', 'PS512', 'ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519'];
/** The clock tolerance openid-client (oauth4webapi) gives ID tokens: as strict, no stricter. */
const CLOCK_TOLERANCE_S = 30;

export interface AccessTokenVerifierOptions {
  /** The discovered issuer and its JWKS URL; undefined while discovery has not succeeded. */
  readonly metadata: () => { readonly issuer: string; readonly jwksUri: string } | undefined;
  /** This backend's OIDC client ID: the audience a machine token must name. */
  readonly audience: string;
  /** @default groups */
  readonly groupsClaim?: string;
  /** How the JWKS is fetched (the issuer's TLS settings). @default global fetch */
  readonly fetch?: (url: string, init: RequestInit) => Promise<Response>;
}

export class AccessTokenVerifier {
  private jwks: { readonly uri: string; readonly get: ReturnType<typeof createRemoteJWKSet> } | undefined;

  constructor(private readonly o: AccessTokenVerifierOptions) {}

  async verify(token: string): Promise<MachineIdentity> {
    const meta = this.o.metadata();
    if (!meta) throw new AccessTokenError('issuer-unavailable', 'the OpenID provider is not reachable yet; try again in a minute');
    if (!/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*$/.test(token))
      throw new AccessTokenError('access-token-malformed', 'the bearer token is not a JWT (opaque access tokens are not accepted)');
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, this.keys(meta.jwksUri), {
        issuer: meta.issuer,
        audience: this.o.audience,
        typ: 'at+jwt',
        algorithms: ACCESS_TOKEN_ALGORITHMS,
        requiredClaims: ['exp', 'iat', 'sub', 'client_id'],
        clockTolerance: CLOCK_TOLERANCE_S,
      }));
    } catch (e) {
      throw accessTokenError(e, this.o.audience);
    }
    const { sub, client_id: clientId } = payload as JWTPayload & { client_id?: unknown };
    if (typeof sub !== 'string' || !sub || typeof clientId !== 'string' || !clientId)
      throw new AccessTokenError('access-token-claims', 'the access token has no string sub and client_id (RFC 9068 requires both)');
    return { issuer: meta.issuer, subject: sub, clientId, groups: groupsOf(payload[this.o.groupsClaim ?? 'groups']) };
  }

  /** One remote key set per JWKS URL: jose caches it and refetches (at most every 30 s) for an unknown key id. */
  private keys(uri: string): ReturnType<typeof createRemoteJWKSet> {
    if (this.jwks?.uri !== uri) {
      const options = this.o.fetch ? { [customFetch]: this.o.fetch as unknown as typeof fetch } : {};
      this.jwks = { uri, get: createRemoteJWKSet(new URL(uri), options) };
    }
    return this.jwks.get;
  }
}

/** jose's errors as a reason and a message that says what is wrong with the token (never the token itself). */
function accessTokenError(e: unknown, audience: string): AccessTokenError {
  if (e instanceof errors.JWTExpired)
    return new AccessTokenError('access-token-expired', `the access token has expired (${e.message})`, { cause: e });
  if (e instanceof errors.JWTClaimValidationFailed) {
    if (e.claim === 'typ')
      return new AccessTokenError(
        'access-token-type',
        'the token is not a JWT access token (header typ must be at+jwt, RFC 9068); an ID token or another JWT is not accepted',
        { cause: e },
      );
    if (e.claim === 'iss')
      return new AccessTokenError('access-token-issuer', 'the access token names another issuer than this backend’s', { cause: e });
    if (e.claim === 'aud')
      return new AccessTokenError(
        'access-token-audience',
        `the access token is not for this backend: its audience does not contain "${audience}" (ask the OpenID provider for a token for the resource /export names)`,
        { cause: e },
      );
    if (e.claim === 'nbf') return new AccessTokenError('access-token-expired', 'the access token is not valid yet', { cause: e });
    return new AccessTokenError('access-token-claims', `the access token's claims do not verify (${e.message})`, { cause: e });
  }
  if (
    e instanceof errors.JWSSignatureVerificationFailed ||
    e instanceof errors.JWKSNoMatchingKey ||
    e instanceof errors.JOSEAlgNotAllowed ||
    e instanceof errors.JWKSMultipleMatchingKeys
  )
    return new AccessTokenError(
      'access-token-signature',
      `the access token's signature does not verify against the issuer's keys (${e.message})`,
      { cause: e },
    );
  if (e instanceof errors.JWKSTimeout || e instanceof errors.JWKSInvalid)
    return new AccessTokenError('issuer-unavailable', `cannot read the OpenID provider's keys (${(e as Error).message})`, { cause: e });
  if (e instanceof errors.JWSInvalid || e instanceof errors.JWTInvalid || e instanceof errors.JOSENotSupported)
    return new AccessTokenError('access-token-malformed', `the bearer token is not a valid JWT (${(e as Error).message})`, { cause: e });
  return new AccessTokenError('access-token-claims', `the access token did not verify (${e instanceof Error ? e.message : String(e)})`, {
    cause: e,
  });
}
