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
