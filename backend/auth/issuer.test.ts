import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import type { RequestListener } from 'node:http';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { createCa } from '../../harness/cluster/pki';
import { groupsOf, Issuer, ISSUER_CONNECTIONS } from './issuer';

describe('groupsOf', () => {
  it.each([
    { claim: ['dba', 'devs'], groups: ['dba', 'devs'] },
    { claim: 'dba', groups: ['dba'] },
    { claim: ['dba', 'dba', '', 7, { name: 'x' }], groups: ['dba'] },
    { claim: undefined, groups: [] },
    { claim: '', groups: [] },
    { claim: { dba: true }, groups: [] },
  ])('$claim → $groups', ({ claim, groups }) => {
    expect(groupsOf(claim)).toEqual(groups);
  });
});

/**
 * An OpenID provider stand-in on TLS of a test CA (`handle` answers its requests) and an Issuer pointed at it; `close`
 * ends both and removes the CA file.
 */
async function issuerAgainst(handle: RequestListener) {
  const ca = await createCa('issuer test CA');
  const pair = await ca.issue({ commonName: '127.0.0.1', ips: ['127.0.0.1'] });
  const server = createServer({ cert: pair.cert, key: pair.key }, handle);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const dir = mkdtempSync(join(tmpdir(), 'issuer-test-'));
  writeFileSync(join(dir, 'ca.crt'), ca.cert);
  const url = `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const issuer = new Issuer({
    issuerUrl: url,
    clientId: 'c',
    clientSecret: 's',
    callbackUrl: 'http://127.0.0.1/callback',
    caFile: join(dir, 'ca.crt'),
    log: pino({ level: 'silent' }),
  });
  const close = async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
    rmSync(dir, { recursive: true, force: true });
  };
  return { server, url, issuer, close };
}

describe('Issuer.fetch', () => {
  it(`reaches the provider over at most ${ISSUER_CONNECTIONS} kept connections, however many requests are in flight`, async () => {
    let connections = 0;
    const { server, url, issuer, close } = await issuerAgainst((_req, res) => {
      setTimeout(() => res.writeHead(200, { 'content-type': 'application/json' }).end('{}'), 5);
    });
    server.on('secureConnection', () => connections++);
    try {
      const codes = await Promise.all(
        Array.from({ length: 40 }, () => issuer.fetch(`${url}/token`, { method: 'POST' }).then((r) => r.status)),
      );
      expect(codes).toEqual(Array.from({ length: 40 }, () => 200));
      expect(connections).toBeGreaterThan(0);
      expect(connections).toBeLessThanOrEqual(ISSUER_CONNECTIONS);
    } finally {
      await close();
    }
  });
});

describe('Issuer.fetch on a kept connection the provider closes', () => {
  it('sends the request again on a new connection (a token request is a POST, which undici does not retry)', async () => {
    const bodies: string[] = [];
    let resets = 0;
    // Answers a connection's first request; resets it on the second, as a keep-alive timeout closing it would.
    const { url, issuer, close } = await issuerAgainst((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        bodies.push(Buffer.concat(chunks).toString());
        const socket = req.socket as typeof req.socket & { served?: number };
        socket.served = (socket.served ?? 0) + 1;
        if (socket.served > 1) return void (resets++, socket.destroy());
        res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      });
    });
    try {
      const answers: unknown[] = [];
      // One after the other: undici spreads them over new and kept connections, and every kept one is reset.
      for (let i = 0; i < 6; i++)
        answers.push(await issuer.fetch(`${url}/token`, { method: 'POST', body: 'code=x' }).then((r) => r.json()));
      expect(answers).toEqual(Array.from({ length: 6 }, () => ({ ok: true })));
      expect(resets).toBeGreaterThan(0);
      expect(bodies).toEqual(Array.from({ length: 6 + resets }, () => 'code=x'));
    } finally {
      await close();
    }
  });
});
