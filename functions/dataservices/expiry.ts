/**
 * Credentials with a lifetime (`Recipe.expiresAt`, `RelatedList.expiresAt`): a claim field holding an RFC 3339 time
 * after which the binding's credentials are revoked. The function reads the clock, so a run just after the time
 * revokes; Crossplane runs it again when the response's TTL ends (realtime compositions), which the function cuts to
 * the time left, so the revocation comes within a second of it rather than with the next poll. Pure but for `now`.
 */
import { get } from '../../lib/fieldpath';
import { ComposeError } from './compose';

type Obj = Record<string, unknown>;

/** A protobuf Duration, as the response's TTL. */
export interface Ttl {
  readonly seconds: number;
  readonly nanos: number;
}

/** The time at `path` of `o` in milliseconds, or undefined where there is none; throws for one that is not a time. */
export function expiryOf(o: Obj, path: string, where: string): number | undefined {
  const v = get(o, path);
  if (v === undefined || v === null || v === '') return undefined;
  const at = typeof v === 'string' ? Date.parse(v) : NaN;
  if (Number.isNaN(at)) throw new ComposeError(`cannot read ${path} ${where}: "${String(v)}" is not an RFC 3339 time`);
  return at;
}

/** `ttl`, or the time until `at` (a second past it) where that is sooner. */
export function ttlUntil(ttl: Ttl, at: number | undefined, now: number): Ttl {
  if (at === undefined || at <= now) return ttl;
  const seconds = Math.ceil((at - now) / 1000) + 1;
  return seconds < ttl.seconds ? { seconds, nanos: 0 } : ttl;
}
