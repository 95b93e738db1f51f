import { describe, expect, it } from 'vitest';
import { callbackUrl } from './redirect';

describe('callbackUrl', () => {
  it('makes Klutch’s callback from a port', () => {
    expect(callbackUrl('8765', null)).toBe('http://localhost:8765/callback');
  });
  it.each(['http://localhost:1/callback', 'http://127.0.0.1:65535/x?y=1', 'http://[::1]:8080/callback'])('accepts %s', (u) => {
    expect(callbackUrl(null, u)).toBe(new URL(u).href);
  });
  it.each([
    ['https://localhost:8080/callback', 'not a loopback callback'],
    ['http://localhost/callback', 'not a loopback callback'],
    ['http://127.0.0.2.nip.io:80/', 'not a loopback callback'],
    ['http://10.0.0.1:8080/', 'not a loopback callback'],
    ['http://a@localhost:8080/', 'not a loopback callback'],
    ['file:///etc/passwd', 'not a loopback callback'],
    ['nonsense', 'is not a URL'],
  ])('refuses %s', (u, message) => {
    expect(() => callbackUrl(null, u)).toThrow(message);
  });
  it('refuses both, neither, and a bad port', () => {
    expect(() => callbackUrl('1', 'http://localhost:1/')).toThrow('not both');
    expect(() => callbackUrl(null, null)).toThrow('is required');
    expect(() => callbackUrl('70000', null)).toThrow('not a port number');
  });
});
