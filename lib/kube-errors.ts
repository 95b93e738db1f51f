/**
 * What every caller asks of a Kubernetes API error (client-node's ApiException: `code`, and `body` with the API
 * server's Status): its HTTP status and the API server's message. The status is read through the `cause` chain, so
 * a 404 wrapped to name the object is still "not found" to whoever catches the wrap.
 */
import { findCause } from './errors';

const codeOf = (e: unknown): number | undefined => {
  const o = e as { code?: unknown; statusCode?: unknown } | null | undefined;
  const code = typeof o === 'object' && o ? (o.code ?? o.statusCode) : undefined;
  return typeof code === 'number' ? code : undefined;
};

/** The HTTP status of a failed call (of it, or of an error in its cause chain); undefined when it got no answer. */
export function statusOf(e: unknown): number | undefined {
  return codeOf(findCause(e, (c) => codeOf(c) !== undefined));
}

export const isNotFound = (e: unknown): boolean => statusOf(e) === 404;
export const isConflict = (e: unknown): boolean => statusOf(e) === 409;
export const isForbidden = (e: unknown): boolean => statusOf(e) === 403;
export const isUnauthorized = (e: unknown): boolean => statusOf(e) === 401;

/**
 * The message of anything thrown: for an API error the API server's own (its Status.message, else the body), for a
 * 401 without one what it means, else the error's message.
 */
export function messageOf(e: unknown): string {
  const body = (e as { body?: unknown } | null | undefined)?.body;
  let parsed: unknown = body;
  if (typeof body === 'string' && body) {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body;
    }
  }
  const msg = (parsed as { message?: unknown } | null | undefined)?.message;
  if (typeof msg === 'string' && msg) return msg;
  if (codeOf(e) === 401) return 'Unauthorized (401): the credentials were rejected';
  return e instanceof Error ? e.message : String(e);
}
