/**
 * The bind endpoints' HTTP behaviour on a real loopback server: headers on every answer, HEAD, 500 pages, /export's
 * URL, the OpenID provider's error text, and the rate limit. The OpenID provider and the cluster are stand-ins here
 * (both are real in test/cluster/backend*.test.ts); what is tested is the HTTP layer.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import net, { type AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { pino } from 'pino';
import { Registry } from 'prom-client';
import { afterEach, describe, expect, it } from 'vitest';
import type { APIServiceExportTemplate } from '../../exports/bind-api';
import { AccessTokenError, type MachineIdentity } from '../auth/access-token';
import { parseKeys } from '../auth/keys';
import { ReplayGuard } from '../auth/replay';
import { Sealer } from '../auth/sealer';
import { backendMetrics } from '../metrics';
import type { HttpDeps } from './deps';
import { RateLimiter } from './rate-limit';
import { SECURITY_HEADERS } from './respond';
import { bindHandler, DEFAULT_LIMITS, listen } from './server';
import { sessionCookieName, SESSION_TTL_MS, type Session } from './session';
import { sleep } from '../../lib/abort';

const template = {
  metadata: { name: 'pg', namespace: 't' },
  spec: { APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' } },
} as unknown as APIServiceExportTemplate;
const crd = {
  spec: { scope: 'Namespaced', names: { kind: 'PostgresqlInstance' }, versions: [{ name: 'v1', served: true, storage: true }] },
};

interface Harness {
  url: string;
  sealer: Sealer;
  provisioned: string[];
  log: () => string;
  metrics: Registry;
}

const servers: http.Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((r) => (s.closeAllConnections(), s.close(r)))));
});

async function start(
  o: {
    provision?: (id: string) => Promise<never>;
    limiter?: RateLimiter;
    secure?: boolean;
    machine?: HttpDeps['machine'];
    /** Annotations of the one template (a bind rule). */
    rule?: Record<string, string>;
    /** The templates and CRD instead (an API in two versions). */
    templates?: APIServiceExportTemplate[];
    crd?: unknown;
  } = {},
): Promise<Harness> {
  const keys = parseKeys(randomBytes(32).toString('base64'), 'test');
  const sealer = new Sealer(() => keys);
  const registry = new Registry();
  let logged = '';
  const sink = new Writable({ write: (c: Buffer, _e, cb) => ((logged += c.toString()), cb()) });
  const provisioned: string[] = [];
  const d: HttpDeps = {
    issuer: {
      ready: () => true,
      reason: () => '',
      authorizationUrl: async () => new URL('https://idp.example/auth'),
      exchange: async () => {
        throw new Error('the stand-in provider exchanges no code');
      },
    },
    sealer,
    replay: new ReplayGuard(),
    exportables: {
      templates: async () => o.templates ?? [o.rule ? { ...template, metadata: { ...template.metadata, annotations: o.rule } } : template],
      crd: async () => (o.crd ?? crd) as never,
    },
    provision:
      o.provision ??
      (async (id) => {
        provisioned.push(id);
        throw new Error('not reached');
      }),
    defaultBindPolicy: 'allow-all',
    prettyName: 'test',
    secureCookies: o.secure ?? false,
    externalUrl: 'https://bind.example.com',
    ...(o.limiter ? { limiter: o.limiter } : {}),
    ...(o.machine ? { machine: o.machine } : {}),
    metrics: backendMetrics(registry),
    log: pino({ level: 'info' }, sink),
  };
  const server = http.createServer(bindHandler(d));
  servers.push(server);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sealer,
    provisioned,
    log: () => logged,
    metrics: registry,
  };
}

