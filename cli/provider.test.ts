import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkProvider, fetchProvider } from './provider';

// The body of Klutch's /export, byte for byte (key order of its Go struct).
const klutch = (version: string) =>
  `{"kind":"BindingProvider","apiVersion":"v1alpha1","providerPrettyName":"example","version":"${version}","authenticationMethods":[{"method":"OAuth2CodeGrant","oauth2CodeGrant":{"authenticatedURL":"https://bind.example/authorize"}}]}`;

let server: http.Server;
let base: string;
beforeAll(async () => {
  server = http.createServer((req, res) => {
    if (req.url === '/export') res.writeHead(200, { 'Content-Type': 'application/json' }).end(klutch('v1.5.0'));
    else res.writeHead(404).end('404 page not found');
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => server.close(() => r())));

describe('the BindingProvider', () => {
  it('accepts Klutch’s document, v0.0.0 (a development build) included', () => {
    expect(checkProvider('u', klutch('v0.4.0')).authenticatedUrl).toBe('https://bind.example/authorize');
    expect(checkProvider('u', klutch('v0.0.0')).document.providerPrettyName).toBe('example');
  });

  it('refuses what Klutch’s CLI refuses: a version below v0.3.0, another apiVersion, no OAuth2 login', () => {
    expect(() => checkProvider('u', klutch('v0.2.9'))).toThrow(/version v0.2.9; kubectl bind needs v0.3.0 or later/);
    expect(() => checkProvider('u', klutch('v1.0.0').replace('"v1alpha1"', '"klutch.anynines.com/v1alpha1"'))).toThrow(
      /not a BindingProvider of apiVersion v1alpha1/,
    );
    expect(() => checkProvider('u', klutch('v1.0.0').replace('OAuth2CodeGrant"', 'Password"'))).toThrow(/offers no OAuth2CodeGrant login/);
    expect(() => checkProvider('u', '<html>')).toThrow(/not JSON/);
  });

  it('reads the machine method where a backend offers it, after Klutch’s; Klutch’s document has none', () => {
    expect(checkProvider('u', klutch('v0.4.0')).machine).toBeUndefined();
    const machine = { issuerURL: 'https://idp.example', resource: 'https://bind.example', resourcesURL: 'r', bindURL: 'b' };
    const doc = klutch('v0.4.0').replace(
      '}}]}',
      `}},${JSON.stringify({ method: 'OAuth2ClientCredentials', oauth2ClientCredentials: machine })}]}`,
    );
    const p = checkProvider('u', doc);
    expect(p.machine).toEqual(machine);
    expect(p.authenticatedUrl).toBe('https://bind.example/authorize');
  });

  it('fetches it over HTTP, and says where /export is when given the backend’s root', async () => {
    expect((await fetchProvider(`${base}/export`)).document.version).toBe('v1.5.0');
    await expect(fetchProvider(base)).rejects.toMatchObject({
      message: expect.stringContaining('answered 404'),
      hint: expect.stringContaining(`kubectl bind ${base}/export`),
    });
    const closed = http.createServer();
    await new Promise<void>((r) => closed.listen(0, '127.0.0.1', r));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((r) => closed.close(() => r()));
    await expect(fetchProvider(`http://127.0.0.1:${port}/export`, { backoffMs: 10 })).rejects.toMatchObject({
      message: expect.stringMatching(
        new RegExp(`cannot reach the bind backend at http://127.0.0.1:${port}/export \\(4 tries\\): .*ECONNREFUSED`),
      ),
    });
  });

  it('tries again while the backend cuts connections or its proxy answers 503, as a replica being replaced does', async () => {
    let seen = 0;
    // Two connections cut before an answer (a proxy whose upstream is gone), a 503, then the document.
    const flaky = http.createServer((req, res) => {
      seen++;
      if (seen <= 2) req.socket.destroy();
      else if (seen === 3) res.writeHead(503).end('no endpoints');
      else res.writeHead(200, { 'Content-Type': 'application/json' }).end(klutch('v1.5.0'));
    });
    await new Promise<void>((r) => flaky.listen(0, '127.0.0.1', r));
    const url = `http://127.0.0.1:${(flaky.address() as AddressInfo).port}/export`;
    try {
      expect((await fetchProvider(url, { backoffMs: 10 })).document.version).toBe('v1.5.0');
      expect(seen).toBe(4);
      // One try fewer and the 503 is what it reports: it gives up, naming the answer.
      seen = 0;
      await expect(fetchProvider(url, { backoffMs: 10, attempts: 3 })).rejects.toMatchObject({
        message: expect.stringContaining('answered 503'),
      });
    } finally {
      await new Promise<void>((r) => flaky.close(() => r()));
    }
  });
});
