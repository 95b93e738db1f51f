import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import * as client from 'openid-client';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Browser } from './browser';
import { startOidcProvider, type OidcTestProvider } from './oidc';

let idp: OidcTestProvider;
let callback: Server;
let redirectUri: string;

beforeAll(async () => {
  // The client's redirect URI: a loopback server that only answers, so the flow ends at a real endpoint.
  callback = createServer((_req, res) => res.end('ok'));
  await new Promise<void>((r) => callback.listen(0, '127.0.0.1', r));
  redirectUri = `http://127.0.0.1:${(callback.address() as AddressInfo).port}/callback`;
  idp = await startOidcProvider({
    clients: [{ clientId: 'test', clientSecret: 'secret', redirectUris: [redirectUri] }],
    users: [{ sub: 'alice' }, { sub: 'bob', email: 'bob@example.org', groups: ['dba', 'devs'] }],
  });
}, 60_000);

afterAll(async () => {
  await idp?.stop();
  callback?.close();
});

/** One authorization code flow with openid-client, as a relying party does it. */
async function login(browser: Browser, params: Record<string, string> = {}) {
  const config = await client.discovery(new URL(idp.issuer), 'test', 'secret', undefined, {
    execute: [client.enableNonRepudiationChecks],
    [client.customFetch]: fetchTrusting(idp.ca),
  });
  const verifier = client.randomPKCECodeVerifier();
  const nonce = client.randomNonce();
  const url = client.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: 'openid email profile',
    code_challenge: await client.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    nonce,
    ...params,
  });
  const page = await browser.get(url.href);
  return { config, page, verifier, nonce };
}

/** fetch trusting the provider's test CA (undici's, which takes a CA per dispatcher). */
function fetchTrusting(ca: string) {
  const dispatcher = new Agent({ connect: { ca } });
  return (url: string, init: RequestInit) => undiciFetch(url, { ...(init as object), dispatcher }) as unknown as Promise<Response>;
}

describe('startOidcProvider', () => {
  it('logs the first user in without a form and issues a verifiable ID token', async () => {
    const browser = new Browser({ ca: [idp.ca] });
    const { config, page, verifier, nonce } = await login(browser);
    expect(page.url.startsWith(redirectUri)).toBe(true);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url), { pkceCodeVerifier: verifier, expectedNonce: nonce });
    expect(tokens.claims()?.sub).toBe('alice');
    expect(tokens.claims()?.iss).toBe(idp.issuer);
  });

  it('counts the requests of its token endpoint', async () => {
    const before = await idp.tokenRequests();
    const browser = new Browser({ ca: [idp.ca] });
    const { config, page, verifier, nonce } = await login(browser);
    expect(await idp.tokenRequests()).toBe(before); // logging in is not a token request
    await client.authorizationCodeGrant(config, new URL(page.url), { pkceCodeVerifier: verifier, expectedNonce: nonce });
    expect(await idp.tokenRequests()).toBe(before + 1);
  });

  it('logs in the user named by the login cookie', async () => {
    const browser = new Browser({ ca: [idp.ca] });
    const { name, value } = idp.loginCookie('bob');
    await browser.setCookie(name, value, idp.issuer);
    const { config, page, verifier, nonce } = await login(browser);
    const tokens = await client.authorizationCodeGrant(config, new URL(page.url), { pkceCodeVerifier: verifier, expectedNonce: nonce });
    expect(tokens.claims()?.sub).toBe('bob');
  });

  it("puts a user's groups into the ID token only when scope groups is asked for", async () => {
    for (const [scope, groups] of [
      ['openid email profile groups', ['dba', 'devs']],
      ['openid email profile', undefined],
    ] as const) {
      const browser = new Browser({ ca: [idp.ca] });
      const { name, value } = idp.loginCookie('bob');
      await browser.setCookie(name, value, idp.issuer);
      const { config, page, verifier, nonce } = await login(browser, { scope });
      const tokens = await client.authorizationCodeGrant(config, new URL(page.url), { pkceCodeVerifier: verifier, expectedNonce: nonce });
      expect(tokens.claims()?.groups, scope).toEqual(groups);
    }
  });

  it('refuses an authorization request without PKCE', async () => {
    const browser = new Browser({ ca: [idp.ca] });
    const { page } = await login(browser, { code_challenge: '', code_challenge_method: '' });
    const back = new URL(page.url);
    expect(back.searchParams.get('error')).toBe('invalid_request');
    expect(back.searchParams.get('error_description')).toMatch(/PKCE/);
  });

  it('names an unknown user', () => {
    expect(() => idp.loginCookie('carol')).toThrow('no user "carol"; it has alice, bob');
  });
});

describe('startOidcProvider with machine clients', () => {
  let m: OidcTestProvider;
  beforeAll(async () => {
    m = await startOidcProvider({
      clients: [
        { clientId: 'ci', clientSecret: 'ci-secret', redirectUris: [], machine: { groups: ['deployers'] } },
        { clientId: 'ci-typ', clientSecret: 'x', redirectUris: [], machine: { accessTokenFault: 'type' } },
      ],
      users: [{ sub: 'nobody' }],
      resourceServers: [{ resource: 'https://api.example.test/', audience: 'klutch-bind' }],
    });
  }, 60_000);
  afterAll(() => m?.stop());

  const grant = async (clientId: string, secret: string, resource = 'https://api.example.test/') => {
    const config = await client.discovery(new URL(m.issuer), clientId, secret, undefined, { [client.customFetch]: fetchTrusting(m.ca) });
    return client.clientCredentialsGrant(config, { resource });
  };
  const header = (jwt: string) => JSON.parse(Buffer.from(jwt.split('.')[0]!, 'base64url').toString()) as { typ?: string };

  it('issues JWT access tokens (at+jwt) for a registered resource, with its audience and the client’s groups', async () => {
    const t = await grant('ci', 'ci-secret');
    expect(header(t.access_token).typ).toBe('at+jwt');
    expect(JSON.parse(Buffer.from(t.access_token.split('.')[1]!, 'base64url').toString())).toMatchObject({
      iss: m.issuer,
      aud: 'klutch-bind',
      sub: 'ci',
      client_id: 'ci',
      groups: ['deployers'],
    });
  });

  it('re-signs a faulty client’s token with its fault, and refuses an unknown resource and a wrong secret', async () => {
    expect(header((await grant('ci-typ', 'x')).access_token).typ).toBe('JWT');
    await expect(grant('ci', 'ci-secret', 'https://unknown.example.test/')).rejects.toMatchObject({ error: 'invalid_target' });
    await expect(grant('ci', 'wrong')).rejects.toMatchObject({ error: 'invalid_client' });
  });
});