function request(url: string, o: { method?: string; headers?: Record<string, string> } = {}) {
  return new Promise<{ status: number; headers: http.IncomingHttpHeaders; body: string }>((resolve, reject) => {
    const req = http.request(url, { method: o.method ?? 'GET', headers: o.headers ?? {} }, (res) => {
      let body = '';
      res.on('data', (c: Buffer) => (body += c.toString()));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject);
    req.end();
  });
}

async function sessionCookie(h: Harness, sid: string): Promise<string> {
  const session: Session = { iss: 'https://idp.example', sub: 'alice', sid, cid: 'c1', redirectURL: 'http://127.0.0.1:1/callback' };
  return `${sessionCookieName(sid)}=${await h.sealer.seal('session', session, SESSION_TTL_MS)}`;
}

describe('every answer', () => {
  it('carries the security headers, and HSTS when browsers come over https', async () => {
    const h = await start();
    const answers = await Promise.all([
      request(`${h.url}/export`),
      request(`${h.url}/resources?s=abc`),
      request(`${h.url}/authorize?p=1&s=abc&c=def`),
      request(`${h.url}/callback?error=access_denied`),
      request(`${h.url}/bind?s=abc&resource=x`),
      request(`${h.url}/nope`),
      request(`${h.url}/bind`, { method: 'POST' }),
    ]);
    for (const a of answers) {
      for (const [k, v] of Object.entries(SECURITY_HEADERS)) {
        if (k !== 'Cache-Control') expect(a.headers[k.toLowerCase()], k).toBe(v);
      }
      expect(a.headers['cache-control']).toMatch(/no-store/);
      expect(a.headers['strict-transport-security']).toBeUndefined();
    }
    const secure = await start({ secure: true });
    expect((await request(`${secure.url}/export`)).headers['strict-transport-security']).toBe('max-age=31536000');
  });
});

describe('HEAD', () => {
  it('is answered on /export only; HEAD /bind is 405 and provisions nothing', async () => {
    const h = await start();
    const cookie = await sessionCookie(h, 'abc');
    const head = await request(`${h.url}/bind?s=abc&resource=postgresqlinstances&group=anynines.com`, {
      method: 'HEAD',
      headers: { Cookie: cookie },
    });
    expect(head.status).toBe(405);
    expect(head.headers.allow).toBe('GET');
    expect(h.provisioned).toEqual([]);
    for (const path of ['/authorize?p=1&s=abc&c=def', '/callback', '/resources?s=abc']) {
      expect((await request(`${h.url}${path}`, { method: 'HEAD' })).status, path).toBe(405);
    }
    const exp = await request(`${h.url}/export`, { method: 'HEAD' });
    expect(exp.status).toBe(200);
    expect(exp.body).toBe('');
    // The GET it stands for does provision.
    await request(`${h.url}/bind?s=abc&resource=postgresqlinstances&group=anynines.com`, { headers: { Cookie: cookie } });
    expect(h.provisioned).toEqual(['alice#c1']);
  });
});

describe('a 500', () => {
  it('shows only an error id; the log has the error under it', async () => {
    const detail = 'namespaces is forbidden: User "system:serviceaccount:klutch-bind:backend" cannot create resource "namespaces"';
    const h = await start({
      provision: async () => {
        throw new Error(detail);
      },
    });
    const page = await request(`${h.url}/bind?s=abc&resource=postgresqlinstances&group=anynines.com`, {
      headers: { Cookie: await sessionCookie(h, 'abc') },
    });
    expect(page.status).toBe(500);
    expect(page.body).not.toContain('forbidden');
    expect(page.body).not.toContain('system:serviceaccount');
    const id = /error id ([0-9a-f]{12})/.exec(page.body)?.[1];
    expect(id).toBeDefined();
    const line = JSON.parse(
      h
        .log()
        .split('\n')
        .find((l) => l.includes(id!))!,
    ) as { err: { message: string; stack: string } };
    expect(line.err.message).toBe(detail);
    expect(line.err.stack).toContain('server.test.ts');
  });
});

describe('/export', () => {
  it('builds authenticatedURL from the external URL, whatever Host and X-Forwarded-Proto say', async () => {
    const h = await start();
    const doc = JSON.parse((await request(`${h.url}/export`, { headers: { Host: 'evil.example', 'X-Forwarded-Proto': 'http' } })).body);
    expect(doc.authenticationMethods[0].oauth2CodeGrant.authenticatedURL).toBe('https://bind.example.com/authorize');
  });
});

describe('/callback with an error of the OpenID provider', () => {
  it('shows our text for the code, never the provider’s description', async () => {
    const h = await start();
    const described = await request(
      `${h.url}/callback?error=access_denied&error_description=${encodeURIComponent('Call +1 555 0100 now')}`,
    );
    expect(described.status).toBe(401);
    expect(described.body).toContain('The login was declined at the OpenID provider.');
    expect(described.body).not.toContain('555');
    const unknown = await request(`${h.url}/callback?error=${encodeURIComponent('visit evil.example')}`);
    expect(unknown.body).toContain('ended the login with an error');
    expect(unknown.body).not.toContain('evil.example');
  });
});

describe('the rate limit', () => {
  it('answers 429 with Retry-After past the burst, per client, and counts it', async () => {
    const h = await start({ limiter: new RateLimiter({ perMinute: 6, burst: 3 }) });
    const codes = [];
    for (let i = 0; i < 5; i++) codes.push((await request(`${h.url}/callback?code=x&state=junk`)).status);
    expect(codes).toEqual([400, 400, 400, 429, 429]);
    const limited = await request(`${h.url}/authorize?p=1&s=abc&c=def`);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    expect(limited.body).toContain('Too many requests');
    expect((await request(`${h.url}/export`)).status).toBe(200); // not limited
    expect(await h.metrics.getSingleMetricAsString('klutch_backend_rate_limited_total')).toMatch(/route="\/callback"\} 2/);
  });
});

