/**
 * Test PKI: a CA and the certificates it signs (servers with IP/DNS SANs, clients with a CN and organisations), as
 * PEM, for the processes the suites start with TLS (Crossplane and its function's mTLS, webhooks, providers, HTTPS
 * servers). Node's crypto cannot mint X.509 certificates; @peculiar/x509 does, over WebCrypto.
 */
// @peculiar/x509 resolves its ASN.1 providers through tsyringe, which needs the Reflect metadata polyfill first.
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import * as x509 from '@peculiar/x509';

x509.cryptoProvider.set(webcrypto as unknown as Parameters<typeof x509.cryptoProvider.set>[0]);

type CryptoKeyPair = webcrypto.CryptoKeyPair;
type CryptoKey = webcrypto.CryptoKey;

const ALG = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const DAY_MS = 86_400_000;

export interface KeyPairPem {
  /** PEM certificate. */
  readonly cert: string;
  /** PEM PKCS#8 private key. */
  readonly key: string;
}

export interface Ca extends KeyPairPem {
  /** Issues a certificate signed by this CA. */
  issue(o: IssueOptions): Promise<KeyPairPem>;
}

export interface IssueOptions {
  /** Subject common name (a client certificate's user name for Kubernetes). */
  readonly commonName: string;
  /** Subject organisations (a client certificate's groups for Kubernetes). */
  readonly organizations?: readonly string[];
  /** Subject alternative names: IP addresses and DNS names the server answers on. */
  readonly ips?: readonly string[];
  readonly dnsNames?: readonly string[];
  /** What the certificate is for. @default ['server'] */
  readonly usages?: readonly ('server' | 'client')[];
  /** @default 1 */
  readonly validDays?: number;
}

/** A new self-signed CA (P-256), valid for `validDays` (default 1) from a minute ago. */
export async function createCa(commonName = 'klutch-kit test CA', validDays = 1): Promise<Ca> {
  const keys = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
  const notBefore = new Date(Date.now() - 60_000);
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `CN=${escape(commonName)}`,
    notBefore,
    notAfter: new Date(notBefore.getTime() + validDays * DAY_MS),
    signingAlgorithm: ALG,
    keys,
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  const ca: Ca = {
    cert: cert.toString('pem'),
    key: await keyPem(keys.privateKey),
    issue: async (o) => {
      const leaf = (await webcrypto.subtle.generateKey(ALG, true, ['sign', 'verify'])) as CryptoKeyPair;
      const usages = o.usages ?? ['server'];
      const names = [
        ...(o.ips ?? []).map((v) => ({ type: 'ip' as const, value: v })),
        ...(o.dnsNames ?? []).map((v) => ({ type: 'dns' as const, value: v })),
      ];
      const subject = [`CN=${escape(o.commonName)}`, ...(o.organizations ?? []).map((org) => `O=${escape(org)}`)].join(', ');
      const issued = await x509.X509CertificateGenerator.create({
        serialNumber: serial(),
        subject,
        issuer: cert.subject,
        notBefore,
        notAfter: new Date(notBefore.getTime() + (o.validDays ?? 1) * DAY_MS),
        signingAlgorithm: ALG,
        publicKey: leaf.publicKey,
        signingKey: keys.privateKey,
        extensions: [
          new x509.BasicConstraintsExtension(false, undefined, true),
          new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment, true),
          new x509.ExtendedKeyUsageExtension(
            usages.map((u) => (u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth)),
            false,
          ),
          ...(names.length ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
          await x509.AuthorityKeyIdentifierExtension.create(cert, false),
        ],
      });
      return { cert: issued.toString('pem'), key: await keyPem(leaf.privateKey) };
    },
  };
  return ca;
}

/** Writes `tls.crt`, `tls.key` and (the CA's) `ca.crt` into `dir`, the layout Crossplane and its packages read. */
export function writeTlsDir(dir: string, pair: KeyPairPem, ca: KeyPairPem): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'tls.crt'), pair.cert);
  writeFileSync(join(dir, 'tls.key'), pair.key, { mode: 0o600 });
  writeFileSync(join(dir, 'ca.crt'), ca.cert);
  return dir;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', key));
  return `-----BEGIN PRIVATE KEY-----\n${der
    .toString('base64')
    .replace(/(.{64})/g, '$1\n')
    .replace(/\n$/, '')}\n-----END PRIVATE KEY-----\n`;
}

function serial(): string {
  // Positive (leading bit clear) and unique per certificate.
  const b = webcrypto.getRandomValues(new Uint8Array(16));
  b[0] = (b[0] as number) & 0x7f;
  return Buffer.from(b).toString('hex');
}

/** Escapes a value for an X.500 name string. */
function escape(v: string): string {
  return v.replace(/([,+"\\<>;=])/g, '\\$1');
}
