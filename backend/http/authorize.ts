/**
 * `GET /authorize?p=<port>|u=<url>&s=<sid>&c=<cid>`: starts a login. The callback must be on loopback; the browser
 * gets a flow cookie (browser id, PKCE verifier, nonce) and goes to the OpenID provider with a sealed state.
 */
import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import * as oidc from 'openid-client';
import type { HttpDeps } from './deps';
import { callbackUrl, RedirectError } from './redirect';
import { HttpError, redirect } from './respond';
import { checkId, cookieHeader, flowCookieName, STATE_TTL_MS, type Flow, type State } from './session';

export async function handleAuthorize(_req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps): Promise<void> {
  const q = url.searchParams;
  const sid = checkId('s', q.get('s'));
  const cid = checkId('c', q.get('c'));
  let redirectURL: string;
  try {
    redirectURL = callbackUrl(q.get('p'), q.get('u'));
  } catch (e) {
    if (e instanceof RedirectError) throw new HttpError(400, 'Refused callback', e.message, 'redirect-not-loopback');
    throw e;
  }
  if (!d.issuer.ready()) throw new HttpError(503, 'Login unavailable', `${d.issuer.reason()}. Try again in a minute.`);
  const ttl = d.stateTtlMs ?? STATE_TTL_MS;
  const flow: Flow = { bid: randomBytes(16).toString('base64url'), verifier: oidc.randomPKCECodeVerifier(), nonce: oidc.randomNonce() };
  const state: State = { bid: flow.bid, sid, cid, redirectURL, id: randomBytes(16).toString('base64url') };
  const sealedState = await d.sealer.seal('state', state, ttl);
  const to = await d.issuer.authorizationUrl({ state: sealedState, nonce: flow.nonce, codeVerifier: flow.verifier });
  const cookie = cookieHeader(flowCookieName(sid), await d.sealer.seal('flow', flow, ttl), {
    path: '/callback',
    maxAgeMs: ttl,
    secure: d.secureCookies,
  });
  redirect(res, to.href, [cookie]);
}