describe('the server', () => {
  it('refuses connections past --http-max-connections', async () => {
    const server = await listen((_req, res) => res.end('ok'), {
      host: '127.0.0.1',
      port: 0,
      limits: { ...DEFAULT_LIMITS, maxConnections: 1 },
    });
    try {
      const held = net.connect(server.port, '127.0.0.1');
      await new Promise((r) => held.once('connect', r));
      const refused = net.connect(server.port, '127.0.0.1');
      const closed = await new Promise<boolean>((r) => {
        refused.once('close', () => r(true));
        refused.once('data', () => r(false));
        refused.write('GET /export HTTP/1.1\r\nHost: x\r\n\r\n');
      });
      expect(closed).toBe(true);
      held.destroy();
    } finally {
      await server.close();
    }
  });
});

describe('draining (the replica is terminating)', () => {
  /** A GET over `agent`; resolves with the answer and the socket it came on. */
  const get = (port: number, path: string, agent: http.Agent) =>
    new Promise<{ body: string; connection: string | undefined; socket: net.Socket }>((resolve, reject) => {
      const req = http.get({ host: '127.0.0.1', port, path, agent }, (res) => {
        const socket = res.socket;
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ body, connection: res.headers.connection, socket }));
      });
      req.on('error', reject);
    });
  const closed = (s: net.Socket) => new Promise<void>((r) => (s.destroyed ? r() : s.once('close', () => r())));
  /** A promise and the function that resolves it: one step of a handler waits for the test, or the test for it. */
  const latch = () => {
    let open!: () => void;
    const opened = new Promise<void>((r) => (open = r));
    return { open, opened };
  };

  it('answers what is in flight with Connection: close, closes idle keep-alive connections, accepts none, then resolves', async () => {
    const release = latch();
    const slowArrived = latch();
    const server = await listen(
      (req, res) => {
        if (req.url === '/slow') {
          slowArrived.open();
          void release.opened.then(() => res.end('slow'));
        } else res.end('fast');
      },
      { host: '127.0.0.1', port: 0 },
    );
    const idleAgent = new http.Agent({ keepAlive: true });
    const busyAgent = new http.Agent({ keepAlive: true });
    try {
      const idle = await get(server.port, '/fast', idleAgent);
      expect(idle.connection).toBe('keep-alive');
      // A request that started before the drain and answers after it began, on a keep-alive connection.
      const slow = get(server.port, '/slow', busyAgent);
      await slowArrived.opened;
      let drained = false;
      const draining = server.close().then(() => (drained = true));
      // The idle connection is closed by the server at once; a new connection is refused.
      await closed(idle.socket);
      const refused = await new Promise<string>((r) =>
        net.connect(server.port, '127.0.0.1').once('error', (e: NodeJS.ErrnoException) => r(e.code ?? '')),
      );
      expect(refused).toBe('ECONNREFUSED');
      await sleep(50);
      expect(drained).toBe(false);
      release.open();
      const answered = await slow;
      expect(answered.body).toBe('slow');
      expect(answered.connection).toBe('close');
      await closed(answered.socket);
      await draining;
      expect(drained).toBe(true);
    } finally {
      idleAgent.destroy();
      busyAgent.destroy();
    }
  });

  it('ends a keep-alive connection whose answer was already under way when the drain began', async () => {
    const release = latch();
    const headersSent = latch();
    const server = await listen(
      (_req, res) => {
        res.writeHead(200, { 'Content-Type': 'text/plain' });
        res.write('part ');
        headersSent.open();
        void release.opened.then(() => res.end('end'));
      },
      { host: '127.0.0.1', port: 0, limits: { ...DEFAULT_LIMITS, keepAliveTimeoutMs: 60_000 } },
    );
    const agent = new http.Agent({ keepAlive: true });
    try {
      const answer = get(server.port, '/', agent);
      await headersSent.opened;
      const draining = server.close();
      release.open();
      const a = await answer;
      expect(a.body).toBe('part end');
      // Its headers said keep-alive, but the server closes it once answered, not after the 60 s keep-alive timeout.
      expect(a.connection).toBe('keep-alive');
      await closed(a.socket);
      await draining;
    } finally {
      agent.destroy();
    }
  });
});

