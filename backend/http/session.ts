/**
 * The three sealed values of a login (see auth/sealer.ts), and the cookies that carry two of them:
 *
 * - flow cookie `klutch-bind-flow-<sid>` (set by /authorize, Path=/callback, 10 minutes): a random browser id, the
 *   PKCE verifier and the nonce. Cleared by /callback, so a state works once per browser.
 * - state (through the OpenID provider, 10 minutes): the same browser id, sid, cid, the callback URL and a random id
 *   for the replay guard. Only our /callback reads it, so its format is ours (Klutch's is unsigned base64 JSON).
 * - session cookie `klutch-bind-<sid>` (Klutch's name, Path=/, 1 hour): the verified identity (issuer, subject and
 *   groups), sid, cid and callback.
 *
 * Cookies are HttpOnly and SameSite=Lax (the callback is a top-level navigation from the provider, which Lax lets
 * through), and Secure whenever browsers reach the backend over HTTPS.
 */
import type { IncomingMessage } from 'node:http';
import { parseCookie, stringifySetCookie } from 'cookie';
import { SealError, type Sealer } from '../auth/sealer';
import type { BindIdentity } from '../authz/bind-policy';
import { HttpError } from './respond';

export const STATE_TTL_MS = 10 * 60_000;
export const SESSION_TTL_MS = 60 * 60_000;

export interface Flow extends Record<string, unknown> {
  bid: string;
  verifier: string;
  nonce: string;
}

export interface State extends Record<string, unknown> {
  bid: string;
  sid: string;
  cid: string;
  redirectURL: string;
  id: string;
}

export interface Session extends Record<string, unknown> {
  iss: string;
  sub: string;
  /** The verified ID token's groups (missing in a session sealed before groups were kept: none). */
  groups?: string[];
  sid: string;
  cid: string;
  redirectURL: string;
}

export const flowCookieName = (sid: string) => `klutch-bind-flow-${sid}`;
export const sessionCookieName = (sid: string) => `klutch-bind-${sid}`;

export function cookieHeader(name: string, value: string, o: { path: string; maxAgeMs: number; secure: boolean }): string {
  return stringifySetCookie({
    name,
    value,
    path: o.path,
    maxAge: Math.floor(o.maxAgeMs / 1000),
    httpOnly: true,
    sameSite: 'lax',
    secure: o.secure,
  });
}

export function clearCookieHeader(name: string, path: string, secure: boolean): string {
  return stringifySetCookie({ name, value: '', path, maxAge: 0, httpOnly: true, sameSite: 'lax', secure });
}

export function requestCookie(req: IncomingMessage, name: string): string | undefined {
  return parseCookie(req.headers.cookie ?? '')[name];
}

/** Session ids and cluster ids: Klutch's are 6 base62 characters; anything cookie- and label-safe is accepted. */
export function checkId(param: string, v: string | null): string {
  if (!v)
    throw new HttpError(
      400,
      'Missing parameter',
      `${param} is required (the ${param === 's' ? 'session' : 'cluster'} id kubectl bind sends)`,
    );
  if (!/^[A-Za-z0-9]{1,64}$/.test(v)) throw new HttpError(400, 'Bad parameter', `${param}: "${v}" is not 1 to 64 letters and digits`);
  return v;
}

/** The verified session of `sid`, or a 401 page saying how to log in again. */
export async function readSession(req: IncomingMessage, sealer: Sealer, sid: string): Promise<Session> {
  const value = requestCookie(req, sessionCookieName(sid));
  const again = 'Run kubectl bind again to log in.';
  if (!value) throw new HttpError(401, 'Not logged in', `This browser has no session ${sid}. ${again}`, 'session-missing');
  try {
    const s = await sealer.open<Session>('session', value);
    if (s.sid !== sid) throw new SealError('invalid', 'belongs to another session');
    return s;
  } catch (e) {
    const reason = e instanceof SealError ? e.reason : 'invalid';
    throw new HttpError(
      401,
      'Not logged in',
      `The session cookie ${reason === 'expired' ? 'has expired' : 'is not valid'}. ${again}`,
      `session-${reason}`,
    );
  }
}

/** Who the session is, for mayBind: a browser login is a person, never a machine client. */
export function sessionIdentity(s: Session): BindIdentity & { issuer: string; subject: string } {
  return { issuer: s.iss, subject: s.sub, groups: Array.isArray(s.groups) ? s.groups : [] };
}
