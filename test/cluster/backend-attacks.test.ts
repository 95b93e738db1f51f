/**
 * Where the backend is stricter than Klutch: every attack on the login and bind flow, each its own test, against the
 * real backend process and OpenID provider. Each refused attempt must create nothing for its identity and show the
 * user a readable page; the refusals are counted by reason in /metrics.
 */
import { randomBytes } from 'node:crypto';
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import { Agent, fetch as undiciFetch } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { KeyRing } from '../../backend/auth/keys';
import { Sealer } from '../../backend/auth/sealer';
import { Annotations } from '../../exports/bind-api';
import { PG, startBackendSuite, type BackendSuite } from '../../harness/parts/backend-suite';
import { startBindBackend } from '../../harness/parts/bind-backend';
import { randomBase62, bindFlow, browserFor, browserLogin } from '../../harness/parts/bind-flow';
import { Browser } from '../../harness/login/browser';
import { cluster } from '../support/cluster';
import { bearerKubeconfigYaml } from '../../harness/cluster/control-plane';
import { eventually, kubeFor, requireOk } from '../../harness/cluster/kube';
import { sleep } from '../../lib/abort';

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
  const m = new RegExp(`^klutch_backend_authentication_failures_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
}

/** The authorize URL of a new flow, and the browser that started it (holding its flow cookie). */
async function startFlow(user: string) {
  const browser = await browserFor(s.idp, user);
  const sid = randomBase62(6);
  const start = await browser.get(`${s.backend.url}/authorize?u=${encodeURIComponent(s.callback.url)}&s=${sid}&c=${randomBase62(6)}`, {
    follow: false,
  });
  expect(start.status).toBe(302);
  return { browser, sid, idpUrl: start.hops[0]!.location! };
}

/** One request as a non-browser client sends it: any method, any headers (a forged Host), the cookies of `from`. */
async function send(
  method: string,
  url: string,
  o: { from?: Browser; headers?: Record<string, string> } = {},
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }> {
  const cookie = o.from ? await o.from.jar.getCookieString(url) : '';
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers: { ...(cookie ? { Cookie: cookie } : {}), ...o.headers } }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function rateLimited(route: string): Promise<number> {
  const text = await (await fetch(`${s.backend.probeUrl}/metrics`)).text();
  const m = new RegExp(`^klutch_backend_rate_limited_total\\{route="${route}"\\} (\\d+)`, 'm').exec(text);
  return m ? Number(m[1]) : 0;
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
    const { page } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user: `mallory-${fault}` });
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
    await sleep(2100);
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

  it('shows an error of the OpenID provider as a readable page in its own words, never the provider’s text', async () => {
    // Anyone can send a browser to our /callback with any error_description: our origin must not vouch for it.
    const lure = 'Your account is locked. Call support at +1 555 0100 to unlock it';
    const page = await new Browser().get(
      `${s.backend.url}/callback?error=access_denied&error_description=${encodeURIComponent(lure)}&state=x`,
    );
    expect(page.status).toBe(401);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.body).toContain('The login was declined at the OpenID provider.');
    expect(page.body).not.toContain('555 0100');
    expect(page.body).not.toContain('locked');
    const unknown = await new Browser().get(`${s.backend.url}/callback?error=${encodeURIComponent('call_555_0100')}`);
    expect(unknown.status).toBe(401);
    expect(unknown.body).not.toContain('555');
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
    const { browser, sid } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user });
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
    const { browser, sid } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user });
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

describe('HTTP', () => {
  it('sends the security headers with every answer of every endpoint', async () => {
    const browser = await browserFor(s.idp, s.user());
    const sid = randomBase62(6);
    const authorize = await browser.get(`${s.backend.url}/authorize?u=${encodeURIComponent(s.callback.url)}&s=${sid}&c=abc123`, {
      follow: false,
    });
    const cb = await callbackUrlOf(browser, authorize.headers.location!);
    const answers: [string, { status: number; headers: http.IncomingHttpHeaders }][] = [
      ['authorize', authorize],
      ['callback', await browser.get(cb.href, { follow: false })],
      ['resources', await browser.get(`${s.backend.url}/resources?s=${sid}`)],
      ['bind', await browser.get(`${s.backend.url}/bind?s=${sid}&resource=${PG.resource}&group=${PG.group}`, { follow: false })],
      ['export', await browser.get(`${s.backend.url}/export`)],
      ['refused', await new Browser().get(`${s.backend.url}/resources?s=nosession`)],
      ['not found', await new Browser().get(`${s.backend.url}/nope`)],
      ['method', await send('POST', `${s.backend.url}/bind`)],
    ];
    expect(answers.map(([what, a]) => `${what} ${a.status}`)).toEqual([
      'authorize 302',
      'callback 302',
      'resources 200',
      'bind 302', // to the loopback callback, with the kubeconfig in its URL: no Referer may carry it on
      'export 200',
      'refused 401',
      'not found 404',
      'method 405',
    ]);
    for (const [what, a] of answers) {
      expect(a.headers, what).toMatchObject({
        'x-content-type-options': 'nosniff',
        'referrer-policy': 'no-referrer',
        'x-frame-options': 'DENY',
        'content-security-policy':
          "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
      });
      expect(a.headers['cache-control'], what).toMatch(/no-store/);
      expect(a.headers['strict-transport-security'], what).toBeUndefined(); // plain http here; backend-tls has HSTS
    }
  });

  it('answers HEAD /bind 405 and creates nothing for the identity (a HEAD has no side effect)', async () => {
    const user = s.user();
    const { browser, sid } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user });
    const before = s.callback.responses.length;
    const head = await send('HEAD', `${s.backend.url}/bind?s=${sid}&resource=${PG.resource}&group=${PG.group}`, { from: browser });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET');
    expect(head.headers.location).toBeUndefined();
    expect(await namespacesOf(user)).toEqual([]);
    expect(s.callback.responses.length).toBe(before);
    expect((await send('HEAD', `${s.backend.url}/export`)).status).toBe(200); // side-effect free: answered
  });

  it('builds /export’s authenticatedURL from its configured URL: a forged Host cannot point kubectl bind elsewhere', async () => {
    const forged: Record<string, string>[] = [{ Host: 'evil.example' }, { Host: 'evil.example:443', 'X-Forwarded-Proto': 'https' }];
    for (const headers of forged) {
      const res = await send('GET', `${s.backend.url}/export`, { headers });
      expect(res.status).toBe(200);
      const doc = JSON.parse(res.body) as { authenticationMethods: { oauth2CodeGrant: { authenticatedURL: string } }[] };
      expect(doc.authenticationMethods[0]!.oauth2CodeGrant.authenticatedURL).toBe(`${s.backend.url}/authorize`);
    }
  });

  it('refuses junk callbacks before the code exchange (the OpenID provider sees none) and rate-limits them', async () => {
    const tokensBefore = await s.idp.tokenRequests();
    // A real state of ours, but in browsers without its flow cookie, and states that are not ours: each from a
    // client of its own, so no rate limit hides whether the exchange would have been tried.
    const { browser, idpUrl } = await startFlow(s.user());
    const real = await callbackUrlOf(browser, idpUrl);
    const spread = await Promise.all(
      Array.from({ length: 100 }, (_, i) => {
        const junk = new URL(real.href);
        junk.searchParams.set('code', randomBase62(20));
        if (i % 2) junk.searchParams.set('state', randomBase62(40 + (i % 50)));
        return new Browser().get(junk.href);
      }),
    );
    expect(new Set(spread.map((p) => p.status))).toEqual(new Set([400]));
    // 200 from one client: refused, and past the burst answered 429 with Retry-After.
    const limitedBefore = await rateLimited('/callback');
    const attacker = new Browser();
    const answers = [];
    for (let i = 0; i < 200; i++)
      answers.push(await attacker.get(`${s.backend.url}/callback?code=${randomBase62(20)}&state=${randomBase62(60)}`));
    const statuses = answers.map((a) => a.status);
    expect(statuses.filter((c) => c !== 400 && c !== 429)).toEqual([]);
    expect(statuses.filter((c) => c === 400).length).toBeLessThanOrEqual(30); // the burst (20) and what refilled meanwhile
    const limited = answers.find((a) => a.status === 429)!;
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.body).toContain('Too many requests');
    expect(await rateLimited('/callback')).toBe(limitedBefore + statuses.filter((c) => c === 429).length);
    expect(await s.idp.tokenRequests()).toBe(tokensBefore);
    // Another client still logs in meanwhile.
    const { page } = await browserLogin({ backend: s.backend, idp: s.idp, callback: s.callback, user: s.user() });
    expect(page.status).toBe(200);
  });

  it('counts an attacker who writes a new X-Forwarded-For each time as one client: no proxy is trusted unless configured', async () => {
    // Issue 34 item 10: the header is the client's to write, so only a proxy named by --login-rate-trusted-proxies is
    // believed. From an address of its own (loopback is 127/8), so no other test's bucket is touched.
    const attacker = new Agent({ connect: { localAddress: '127.0.0.77' } });
    const limitedBefore = await rateLimited('/callback');
    const statuses: number[] = [];
    try {
      for (let i = 0; i < 120; i++) {
        const r = await undiciFetch(`${s.backend.url}/callback?code=${randomBase62(20)}&state=${randomBase62(60)}`, {
          headers: { 'X-Forwarded-For': `203.0.113.${i + 1}` },
          redirect: 'manual',
          dispatcher: attacker,
        });
        await r.arrayBuffer();
        statuses.push(r.status);
      }
    } finally {
      await attacker.close();
    }
    // The burst (20) answered, the rest refused: keyed on the header, none would be.
    const refused = statuses.filter((c) => c === 429).length;
    expect(refused, JSON.stringify(statuses)).toBeGreaterThanOrEqual(90);
    expect(await rateLimited('/callback')).toBe(limitedBefore + refused);
  });

  it('shows only an error id on a 500 page, never the internal error (here: RBAC of the backend cut)', async () => {
    // A second backend running as a ServiceAccount of its own; once it is ready, its rights are taken away.
    const sa = `cut-${randomBytes(3).toString('hex')}`;
    const ns = s.backend.namespace;
    await requireOk(s.kube, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { metadata: { name: sa } });
    const crb = `/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${sa}`;
    await requireOk(s.kube, 'POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', {
      metadata: { name: sa },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }],
    });
    const tr = await requireOk(s.kube, 'POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds: 3600 },
    });
    const token = (tr.status as { token: string }).token;
    const kubeconfig = join(s.backend.dir, `${sa}.kubeconfig`);
    writeFileSync(kubeconfig, bearerKubeconfigYaml(s.cluster.name, s.cluster.server, s.cluster.ca, sa, token), { mode: 0o600 });
    const cut = await startBindBackend({ cluster: s.cluster, idp: s.idp, kubeconfig, args: [`--namespace-prefix=${s.prefix}`] });
    try {
      await requireOk(s.kube, 'DELETE', crb);
      const asSa = kubeFor(s.cluster, undefined, token);
      await eventually('the ServiceAccount to lose its rights', async () => {
        const r = await asSa.request('GET', '/api/v1/namespaces?limit=1');
        return r.code === 403 ? true : undefined;
      });
      // A session sealed with that backend's key, as its /callback would have set it.
      const user = s.user();
      const sid = randomBase62(6);
      const sealer = new Sealer(() => new KeyRing(cut.keysFile).current());
      const session = { iss: s.idp.issuer, sub: user, sid, cid: randomBase62(6), redirectURL: s.callback.url };
      const browser = new Browser();
      await browser.setCookie(`klutch-bind-${sid}`, await sealer.seal('session', session, 600_000), cut.url);
      const page = await browser.get(`${cut.url}/bind?s=${sid}&resource=${PG.resource}&group=${PG.group}`);
      expect(page.status).toBe(500);
      const id = /error id ([0-9a-f]{12})/.exec(page.body)?.[1];
      expect(id, page.body).toBeDefined();
      for (const secret of ['forbidden', 'system:serviceaccount', sa, ns, 'HTTP-Code']) expect(page.body).not.toContain(secret);
      // The operator finds the detail by the id.
      await eventually(
        'the error in the backend log',
        async () => {
          const line = readFileSync(join(cut.dir, 'backend.log'), 'utf8')
            .split('\n')
            .find((l) => l.includes(id!));
          return line?.includes('forbidden') && line.includes(sa) ? line : undefined;
        },
        10_000,
      );
      expect(await namespacesOf(user)).toEqual([]);
      // Without its rights its informers cannot list, and still SIGTERM ends it gracefully (exit 0, no SIGKILL).
      await cut.proc.stop(15_000);
      expect(cut.proc.exited()).toBe('code 0');
    } finally {
      await cut.proc.stop(2_000);
      rmSync(cut.keysFile, { force: true });
      await s.kube.request('DELETE', crb);
      await s.kube.request('DELETE', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}`);
    }
  }, 90_000);
});
