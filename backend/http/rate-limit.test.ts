import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientKey, RateLimiter } from './rate-limit';

describe('RateLimiter', () => {
  it('grants a burst, then one token per 60/perMinute seconds, per client', () => {
    const l = new RateLimiter({ perMinute: 60, burst: 2 });
    expect([l.take('a', 0), l.take('a', 0)]).toEqual([0, 0]);
    expect(l.take('a', 0)).toBe(1000);
    expect(l.take('b', 0)).toBe(0); // another client has its own bucket
    expect(l.take('a', 400)).toBe(600);
    expect(l.take('a', 1000)).toBe(0);
    expect(l.take('a', 1000)).toBe(1000);
    expect(l.take('a', 60_000)).toBe(0); // refilled, capped at the burst
    expect(l.take('a', 60_000)).toBe(0);
    expect(l.take('a', 60_000)).toBeGreaterThan(0);
  });

  it('is off with perMinute 0', () => {
    const l = new RateLimiter({ perMinute: 0, burst: 1 });
    for (let i = 0; i < 100; i++) expect(l.take('a')).toBe(0);
    expect(l.size).toBe(0);
  });

  it('keeps at most maxClients buckets', () => {
    const l = new RateLimiter({ perMinute: 1, burst: 5, maxClients: 100 });
    for (let i = 0; i < 1000; i++) l.take(`c${i}`, 0);
    expect(l.size).toBeLessThanOrEqual(100);
    // The most recent client is still limited by its own bucket.
    for (let i = 0; i < 4; i++) expect(l.take('c999', 0)).toBe(0);
    expect(l.take('c999', 0)).toBeGreaterThan(0);
  });
});

describe('clientKey', () => {
  const req = (remoteAddress: string) => ({ socket: { remoteAddress } }) as unknown as IncomingMessage;
  it('is the IPv4 address (also when mapped into IPv6) and the /64 of an IPv6 one', () => {
    expect(clientKey(req('10.1.2.3'))).toBe('10.1.2.3');
    expect(clientKey(req('::ffff:10.1.2.3'))).toBe('10.1.2.3');
    expect(clientKey(req('2001:db8:0:1:aaaa::1'))).toBe('2001:db8:0:1::/64');
    expect(clientKey(req('2001:db8:0:1:bbbb:cccc:dddd:eeee'))).toBe('2001:db8:0:1::/64');
    expect(clientKey(req('2001:db8::1'))).toBe('2001:db8:0:0::/64');
    expect(clientKey(req('::1'))).toBe('0:0:0:0::/64');
  });
});
