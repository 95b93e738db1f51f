import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { createCa } from '../../harness/cluster/pki';
import { authorities, clientCertificateProblem } from './client-certificate';

const der = (pem: string) => new X509Certificate(pem).raw;

describe('clientCertificateProblem', async () => {
  const ca = await createCa('Crossplane');
  const other = await createCa('other');
  const client = await ca.issue({ commonName: 'Crossplane', usages: ['client'] });
  const server = await ca.issue({ commonName: 'server', usages: ['server'], dnsNames: ['x'] });
  const foreign = await other.issue({ commonName: 'Crossplane', usages: ['client'] });
  const cas = authorities(ca.cert + other.cert);

  it.each([
    { name: 'a client certificate of a CA of the bundle', cert: client.cert, want: undefined },
    { name: 'a certificate of another CA of the bundle', cert: foreign.cert, want: undefined },
  ])('accepts $name', ({ cert, want }) => {
    expect(clientCertificateProblem(cas, der(cert))).toBe(want);
  });

  it('refuses no certificate, one no CA of the bundle signed, a server-only one and an expired one', () => {
    expect(clientCertificateProblem(cas, undefined)).toMatch(/^no client certificate/);
    expect(clientCertificateProblem([cas[0]!], der(foreign.cert))).toMatch(/not signed by a CA of ca\.crt/);
    expect(clientCertificateProblem(cas, der(server.cert))).toBe('the certificate is not for client authentication');
    expect(clientCertificateProblem(cas, der(client.cert), new Date(Date.now() + 3 * 86_400_000))).toMatch(/not valid now/);
  });

  it('reads every certificate of a PEM bundle and refuses an empty one', () => {
    expect(cas).toHaveLength(2);
    expect(() => authorities('')).toThrow('ca.crt holds no PEM certificate');
  });
});
