/**
 * The process behind harness/login/oidc.ts: a real `oidc-provider` on loopback HTTPS, configured from the JSON in
 * `$OIDC_TEST_CONFIG`. Logins complete by themselves (the user named by the `oidc-test-user` cookie on the issuer's
 * origin, else the first user) and consent is implied for every client, so a browser or an HTTP client following
 * redirects gets from the authorization endpoint back to the client's redirect URI without a form. With `loginForm`
 * and no such cookie, the interaction page is a sign-in form instead (a user name and "Sign in"), for a browser test
 * that logs in on the provider's page as a person does.
 *
 * A user's `groups` are claim `groups` of scope `groups`, in the ID token. A user may carry an `idTokenFault`: the ID token of the token endpoint's answer is then re-signed with one thing
 * wrong (a foreign key, issuer, audience, expiry or nonce), so a client's verification can be shown to refuse it.
 * Everything else (codes, PKCE, JWKS, discovery) is the library's own behaviour.
 *
 * A `machine` client has the client-credentials grant for the `resourceServers` (JWT access tokens, typ at+jwt, with
 * the client's `groups`); with `accessTokenFault` its access tokens are re-signed with one thing wrong, as ID tokens are.
 *
 * `GET /test/token-requests` answers how many requests the token endpoint has had (a test shows that junk callbacks
 * cost the provider nothing).
 */
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { type CryptoKey, decodeJwt, exportJWK, generateKeyPair, SignJWT, type JWK } from 'jose';
import Provider, { errors, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { OidcServerConfig } from './oidc';

const config = JSON.parse(process.env.OIDC_TEST_CONFIG ?? '') as OidcServerConfig;
const USER_COOKIE = 'oidc-test-user';
const KID = 'test-signing-key';

// Exit with the test runner: this process has no other owner.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) process.exit(0);
}, 500).unref();

const signing = await generateKeyPair('RS256', { extractable: true });
// The foreign key of a 'signature' fault, made when first needed: an RSA key costs about 0.2 s of CPU, and most
// providers have no faulty user or client.
let forged: Promise<CryptoKey> | undefined;
const forgedKey = () => (forged ??= generateKeyPair('RS256').then((k) => k.privateKey));
const privateJwk: JWK = { ...(await exportJWK(signing.privateKey)), kid: KID, alg: 'RS256', use: 'sig' };
const users = new Map(config.users.map((u) => [u.sub, u]));
const machines = new Map(config.clients.filter((c) => c.machine).map((c) => [c.clientId, c.machine!]));

const configuration: Configuration = {
  clients: config.clients.map((c) => ({
    client_id: c.clientId,
    client_secret: c.clientSecret,
    redirect_uris: [...c.redirectUris],
    grant_types: c.machine ? ['client_credentials'] : ['authorization_code'],
    response_types: c.machine ? [] : ['code'],
    token_endpoint_auth_method: 'client_secret_basic',
  })),
  // Machine clients: the client-credentials grant for a registered resource, JWT access tokens (RFC 9068) whose
  // audience the resource names, with the client's groups.
  ...(config.resourceServers.length
    ? {
        extraTokenClaims: (_ctx: KoaContextWithOIDC, token: { clientId?: string }) => {
          const groups = machines.get(String(token.clientId))?.groups;
          return groups ? { groups: [...groups] } : undefined;
        },
      }
    : {}),
  jwks: { keys: [privateJwk] },
  cookies: { keys: [config.cookieKey] },
  // Scope `groups` carries claim `groups`, as Dex has it; claims of the granted scopes go into the ID token too (as
  // Keycloak and Dex put them there), not only into userinfo.
  claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'], groups: ['groups'] },
  conformIdTokenClaims: false,
  // The client under test must send PKCE: the provider refuses an authorization request without it.
  pkce: { required: () => true },
  features: {
    devInteractions: { enabled: false },
    ...(config.resourceServers.length
      ? {
          clientCredentials: { enabled: true },
          resourceIndicators: {
            enabled: true,
            useGrantedResource: () => false,
            getResourceServerInfo: (_ctx, resource) => {
              const rs = config.resourceServers.find((r) => r.resource === resource);
              if (!rs) throw new errors.InvalidTarget(`no resource server ${resource}`);
              return {
                scope: 'bind',
                audience: rs.audience,
                accessTokenFormat: 'jwt',
                accessTokenTTL: 600,
                jwt: { sign: { alg: 'RS256' } },
              };
            },
          },
        }
      : {}),
  },
  interactions: { url: (_ctx, interaction) => `/interaction/${interaction.uid}` },
  findAccount: (_ctx, sub) => {
    const u = users.get(sub);
    if (!u) return undefined;
    return {
      accountId: sub,
      claims: () => ({
        sub,
        email: u.email ?? `${sub}@example.test`,
        email_verified: true,
        name: u.name ?? sub,
        ...(u.groups ? { groups: [...u.groups] } : {}),
      }),
    };
  },
  // First-party test clients: consent is implied, with every scope asked for.
  loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
    const { client, session, params } = ctx.oidc;
    if (!client || !session?.accountId) return undefined;
    const existing = ctx.oidc.result?.consent?.grantId ?? session.grantIdFor(client.clientId);
    if (existing) return ctx.oidc.provider.Grant.find(existing);
    const grant = new ctx.oidc.provider.Grant({ clientId: client.clientId, accountId: session.accountId });
    grant.addOIDCScope(String(params?.scope ?? 'openid'));
    await grant.save();
    return grant;
  },
  renderError: (ctx, out) => {
    ctx.type = 'text/plain';
    ctx.body = `${out.error}: ${out.error_description ?? ''}\n`;
  },
};

