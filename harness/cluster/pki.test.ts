import { once } from 'node:events';
import { connect } from 'node:tls';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCa } from './pki';

describe('test PKI', () => {
  it('issues a server certificate that Node verifies against the CA for its IP SAN, and client certificates with CN and O', async () => {
    const ca = await createCa();
    const server = await ca.issue({ commonName: 'server', ips: ['127.0.0.1'], dnsNames: ['localhost'] });
    const client = await ca.issue({ commonName: 'crossplane', organizations: ['system:masters'], usages: ['client'] });
    expect(new X509Certificate(server.cert).verify(new X509Certificate(ca.cert).publicKey)).toBe(true);
    expect(new X509Certificate(server.cert).subjectAltName).toBe('IP Address:127.0.0.1, DNS:localhost');
    expect(new X509Certificate(client.cert).subject).toBe('CN=crossplane\nO=system:masters');

    const seen: (string | undefined)[] = [];
    const https = createServer({ ...server, ca: ca.cert, requestCert: true, rejectUnauthorized: true }, (req, res) => {
      seen.push(String((req.socket as import('node:tls').TLSSocket).getPeerCertificate().subject?.CN));
      res.end('ok');
    });
    https.listen(0, '127.0.0.1');
    await once(https, 'listening');
    const { port } = https.address() as AddressInfo;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const s = connect({ host: '127.0.0.1', port, ca: ca.cert, cert: client.cert, key: client.key }, () => {
          s.write('GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n');
        });
        let out = '';
        s.on('data', (d: Buffer) => (out += d.toString()));
        s.on('end', () => resolve(out));
        s.on('error', reject);
      });
      expect(body).toContain('ok');
      expect(seen).toEqual(['crossplane']);
      // A client without a certificate from this CA is refused by the mTLS server.
      const other = await (await createCa('other')).issue({ commonName: 'mallory', usages: ['client'] });
      await expect(
        new Promise((resolve, reject) => {
          const s = connect({ host: '127.0.0.1', port, ca: ca.cert, ...other }, () => s.write('GET / HTTP/1.1\r\nHost: x\r\n\r\n'));
          s.on('data', resolve);
          s.on('error', reject);
          s.on('end', () => reject(new Error('closed')));
        }),
      ).rejects.toThrow();
    } finally {
      https.close();
    }
  });
});