describe('the machine path (Authorization: Bearer)', () => {
  // The token check itself is auth/access-token.test.ts's (and, with the real provider, bind-machine.test.ts's).
  const tokens: Record<string, MachineIdentity> = {
    'token-ci': { issuer: 'https://idp.example', subject: 'ci', clientId: 'ci', groups: [] },
    'token-other': { issuer: 'https://idp.example', subject: 'other', clientId: 'other', groups: ['devs'] },
  };
  const machine: HttpDeps['machine'] = {
    issuerUrl: 'https://idp.example',
    resource: 'https://bind.example.com',
    verifier: {
      verify: async (t) => {
        const id = tokens[t];
        if (t === 'unicode')
          throw new AccessTokenError('access-token-issuer', 'the token names another issuer than this backend’s "x" \\ é');
        if (!id) throw new AccessTokenError('access-token-audience', 'the access token is not for this backend');
        return id;
      },
    },
  };
  const bearer = (t: string) => ({ headers: { Authorization: `Bearer ${t}` } });
  const rule = { 'klutch-kit.anynines.com/bind-allowed-clients': 'ci' };

  it('/export offers the client-credentials method after Klutch’s only when machine binding is on', async () => {
    const off = JSON.parse((await request(`${(await start()).url}/export`)).body);
    expect(off.authenticationMethods).toHaveLength(1);
    const on = JSON.parse((await request(`${(await start({ machine })).url}/export`)).body);
    expect(on.authenticationMethods.map((m: { method: string }) => m.method)).toEqual(['OAuth2CodeGrant', 'OAuth2ClientCredentials']);
    expect(on.authenticationMethods[1].oauth2ClientCredentials).toEqual({
      issuerURL: 'https://idp.example',
      resource: 'https://bind.example.com',
      resourcesURL: 'https://bind.example.com/resources',
      bindURL: 'https://bind.example.com/bind',
    });
  });

  it('refuses a token while machine binding is off, and a bad token, with JSON and a Bearer challenge; counts it', async () => {
    const off = await request(`${(await start()).url}/resources`, bearer('token-ci'));
    expect(off.status).toBe(401);
    expect(JSON.parse(off.body)).toMatchObject({ reason: 'machine-bind-disabled', message: expect.stringContaining('--machine-bind') });
    const h = await start({ machine });
    for (const path of ['/resources', '/bind?s=abc&c=c1&resource=postgresqlinstances&group=anynines.com']) {
      const bad = await request(`${h.url}${path}`, bearer('forged'));
      expect(bad.status, path).toBe(401);
      expect(bad.headers['content-type']).toBe('application/json');
      expect(bad.headers['www-authenticate']).toMatch(
        /^Bearer error="invalid_token", error_description="the access token is not for this backend"/,
      );
      expect(JSON.parse(bad.body)).toMatchObject({ reason: 'access-token-audience' });
    }
    // A message that is no header value (a typographic apostrophe, quotes) is made one: the server must not throw.
    const unicode = await request(`${h.url}/resources`, bearer('unicode'));
    expect(unicode.headers['www-authenticate']).toBe(
      `Bearer error="invalid_token", error_description="the token names another issuer than this backend's 'x' ' '"`,
    );
    expect(JSON.parse(unicode.body).message).toContain('backend’s');
    expect((await request(`${h.url}/export`)).status).toBe(200);
    expect(JSON.parse((await request(`${h.url}/resources`, { headers: { Authorization: 'Bearer ' } })).body)).toMatchObject({
      reason: 'access-token-malformed',
    });
    // Another scheme (a proxy's Basic) is no machine: the browser path answers, as before machine binding.
    const basic = await request(`${h.url}/resources?s=abc`, { headers: { Authorization: 'Basic Y2k6eA==' } });
    expect(basic.status).toBe(401);
    expect(basic.headers['content-type']).toMatch(/^text\/html/);
    expect(basic.body).toContain('This browser has no session abc');
    expect(h.provisioned).toEqual([]);
    expect(await h.metrics.getSingleMetricAsString('klutch_backend_authentication_failures_total')).toMatch(
      /reason="access-token-audience"\} 2/,
    );
  });

  it('/resources lists, as JSON, only what the machine may bind', async () => {
    const h = await start({ machine, rule });
    expect(JSON.parse((await request(`${h.url}/resources`, bearer('token-ci'))).body)).toEqual({
      items: [{ group: 'anynines.com', resource: 'postgresqlinstances', kind: 'PostgresqlInstance' }],
      hidden: 0,
    });
    expect(JSON.parse((await request(`${h.url}/resources`, bearer('token-other'))).body)).toEqual({ items: [], hidden: 1 });
  });

  it('/bind provisions system:client:<sub>#<c> for an allowed client (a person of sub ci is another consumer), and refuses another with a 403 naming the API and the client, audited', async () => {
    const h = await start({ machine, rule });
    const path = '/bind?s=abc&c=c9&resource=postgresqlinstances&group=anynines.com';
    const refused = await request(`${h.url}${path}`, bearer('token-other'));
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.body).message).toMatch(/^client other: only client "ci" may bind postgresqlinstances\.anynines\.com/);
    expect(h.provisioned).toEqual([]);
    expect(await h.metrics.getSingleMetricAsString('klutch_backend_bind_refusals_total')).toMatch(
      /api="postgresqlinstances\.anynines\.com",reason="not-allowed"\} 1/,
    );
    const audit = JSON.parse(
      h
        .log()
        .split('\n')
        .find((l) => l.includes('"event":"bind-refused"'))!,
    );
    expect(audit).toMatchObject({ audit: true, path: 'machine', clientId: 'other', subject: 'other', clusterId: 'c9' });
    // The allowed one reaches provisioning (the stand-in provisioner stops there), and a missing c is a 400.
    expect((await request(`${h.url}${path}`, bearer('token-ci'))).status).toBe(500);
    expect(h.provisioned).toEqual(['system:client:ci#c9']);
    const noCluster = await request(`${h.url}/bind?s=abc&resource=postgresqlinstances&group=anynines.com`, bearer('token-ci'));
    expect(noCluster.status).toBe(400);
    expect(JSON.parse(noCluster.body).message).toMatch(/^c is required/);
  });

  it('/resources offers an API of two versions in each, where the template of that version lets the caller bind it', async () => {
    const pinned = (name: string, version: string, rule?: Record<string, string>) =>
      ({
        metadata: { name, namespace: 't', ...(rule ? { annotations: rule } : {}) },
        spec: { APIServiceSelector: { ...template.spec.APIServiceSelector, version } },
      }) as unknown as APIServiceExportTemplate;
    const h = await start({
      machine,
      templates: [pinned('pg', 'v1'), pinned('pg-v2', 'v2', { 'klutch-kit.anynines.com/bind-allowed-clients': 'ci' })],
      crd: {
        spec: {
          ...crd.spec,
          versions: [
            { name: 'v1', served: true, storage: false, deprecated: true },
            { name: 'v2', served: true, storage: true },
          ],
        },
      },
    });
    const listed = async (token: string) => JSON.parse((await request(`${h.url}/resources`, bearer(token))).body).items;
    expect(await listed('token-ci')).toEqual([
      { group: 'anynines.com', resource: 'postgresqlinstances', kind: 'PostgresqlInstance', versions: ['v1', 'v2'] },
    ]);
    // v2's template names ci alone: another client is offered the default version only.
    expect(await listed('token-other')).toEqual([{ group: 'anynines.com', resource: 'postgresqlinstances', kind: 'PostgresqlInstance' }]);
    const page = await request(`${h.url}/resources?s=abc`, { headers: { Cookie: await sessionCookie(h, 'abc') } });
    expect(page.body).toContain(
      'class="bind postgresqlinstances" href="/bind?s=abc&amp;resource=postgresqlinstances&amp;group=anynines.com"',
    );
    // alice is no client: the default allows her v1 (deprecated), not v2.
    expect(page.body).toContain(
      'in <a class="bind-version" href="/bind?s=abc&amp;resource=postgresqlinstances&amp;group=anynines.com&amp;version=v1">v1</a> (deprecated)</li>',
    );
  });

  it('/bind takes a version the API serves, and names one it does not serve, or that is none, before anything is made', async () => {
    const h = await start({ machine });
    const bind = (version: string) =>
      request(`${h.url}/bind?s=abc&c=c9&resource=postgresqlinstances&group=anynines.com&version=${version}`, bearer('token-ci'));
    const unserved = await bind('v2');
    expect(unserved.status).toBe(404);
    expect(JSON.parse(unserved.body).message).toMatch(/exports postgresqlinstances\.anynines\.com in version v2 as a namespaced resource/);
    const bad = await bind('2');
    expect(bad.status).toBe(400);
    expect(JSON.parse(bad.body).message).toBe('version "2" is not a Kubernetes API version (v1, v2beta1, ...)');
    expect(h.provisioned).toEqual([]);
    expect((await bind('v1')).status).toBe(500); // provisioning reached (the stand-in stops there)
    expect(h.provisioned).toEqual(['system:client:ci#c9']);
  });
});
