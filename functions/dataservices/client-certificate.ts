/**
 * Crossplane's client certificate, checked the way Crossplane (Go) checks certificates. Node's TLS (OpenSSL) cannot
 * verify the certificates Crossplane makes for itself: the leaf's subject equals its CA's (`O=Crossplane,
 * CN=Crossplane`, internal/initializer/tls.go) and it carries no authority key identifier, so OpenSSL takes the leaf
 * for self-signed ("error 18") and drops the connection before the first call; Crossplane then reports "error reading
 * server preface: EOF" after its two-minute deadline (found running the function as the Pod Crossplane makes,
 * test/cluster/platform-pods.test.ts). So the handshake asks for a certificate without judging it, and calls are
 * refused here, UNAUTHENTICATED with the reason, unless it is signed by a CA of ca.crt, valid, for client
 * authentication.
 */
import { X509Certificate } from 'node:crypto';
import type { TLSSocket } from 'node:tls';

const CLIENT_AUTH = '1.3.6.1.5.5.7.3.2';

/** The CA certificates of a PEM bundle. */
export function authorities(pem: string | Buffer): X509Certificate[] {
  const blocks = String(pem).match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0) throw new Error('ca.crt holds no PEM certificate');
  return blocks.map((b) => new X509Certificate(b));
}

/** Why a peer's certificate (DER) is not a client certificate of one of `cas`; undefined when it is. */
export function clientCertificateProblem(cas: readonly X509Certificate[], raw: Buffer | undefined, now = new Date()): string | undefined {
  if (!raw || raw.length === 0) return 'no client certificate: Crossplane presents the one of its crossplane-tls-client Secret';
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(raw);
  } catch (e) {
    return `unreadable client certificate: ${(e as Error).message}`;
  }
  if (!cas.some((ca) => cert.checkIssued(ca) && cert.verify(ca.publicKey)))
    return `client certificate ${cert.subject.replaceAll('\n', ', ')} is not signed by a CA of ca.crt`;
  if (now < new Date(cert.validFrom) || now > new Date(cert.validTo))
    return `client certificate is not valid now (${cert.validFrom} - ${cert.validTo})`;
  if (cert.keyUsage !== undefined && !cert.keyUsage.includes(CLIENT_AUTH)) return 'the certificate is not for client authentication';
  return undefined;
}

/**
 * The check of grpc-server.ts's `authorize`: why the peer of an mTLS connection may not call, from the certificate it
 * presented. Asked once per connection: its certificate cannot change on it (HTTP/2 forbids renegotiation), and
 * Crossplane keeps one connection per function, so no call pays the signature check.
 */
export function clientCertificateCheck(cas: readonly X509Certificate[]): (session: { readonly socket: unknown }) => string | undefined {
  return (session) => {
    const socket = session.socket as Partial<Pick<TLSSocket, 'getPeerCertificate'>>;
    if (typeof socket.getPeerCertificate !== 'function') return 'not a TLS connection';
    return clientCertificateProblem(cas, socket.getPeerCertificate()?.raw);
  };
}
