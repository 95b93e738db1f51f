/**
 * Crossplane's client certificate, checked the way Crossplane (Go) checks certificates. Node's TLS (OpenSSL) cannot
 * verify the certificates Crossplane makes for itself: the leaf's subject equals its CA's (`O=Crossplane,
 * CN=Crossplane`, internal/initializer/tls.go) and it carries no authority key identifier, so OpenSSL takes the leaf
 * for self-signed ("error 18") and drops the connection before the first call; Crossplane then reports "error reading
 * server preface: EOF" after its two-minute deadline (found running the function as the Pod Crossplane makes,
 * test/cluster/platform-pods.test.ts). So the handshake asks for a certificate without judging it, and every call is
 * checked here: signed by a CA of ca.crt, valid now, for client authentication.
 */
import { X509Certificate } from 'node:crypto';
import { TLSSocket } from 'node:tls';
import * as grpc from '@grpc/grpc-js';

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
 * The DER certificate the peer of a call presented. grpc-js's `getAuthContext()` names it only when OpenSSL verified
 * it, which it cannot here; so it is read from the call's TLS socket (grpc-js 1.14: the intercepting call's `nextCall`,
 * whose `stream.session.socket` is the TLSSocket). The mTLS tests of the bundled function fail if that moves.
 */
export function peerCertificate(call: grpc.ServerInterceptingCallInterface): Buffer | undefined {
  const verified = call.getAuthContext()?.sslPeerCertificate?.raw;
  if (verified) return verified;
  let c: unknown = call;
  for (let depth = 0; depth < 4 && c; depth++) {
    const socket = (c as { stream?: { session?: { socket?: unknown } } }).stream?.session?.socket;
    if (socket instanceof TLSSocket) return socket.getPeerCertificate()?.raw;
    c = (c as { nextCall?: unknown }).nextCall;
  }
  return undefined;
}

/** A server interceptor that ends every call whose peer certificate `clientCertificateProblem` refuses, UNAUTHENTICATED. */
export function requireClientCertificate(cas: readonly X509Certificate[]): grpc.ServerInterceptor {
  return (_method, call) =>
    new grpc.ServerInterceptingCall(call, {
      start: (next) => {
        next({
          onReceiveMetadata: (metadata, mdNext) => {
            const problem = clientCertificateProblem(cas, peerCertificate(call));
            if (problem) call.sendStatus({ code: grpc.status.UNAUTHENTICATED, details: problem, metadata: new grpc.Metadata() });
            else mdNext(metadata);
          },
        });
      },
    });
}
