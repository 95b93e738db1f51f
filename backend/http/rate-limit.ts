/**
 * A token bucket per client address for the login endpoints (/authorize, /callback, /bind): each costs the backend
 * (a sealed state, a token-endpoint call, a provisioning), so one client may not make them faster than
 * `perMinute` after a `burst`. Memory is bounded: at most `maxClients` buckets, full ones dropped first.
 */
import type { IncomingMessage } from 'node:http';
import { isIP, isIPv6 } from 'node:net';
import { TokenBucket } from '../../controller';
import type { TrustedProxies } from './trusted-proxies';

export interface LoginRateLimit {
  /** Tokens added per minute; 0 turns the limit off. */
  readonly perMinute: number;
  /** Bucket size: requests a client may make at once. */
  readonly burst: number;
  /** @default 10000 */
  readonly maxClients?: number;
}

export class RateLimiter {
  /** Least recently used first (a Map keeps insertion order; a client is re-inserted on each request). */
  private readonly buckets = new Map<string, TokenBucket>();
  private readonly maxClients: number;

  constructor(private readonly o: LoginRateLimit) {
    this.maxClients = o.maxClients ?? 10_000;
  }

  /** Takes a token for `client`: 0 when granted, else the milliseconds until one is there. */
  take(client: string, now = Date.now()): number {
    if (this.o.perMinute <= 0) return 0;
    const b = this.buckets.get(client) ?? new TokenBucket({ qps: this.o.perMinute / 60, burst: this.o.burst }, now);
    this.buckets.delete(client);
    this.buckets.set(client, b);
    const wait = b.tryTake(now);
    if (this.buckets.size > this.maxClients) this.prune(now);
    return wait;
  }

  get size(): number {
    return this.buckets.size;
  }

  /** Drops full buckets (no different from a new one), then the least recently used, down to maxClients. */
  private prune(now: number): void {
    for (const [k, b] of this.buckets) if (b.full(now)) this.buckets.delete(k);
    for (const k of this.buckets.keys()) {
      if (this.buckets.size <= this.maxClients) break;
      this.buckets.delete(k);
    }
  }
}

/** A client address as the limiter keys it: an IPv4-mapped address as IPv4; IPv6 by its /64, which one host usually holds whole. */
function addressKey(address: string): string {
  const a = address.replace(/^::ffff:(?=\d+\.)/, '');
  if (!isIPv6(a)) return a;
  const [head = '', tail = ''] = a.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const groups = a.includes('::') ? [...h, ...Array<string>(8 - h.length - t.length).fill('0'), ...t] : h;
  return `${groups
    .slice(0, 4)
    .map((g) => g.toLowerCase().replace(/^0+(?=.)/, ''))
    .join(':')}::/64`;
}

/**
 * The client a request counts against: its peer address. Behind a proxy that is the proxy, and all its users would
 * share one bucket; for a peer among `trusted`, the client is the rightmost X-Forwarded-For entry no trusted proxy
 * holds. Each proxy appends the address it was reached from, so entries left of that one are the client's own words:
 * a client cannot pick its bucket by sending the header, and one from an untrusted peer is never read.
 */
export function clientKey(req: IncomingMessage, trusted?: TrustedProxies): string {
  let client = req.socket.remoteAddress ?? 'unknown';
  if (trusted?.has(client)) {
    const header = req.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',').map((h) => h.trim());
    for (let i = hops.length - 1; i >= 0; i--) {
      if (!isIP(hops[i]!)) break;
      client = hops[i]!;
      if (!trusted.has(client)) break;
    }
  }
  return addressKey(client);
}
