/**
 * The machine path of /resources and /bind: a request with `Authorization: Bearer <access token>` instead of a
 * session cookie (kubectl bind --client-id, docs/decisions/machine-bind.md). The token is verified in full
 * (auth/access-token.ts) before anything else; answers are JSON, since a program reads them, and a refused token
 * gets `WWW-Authenticate: Bearer error="invalid_token"` (RFC 6750).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { AccessTokenError } from '../auth/access-token';
import type { BindIdentity } from '../authz/bind-policy';
import type { HttpDeps } from './deps';
import { HttpError, sendJson } from './respond';

/**
 * The bearer token of a request; undefined for a browser. Only the Bearer scheme makes a request a machine's: an
 * Authorization header of another scheme (Basic, added by an authenticating proxy in front of the backend) leaves the
 * browser path as it was.
 */
export function bearerToken(req: IncomingMessage): string | undefined {
  if (!isMachineRequest(req)) return undefined;
  const m = /^Bearer +([^\s]+) *$/i.exec(req.headers.authorization!);
  if (!m)
    throw new HttpError(
      401,
      'Unsupported authorization',
      'the Authorization header must be "Bearer <access token>" (the client-credentials grant of kubectl bind --client-id)',
      'access-token-malformed',
    );
  return m[1];
}

/** Whether a request is on the machine path (Authorization: Bearer): its errors are answered as JSON. */
export function isMachineRequest(req: IncomingMessage): boolean {
  return /^Bearer(\s|$)/i.test(req.headers.authorization ?? '');
}

/** The verified identity of a machine token, or a 401 naming what is wrong with it. */
export async function machineIdentity(d: HttpDeps, token: string): Promise<BindIdentity & { issuer: string; subject: string }> {
  if (!d.machine)
    throw new HttpError(
      401,
      'Machine binding is off',
      'this backend does not accept access tokens: its operator has not enabled machine binding (--machine-bind); bind with a browser, or ask the platform operator',
      'machine-bind-disabled',
    );
  try {
    const m = await d.machine.verifier.verify(token);
    return { issuer: m.issuer, subject: m.subject, clientId: m.clientId, groups: m.groups };
  } catch (e) {
    if (e instanceof AccessTokenError)
      throw new HttpError(e.reason === 'issuer-unavailable' ? 503 : 401, 'Access token refused', e.message, e.reason);
    throw e;
  }
}

/** An error as the machine path answers it: JSON with the title and the message, and the Bearer challenge on 401. */
export function sendMachineError(res: ServerResponse, e: HttpError): void {
  const headers: Record<string, string> = {};
  // RFC 6750 §3: error_description is printable ASCII without `"` and `\`; anything else in a header value would
  // make Node throw, and must not depend on what a message says.
  if (e.status === 401)
    headers['WWW-Authenticate'] =
      `Bearer error="invalid_token", error_description="${e.message.replace(/[^\x20\x21\x23-\x5b\x5d-\x7e]/g, "'")}"`;
  sendJson(res, e.status, { error: e.title, message: e.message, ...(e.authReason ? { reason: e.authReason } : {}) }, headers);
}