const provider = new Provider(config.issuer, configuration);

const escapeHtml = (t: string) => t.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const loginPage = (uid: string, error?: string) =>
  '<!doctype html><html><head><meta charset="utf-8"><title>Sign in: klutch-kit test OpenID provider</title></head><body>' +
  '<h1>Sign in</h1>' +
  (error ? `<p class="error">${escapeHtml(error)}</p>` : '') +
  `<form method="post" action="/interaction/${escapeHtml(uid)}/login">` +
  '<label for="login">User name</label> <input id="login" name="login" autocomplete="username" autofocus> ' +
  '<button type="submit">Sign in</button></form></body></html>';

/** The url-encoded body of a form post (koa, as oidc-provider embeds it, parses none). */
async function formBody(req: NodeJS.ReadableStream): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(Buffer.from(c as Buffer));
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

// The interaction page finishes the login as the chosen user and sends the browser on: the user named by the
// cookie, else (with `loginForm`) the one typed into the form, else the first user.
provider.use(async (ctx, next) => {
  if (!ctx.path.startsWith('/interaction/')) return next();
  const details = await provider.interactionDetails(ctx.req, ctx.res);
  let sub = ctx.cookies.get(USER_COOKIE, { signed: false });
  if (config.loginForm && details.prompt.name === 'login' && sub === undefined) {
    if (ctx.method !== 'POST') {
      ctx.type = 'html';
      ctx.body = loginPage(details.uid);
      return;
    }
    sub = (await formBody(ctx.req)).get('login')?.trim() ?? '';
    if (!users.has(sub)) {
      ctx.status = 200;
      ctx.type = 'html';
      ctx.body = loginPage(details.uid, `No user "${sub}".`);
      return;
    }
  }
  sub ??= config.users[0]?.sub;
  if (!sub || !users.has(sub)) {
    ctx.status = 400;
    ctx.body = `no test user "${sub ?? ''}"`;
    return;
  }
  const result = details.prompt.name === 'login' ? { login: { accountId: sub } } : {};
  ctx.redirect(await provider.interactionResult(ctx.req, ctx.res, result, { mergeWithLastSubmission: false }));
});

let tokenRequests = 0;
provider.use(async (ctx, next) => {
  if (ctx.path === '/token') tokenRequests++;
  if (ctx.path !== '/test/token-requests') return next();
  ctx.type = 'application/json';
  ctx.body = { tokenRequests };
});

// ID token faults: re-sign the token endpoint's ID token with one thing wrong.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path !== '/token' || ctx.status !== 200) return;
  const body = ctx.body as { id_token?: string } | undefined;
  if (!body?.id_token) return;
  const claims = decodeJwt(body.id_token);
  const fault = users.get(String(claims.sub))?.idTokenFault;
  if (!fault) return;
  const now = Math.floor(Date.now() / 1000);
  const changed = { ...claims };
  if (fault === 'issuer') changed.iss = 'https://issuer.invalid';
  if (fault === 'audience') changed.aud = 'another-client';
  if (fault === 'expired') Object.assign(changed, { iat: now - 7200, exp: now - 3600 });
  if (fault === 'nonce') changed.nonce = 'not-the-nonce-that-was-sent';
  const key = fault === 'signature' ? await forgedKey() : signing.privateKey;
  body.id_token = await new SignJWT(changed).setProtectedHeader({ alg: 'RS256', kid: KID, typ: 'JWT' }).sign(key);
});

// Access token faults: re-sign a faulty machine client's access token with one thing wrong.
provider.use(async (ctx, next) => {
  await next();
  if (ctx.path !== '/token' || ctx.status !== 200) return;
  const body = ctx.body as { access_token?: string } | undefined;
  if (!body?.access_token || body.access_token.split('.').length !== 3) return;
  const claims = decodeJwt(body.access_token);
  const fault = machines.get(String(claims.client_id))?.accessTokenFault;
  if (!fault) return;
  const now = Math.floor(Date.now() / 1000);
  const changed = { ...claims };
  if (fault === 'issuer') changed.iss = 'https://issuer.invalid';
  if (fault === 'expired') Object.assign(changed, { iat: now - 7200, exp: now - 3600 });
  const key = fault === 'signature' ? await forgedKey() : signing.privateKey;
  const typ = fault === 'type' ? 'JWT' : 'at+jwt';
  body.access_token = await new SignJWT(changed).setProtectedHeader({ alg: 'RS256', kid: KID, typ }).sign(key);
});

const server = createServer({ cert: readFileSync(config.certFile), key: readFileSync(config.keyFile) }, provider.callback());
server.listen(config.port, '127.0.0.1', () => console.log(`oidc-provider listening at ${config.issuer}`));
process.on('SIGTERM', () => server.close(() => process.exit(0)));
