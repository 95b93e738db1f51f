/**
 * Where the backend is stricter than Klutch: every attack on the login and bind flow, each its own test, against the
 * real backend process and OpenID provider. Each refused attempt must create nothing for its identity and show the
 * user a readable page; the refusals are counted by reason in /metrics.
 */
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../backend/auth/keys';
import { Sealer } from '../../backend/auth/sealer';
import { Annotations } from '../../exports/bind-api';
import { PG, startBackendSuite, type BackendSuite } from '../support/backend-suite';
import { base62, bindFlow, browserFor, login } from '../support/bind-flow';
import { Browser } from '../support/browser';
import { cluster } from '../support/cluster';

let s: BackendSuite;
beforeAll(async () => {
  s = await startBackendSuite(await cluster('a'));
}, 120_000);
afterAll(async () => {
  await s?.stop();
});

/** Namespaces of this suite's consumers whose identity starts with `sub#`. */
async function namespacesOf(sub: string): Promise<string[]> {
  const list = await s.kube.core.listNamespace();
  return list.items.filter((n) => n.metadata?.annotations?.[Annotations.identity]?.startsWith(`${sub}#`)).map((n) => n.metadata!.name!);
}

async function failures(reason: string): Promise<number> {
  const text = await (await fetch(`${s.backend.probeUrl}/metrics`)).text();
  const m = new RegExp(`^bind_backend_authentication_failures_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The authorize URL of a new flow, and the browser that started it (holding its flow cookie). */
async function startFlow(user: string) {
  const browser = await browserFor(s.idp, user);
  const sid = base62(6);
  const start = await browser.get(`${s.backend.url}/authorize?u=${encodeURIComponent(s.callback.url)}&s=${sid}&c=${base62(6)}`, {
    follow: false,
  });
  expect(start.status).toBe(302);
  return { browser, sid, idpUrl: start.hops[0]!.location! };
}

/** Follows the provider's login to the backend's /callback without calling it: the callback URL. */
async function callbackUrlOf(browser: Browser, idpUrl: string): Promise<URL> {
  const page = await browser.get(idpUrl, { stopAt: (u) => u.pathname === '/callback' && u.port === new URL(s.backend.url).port });
  return new URL(page.url);
}

describe('ID tokens are verified before anything is created', () => {
  it.each([
    ['signature', 'forged signature', /signature/],
    ['issuer', 'wrong issuer', /another issuer/],
    ['audience', 'wrong audience', /another client/],
    ['expired', 'expired token', /expired/],
    ['nonce', 'wrong nonce', /nonce/],
  ])('refuses an ID token with a %s fault (%s)', async (fault, _what, message) => {
    const before = await failures(`id-token-${fault}`);
    const { page } = await login({ backend: s.backend, idp: s.idp, callback: s.callback, user: `mallory-${fault}` });
    expect(page.status).toBe(401);
    expect(new URL(page.url).pathname).toBe('/callback');
    expect(page.body).toContain('Login refused');
    expect(page.body).toMatch(message);
    expect(await failures(`id-token-${fault}`)).toBe(before + 1);
    expect(await namespacesOf(`mallory-${fault}`)).toEqual([]);
    // It went through the provider: the refusal is the backend's verification, not a broken redirect.
    expect(page.hops.some((h) => h.url.startsWith(s.idp.issuer))).toBe(true);
  });
});

describe('state', () => {
  it('refuses a tampered state', async () => {
    const { browser, idpUrl } = await startFlow(s.user());
    const cb = await callbackUrlOf(browser, idpUrl);
    const state = cb.searchParams.get('state')!;
    const i = Math.floor(state.length / 2);
    cb.searchParams.set('state', state.slice(0, i) + (state[i] === 'A' ? 'B' : 'A') + state.slice(i + 1));
    const page = await browser.get(cb.href);
    expect(page.status).toBe(400);
    expect(page.body).toContain('is not one this backend issued');
  });

  it('refuses an expired state', async () => {
    const user = s.user();
    const { browser, idpUrl } = await startFlow(user);
    const cb = await callbackUrlOf(browser, idpUrl);
    // The same state, sealed again by the backend's own key with a one-second life, used after it ran out.
    const sealer = new Sealer(() => new KeyRing(s.backend.keysFile).current());
    const state = await sealer.open<Record<string, unknown>>('state', cb.searchParams.get('state')!);
    const { exp: _exp, iat: _iat, aud: _aud, ...content } = state;
    cb.searchParams.set('state', await sealer.seal('state', content, 1000));
    await new Promise((r) => setTimeout(r, 2100));
    const before = await failures('state-expired');
    const page = await browser.get(cb.href);
    expect(page.status).toBe(400);
    expect(page.body).toContain('has expired');
    expect(await failures('state-expired')).toBe(before + 1);
    expect(await namespacesOf(user)).toEqual([]);
  });

  it('refuses a state from another browser', async () => {
    const user = s.user();
    const { idpUrl } = await startFlow(user);
    // The victim's login link, opened in the attacker's browser (which logs in at the provider itself).
    const attacker = await browserFor(s.idp, user);
    const page = await attacker.get(idpUrl);
    expect(page.status).toBe(400);
    expect(new URL(page.url).pathname).toBe('/callback');
    expect(page.body).toContain('started in another browser');
    // Also when the other browser has a login of its own running for the same session id.
    const { browser: other, sid } = await startFlow(user);
    const victim = await startFlow(user);
    const stolen = await callbackUrlOf(victim.browser, victim.idpUrl);
    expect(sid).not.toBe(victim.sid);
    const crossed = await other.get(stolen.href);
    expect(crossed.status).toBe(400);
    expect(await namespacesOf(user)).toEqual([]);
  });

  it('refuses a replayed state and code', async () => {
    const user = s.user();
    const { browser, idpUrl } = await startFlow(user);
    const cb = await callbackUrlOf(browser, idpUrl);
    const first = await browser.get(cb.href);
    expect(first.status).toBe(200); // logged in, on /resources
    const replay = await browser.get(cb.href);
    expect(replay.status).toBe(400);
    expect(replay.body).toMatch(/already (used|finished)|another browser/);
  });

  it('refuses a replayed code with a fresh state of its own (the provider refuses the code)', async () => {
    const user = s.user();
    const victim = await startFlow(user);
    const used = await callbackUrlOf(victim.browser, victim.idpUrl);
    expect((await victim.browser.get(used.href)).status).toBe(200);
    // The attacker starts its own flow and sends the victim's (used) code with its own valid state.
    const attacker = await startFlow(user);
    const own = await callbackUrlOf(attacker.browser, attacker.idpUrl);
    own.searchParams.set('code', used.searchParams.get('code')!);
    const before = await failures('code-refused');
    const page = await attacker.browser.get(own.href);
    expect(page.status).toBe(401);
    expect(page.body).toContain('refused the authorization code');
    expect(await failures('code-refused')).toBe(before + 1);
  });

  it('shows an error of the OpenID provider as a readable page', async () => {
    const page = await new Browser().get(
      `${s.backend.url}/callback?error=access_denied&error_description=${encodeURIComponent('The user <b>declined</b>')}&state=x`,
    );
    expect(page.status).toBe(401);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('The OpenID provider answered &quot;access_denied&quot;: The user &lt;b&gt;declined&lt;/b&gt;');
  });
});

describe('callbacks only on loopback', () => {
  it.each([
    'https://evil.example/callback',
    'http://evil.example:8080/callback',
    'http://localhost.evil.example:8080/callback',
    'http://127.0.0.1/callback',
    'http://user:pw@127.0.0.1:8080/callback',
    'javascript:alert(1)',
  ])('refuses u=%s before any login', async (u) => {
    const page = await new Browser().get(`${s.backend.url}/authorize?u=${encodeURIComponent(u)}&s=abc123&c=def456`, { follow: false });
    expect(page.status).toBe(400);
    expect(page.body).toContain('Refused callback');
    expect(page.headers.location).toBeUndefined();
  });

  it.each(['http://localhost:9999/callback', 'http://127.0.0.1:9999/cb?x=1', 'http://[::1]:9999/callback'])('accepts u=%s', async (u) => {
    const page = await new Browser().get(`${s.backend.url}/authorize?u=${encodeURIComponent(u)}&s=abc123&c=def456`, { follow: false });
    expect(page.status).toBe(302);
    expect(new URL(page.headers.location!).origin).toBe(s.idp.issuer);
  });

  it('builds the callback from p as Klutch does, and refuses p and u together', async () => {
    const browser = await browserFor(s.idp, s.user());
    const start = await browser.get(`${s.backend.url}/authorize?p=${s.callback.port}&s=abc123&c=def456`, { follow: false });
    expect(start.status).toBe(302);
    const both = await new Browser().get(`${s.backend.url}/authorize?p=1&u=${encodeURIComponent(s.callback.url)}&s=abc123&c=def456`);
    expect(both.status).toBe(400);
    expect((await new Browser().get(`${s.backend.url}/authorize?p=1&c=def456`)).status).toBe(400);
  });
});

describe('the session cookie', () => {
  it('is required by /resources and /bind', async () => {
    for (const path of ['/resources?s=abc123', '/bind?s=abc123&resource=postgresqlinstances&group=anynines.com']) {
      const page = await new Browser().get(`${s.backend.url}${path}`);
      expect(page.status, path).toBe(401);
      expect(page.body).toContain('has no session abc123');
    }
  });

  it('refuses a tampered cookie, and a cookie of another session id', async () => {
    const user = s.user();
    const { browser, sid } = await login({ backend: s.backend, idp: s.idp, callback: s.callback, user });
    const cookie = (await browser.cookies(`${s.backend.url}/`)).find((c) => c.name === `klutch-bind-${sid}`)!;
    const tampered = new Browser();
    const v = cookie.value;
    await tampered.setCookie(cookie.name, `${v.slice(0, -5)}${v.slice(-5) === 'AAAAA' ? 'BBBBB' : 'AAAAA'}`, s.backend.url);
    const page = await tampered.get(`${s.backend.url}/bind?s=${sid}&resource=${PG.resource}&group=${PG.group}`);
    expect(page.status).toBe(401);
    expect(page.body).toContain('is not valid');
    // The same valid cookie value under another session's name.
    const moved = new Browser();
    await moved.setCookie('klutch-bind-other1', v, s.backend.url);
    expect((await moved.get(`${s.backend.url}/resources?s=other1`)).status).toBe(401);
    expect(await namespacesOf(user)).toEqual([]);
  });
});

describe('/bind', () => {
  it('refuses a resource no template exports, creating nothing', async () => {
    const user = s.user();
    const { browser, sid } = await login({ backend: s.backend, idp: s.idp, callback: s.callback, user });
    for (const [resource, group] of [
      ['secrets', ''],
      ['customresourcedefinitions', 'apiextensions.k8s.io'],
      ['widgets', 'anynines.com'],
    ]) {
      const page = await browser.get(`${s.backend.url}/bind?s=${sid}&resource=${resource}&group=${group}`);
      expect(page.status, `${resource}.${group}`).toBe(404);
      expect(page.body).toContain(`exports ${resource}.${group}`);
    }
    expect(await namespacesOf(user)).toEqual([]);
    expect(s.callback.responses.some((r) => Buffer.from(r, 'base64').toString().includes(`"${user}"`))).toBe(false);
  });

  it('still binds for a good login in the same suite (the refusals above are not a broken backend)', async () => {
    const flow = await bindFlow({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user(), ...PG });
    expect(flow.namespace.startsWith(`${s.prefix}-`)).toBe(true);
    expect(readFileSync(s.backend.keysFile, 'utf8').trim().length).toBeGreaterThan(40);
  });
});
