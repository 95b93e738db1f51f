/**
 * The access-token check, table-driven: tokens signed here with keys served as a JWKS from a loopback server (the
 * real OpenID provider issues them in test/cluster/bind-machine.test.ts). Each refused case has exactly one thing wrong.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { errors, exportJWK, generateKeyPair, SignJWT, UnsecuredJWT, type JWTPayload } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { AccessTokenError, AccessTokenVerifier, type AccessTokenFailure } from './access-token';

const ISSUER = 'https://idp.example.test';
const AUDIENCE = 'klutch-bind';
const KID = 'k1';
let server: http.Server;
let jwksUri: string;
let jwksRequests = 0;
type Key = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];
let key: Key;
let foreign: Key;

beforeAll(async () => {
  const pair = await generateKeyPair('RS256', { extractable: true });
  key = pair.privateKey;
  foreign = (await generateKeyPair('RS256')).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: KID, alg: 'RS256', use: 'sig' };
  server = http.createServer((_req, res) => {
    jwksRequests++;
    res.writeHead(200, { 'Content-Type': 'application/json' }).end(JSON.stringify({ keys: [jwk] }));
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  jwksUri = `http://127.0.0.1:${(server.address() as AddressInfo).port}/jwks`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

const verifier = () =>
  new AccessTokenVerifier({ metadata: () => ({ issuer: ISSUER, jwksUri }), audience: AUDIENCE, groupsClaim: 'groups' });

const now = () => Math.floor(Date.now() / 1000);
const claims = (): JWTPayload => ({
  iss: ISSUER,
  aud: [AUDIENCE, 'https://bind.example.test'],
  sub: 'ci-pipeline',
  client_id: 'ci-pipeline',
  jti: 'j1',
  iat: now(),
  exp: now() + 600,
});

async function sign(payload: JWTPayload, o: { typ?: string; alg?: string; key?: Key | Uint8Array; kid?: string } = {}): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: o.alg ?? 'RS256', kid: o.kid ?? KID, typ: o.typ ?? 'at+jwt' }).sign(o.key ?? key);
}

describe('AccessTokenVerifier', () => {
  it('accepts a JWT access token of the issuer for this audience: the client, its sub and its groups', async () => {
    const id = await verifier().verify(await sign({ ...claims(), groups: ['ci', 'deployers'] }));
    expect(id).toEqual({ issuer: ISSUER, subject: 'ci-pipeline', clientId: 'ci-pipeline', groups: ['ci', 'deployers'] });
    // `application/at+jwt` is the same type (RFC 9068 §2.1).
    expect((await verifier().verify(await sign(claims(), { typ: 'application/at+jwt' }))).clientId).toBe('ci-pipeline');
  });

  const refused: { name: string; token: () => Promise<string>; reason: AccessTokenFailure; message: RegExp }[] = [
    {
      name: 'an ID token (typ JWT), though its audience is this backend',
      token: () => sign(claims(), { typ: 'JWT' }),
      reason: 'access-token-type',
      message: /typ must be at\+jwt/,
    },
    {
      name: 'a token without typ',
      token: () => new SignJWT(claims()).setProtectedHeader({ alg: 'RS256', kid: KID }).sign(key),
      reason: 'access-token-type',
      message: /at\+jwt/,
    },
    {
      name: 'a token for another audience',
      token: () => sign({ ...claims(), aud: 'another-api' }),
      reason: 'access-token-audience',
      message: /audience does not contain "klutch-bind"/,
    },
    {
      name: 'a token of another issuer',
      token: () => sign({ ...claims(), iss: 'https://other.example.test' }),
      reason: 'access-token-issuer',
      message: /another issuer/,
    },
    {
      name: 'an expired token (beyond the 30 s clock tolerance)',
      token: () => sign({ ...claims(), iat: now() - 7200, exp: now() - 60 }),
      reason: 'access-token-expired',
      message: /expired/,
    },
    {
      name: 'a token signed by a foreign key under the issuer’s key id',
      token: () => sign(claims(), { key: foreign }),
      reason: 'access-token-signature',
      message: /signature/,
    },
    {
      name: 'a token with an unknown key id',
      token: () => sign(claims(), { kid: 'nope' }),
      reason: 'access-token-signature',
      message: /signature/,
    },
    {
      name: 'an unsigned token (alg none)',
      token: async () =>
        new UnsecuredJWT(claims())
          .encode()
          .replace(/^[^.]+/, Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt' })).toString('base64url')),
      reason: 'access-token-signature',
      message: /signature/,
    },
    {
      name: 'an HMAC token (a symmetric "signature" anyone could make)',
      token: () => sign(claims(), { alg: 'HS256', key: new Uint8Array(32) }),
      reason: 'access-token-signature',
      message: /signature/,
    },
    {
      name: 'a token without client_id',
      token: () => {
        const { client_id: _c, ...rest } = claims();
        return sign(rest);
      },
      reason: 'access-token-claims',
      message: /client_id/,
    },
    { name: 'an opaque token', token: async () => 'not-a-jwt', reason: 'access-token-malformed', message: /not a JWT/ },
  ];

  it.each(refused)('refuses $name', async (c) => {
    const e = await verifier()
      .verify(await c.token())
      .then(
        () => undefined,
        (x: unknown) => x,
      );
    expect(e).toBeInstanceOf(AccessTokenError);
    expect((e as AccessTokenError).reason).toBe(c.reason);
    expect((e as Error).message).toMatch(c.message);
  });

  it("keeps jose's error as the cause (type and stack for the log), never only its message", async () => {
    const refusal = (token: string) =>
      verifier()
        .verify(token)
        .then(
          () => undefined,
          (x: unknown) => x as Error,
        );
    const expired = await refusal(await sign({ ...claims(), iat: now() - 7200, exp: now() - 60 }));
    expect(expired).toBeInstanceOf(AccessTokenError);
    expect(expired?.cause).toBeInstanceOf(errors.JWTExpired);
    const foreign = await refusal(await sign(claims(), { kid: 'nope' }));
    expect(foreign?.cause).toBeInstanceOf(errors.JOSEError);
  });

  it('says the issuer is unavailable before discovery, and fetches the JWKS once for many tokens', async () => {
    const none = new AccessTokenVerifier({ metadata: () => undefined, audience: AUDIENCE });
    await expect(none.verify(await sign(claims()))).rejects.toMatchObject({ reason: 'issuer-unavailable' });
    const v = verifier();
    const before = jwksRequests;
    for (let i = 0; i < 5; i++) await v.verify(await sign(claims()));
    expect(jwksRequests - before).toBe(1);
  });
});
