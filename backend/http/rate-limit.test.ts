import type { IncomingMessage } from 'node:http';
import { describe, expect, it } from 'vitest';
import { clientKey, RateLimiter } from './rate-limit';
import { TrustedProxies } from './trusted-proxies';

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

describe('clientKey behind proxies (--login-rate-trusted-proxies)', () => {
  const req = (remoteAddress: string, xff?: string | string[]) =>
    ({ socket: { remoteAddress }, headers: xff === undefined ? {} : { 'x-forwarded-for': xff } }) as unknown as IncomingMessage;
  const proxies = new TrustedProxies(['10.0.0.0/8', 'fd00::/8', '192.0.2.7']);

  it('counts the client the trusted proxy names, not the proxy', () => {
    expect(clientKey(req('10.1.1.1', '198.51.100.4'), proxies)).toBe('198.51.100.4');
    expect(clientKey(req('::ffff:10.1.1.1', '2001:db8:1:2::9'), proxies)).toBe('2001:db8:1:2::/64');
    // Two proxies in a row: the rightmost address no trusted proxy holds.
    expect(clientKey(req('10.1.1.1', '198.51.100.4, 192.0.2.7'), proxies)).toBe('198.51.100.4');
    expect(clientKey(req('10.1.1.1', ['198.51.100.4', '10.9.9.9']), proxies)).toBe('198.51.100.4');
  });

  it('does not let a client choose its bucket: a header from an untrusted peer, or hops it wrote itself, are not read', () => {
    // Straight to the backend, a forged header changes nothing.
    expect(clientKey(req('203.0.113.5', '198.51.100.4'), proxies)).toBe('203.0.113.5');
    expect(clientKey(req('203.0.113.5', '198.51.100.4'))).toBe('203.0.113.5');
    // Through the proxy, what the client sent stands left of what the proxy appended.
    expect(clientKey(req('10.1.1.1', '198.51.100.99, 203.0.113.5'), proxies)).toBe('203.0.113.5');
    // Whatever the client wrote, the address the proxy appended (rightmost) is the one counted.
    expect(clientKey(req('10.1.1.1', 'junk, 203.0.113.5'), proxies)).toBe('203.0.113.5');
    // No header, or only garbage: the proxy itself.
    expect(clientKey(req('10.1.1.1'), proxies)).toBe('10.1.1.1');
    expect(clientKey(req('10.1.1.1', 'not-an-address'), proxies)).toBe('10.1.1.1');
  });

  it.each(['10.0.0.0/33', 'fd00::/129', 'example.com', '10.0.0.0/8/1', '10.0.0.0/x'])('refuses %s, naming it', (bad) => {
    expect(() => new TrustedProxies([bad])).toThrow(`"${bad}" is not an IP address or network`);
  });
});
