/**
 * `GET /callback?code&state` (or `?error&error_description&state`): finishes a login. The state must be ours, not
 * expired, not used before, and belong to this browser's flow cookie; the code is exchanged with PKCE and the ID
 * token verified in full. Only then the session cookie `klutch-bind-<sid>` is set and the browser sent to
 * `/resources?s=<sid>` (a relative Location, as Klutch's).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { LoginError } from '../auth/issuer';
import { SealError } from '../auth/sealer';
import { bindRule } from '../authz/bind-policy';
import type { HttpDeps } from './deps';
import { HttpError, redirect } from './respond';
import {
  clearCookieHeader,
  cookieHeader,
  flowCookieName,
  requestCookie,
  SESSION_TTL_MS,
  sessionCookieName,
  type Flow,
  type Session,
  type State,
} from './session';

const AGAIN = 'Run kubectl bind again to start a new login.';

/**
 * Our words for the OpenID provider's `error` codes (RFC 6749 4.1.2.1, OpenID Connect Core 3.1.2.6). The provider's
 * `error_description`, and an unknown code, are never shown: anyone can send a browser to /callback with any text,
 * and our origin would vouch for it.
 */
const IDP_ERRORS: Readonly<Record<string, string>> = {
  access_denied: 'The login was declined at the OpenID provider.',
  login_required: 'The OpenID provider needs you to log in.',
  interaction_required: 'The OpenID provider needs you to complete the login in its page.',
  consent_required: 'The OpenID provider needs your consent for this backend.',
  account_selection_required: 'The OpenID provider needs you to choose an account.',
  temporarily_unavailable: 'The OpenID provider is temporarily unavailable; try again in a minute.',
  server_error: 'The OpenID provider failed.',
  invalid_request: 'The OpenID provider refused the login request.',
  unauthorized_client: 'The OpenID provider does not let this backend log users in; tell the platform operator.',
  unsupported_response_type: 'The OpenID provider does not support this login; tell the platform operator.',
  invalid_scope: 'The OpenID provider refused the requested scopes; tell the platform operator.',
};

export async function handleCallback(req: IncomingMessage, res: ServerResponse, url: URL, d: HttpDeps): Promise<void> {
  const q = url.searchParams;
  const idpError = q.get('error');
  if (idpError) {
    const known = Object.hasOwn(IDP_ERRORS, idpError);
    d.log.info({ error: idpError.slice(0, 64), description: q.get('error_description')?.slice(0, 200) }, 'OpenID provider error');
    throw new HttpError(
      401,
      'Login refused by the OpenID provider',
      `${known ? IDP_ERRORS[idpError] : 'The OpenID provider ended the login with an error.'} ${AGAIN}`,
      'idp-error',
    );
  }
  const code = q.get('code');
  const sealedState = q.get('state');
  if (!code || !sealedState)
    throw new HttpError(
      400,
      'Incomplete login',
      `The callback needs code and state from the OpenID provider. ${AGAIN}`,
      'callback-incomplete',
    );

  let state: State;
  try {
    state = await d.sealer.open<State>('state', sealedState);
  } catch (e) {
    const reason = e instanceof SealError ? e.reason : 'invalid';
    throw new HttpError(
      400,
      'Login refused',
      `The login's state ${reason === 'expired' ? 'has expired (logins last 10 minutes)' : 'is not one this backend issued'}. ${AGAIN}`,
      `state-${reason}`,
    );
  }
  const flowValue = requestCookie(req, flowCookieName(state.sid));
  let flow: Flow | undefined;
  try {
    flow = flowValue ? await d.sealer.open<Flow>('flow', flowValue) : undefined;
  } catch {
    flow = undefined;
  }
  if (!flow || flow.bid !== state.bid) {
    throw new HttpError(
      400,
      'Login refused',
      `This login was started in another browser (or already finished here). ${AGAIN}`,
      'state-other-browser',
    );
  }
  if (!d.replay.use(state.id, Number(state.exp ?? 0) * 1000)) {
    throw new HttpError(400, 'Login refused', `This login was already used. ${AGAIN}`, 'state-replayed');
  }
  const clearFlow = clearCookieHeader(flowCookieName(state.sid), '/callback', d.secureCookies);
  let identity;
  const started = performance.now();
  try {
    identity = await d.issuer.exchange(q, { state: sealedState, nonce: flow.nonce, codeVerifier: flow.verifier });
  } catch (e) {
    if (e instanceof LoginError) {
      const status = e.reason === 'issuer-unavailable' ? 503 : 401;
      throw new HttpError(status, 'Login refused', `${e.message}. ${AGAIN}`, e.reason, { cause: e });
    }
    throw e;
  }
  const session: Session = {
    iss: identity.issuer,
    sub: identity.subject,
    groups: [...identity.groups],
    sid: state.sid,
    cid: state.cid,
    redirectURL: state.redirectURL,
  };
  const sealed = await sealSession(d, session);
  const cookie = cookieHeader(sessionCookieName(state.sid), sealed, {
    path: '/',
    maxAgeMs: SESSION_TTL_MS,
    secure: d.secureCookies,
  });
  d.log.info(
    {
      sub: identity.subject,
      groups: identity.groups.length,
      sid: state.sid,
      cid: state.cid,
      exchangeMs: Math.round(performance.now() - started),
    },
    'login verified',
  );
  redirect(res, `/resources?s=${encodeURIComponent(state.sid)}`, [cookie, clearFlow]);
}

/** Browsers keep cookies up to 4096 bytes (name and attributes included). */
const MAX_SESSION_VALUE = 3800;

/**
 * The sealed session. A user in hundreds of groups would not fit a cookie: then only the groups some template's rule
 * names are kept (all that mayBind can use; a rule changed later needs a new login), and a login that still does not
 * fit is refused with a page saying so rather than with a cookie the browser drops.
 */
async function sealSession(d: HttpDeps, session: Session): Promise<string> {
  const sealed = await d.sealer.seal('session', session, SESSION_TTL_MS);
  if (sealed.length <= MAX_SESSION_VALUE) return sealed;
  const named = new Set<string>();
  for (const t of await d.exportables.templates()) {
    const rule = bindRule(t);
    if (rule && !(rule instanceof Error)) rule.groups.forEach((g) => named.add(g));
  }
  const kept = (session.groups ?? []).filter((g) => named.has(g));
  d.log.info({ sub: session.sub, groups: session.groups?.length, kept: kept.length }, 'session keeps only the groups rules name');
  const narrowed = await d.sealer.seal('session', { ...session, groups: kept }, SESSION_TTL_MS);
  if (narrowed.length <= MAX_SESSION_VALUE) return narrowed;
  throw new HttpError(
    400,
    'Login too large',
    `Your login carries more than a session cookie holds (${kept.length} groups that bind rules name). Tell the platform operator: the rules on the APIServiceExportTemplates name too many groups.`,
    'session-too-large',
  );
}
