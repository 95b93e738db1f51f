/**
 * Sealed values: what the backend hands a browser (cookies) or sends through the OpenID provider (state) is a JWE
 * (`dir` + A256GCM, so encrypted and authenticated at once) whose claims carry the purpose as audience and an expiry,
 * under a key derived per purpose. A value sealed for one purpose never opens as another, and nothing in it can be
 * read or changed on the way.
 *
 * The JWE compact serialization is written and read here with node:crypto's AES-GCM, not with jose: jose goes
 * through WebCrypto, whose every call is a thread-pool job, and a bind flow seals and opens about eight times (about
 * 0.4 ms of CPU per seal and open with jose, 0.03 ms here; docs/decisions/bind-flow-cost.md). The format is jose's,
 * byte for byte in what it accepts (a test seals with one and opens with the other), so replicas of the previous
 * version open these cookies during a rollout and the other way round.
 */
import { createCipheriv, createDecipheriv, hkdfSync, randomBytes } from 'node:crypto';
import type { JWTPayload } from 'jose';
import type { Key } from './keys';

/** What a sealed value is for; each has its own derived key. */
export type Purpose = 'state' | 'flow' | 'session';

export type OpenFailure = 'invalid' | 'expired';

export class SealError extends Error {
  constructor(
    readonly reason: OpenFailure,
    message: string,
    /** What it failed on, kept for the log. */
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}

const b64u = (b: Uint8Array | string) => Buffer.from(b).toString('base64url');
const INVALID = 'is not one this backend sealed, or was changed';
const invalid = (why: string, cause?: unknown) => new SealError('invalid', INVALID, { cause: cause ?? new Error(why) });

export class Sealer {
  private readonly derived = new Map<string, Uint8Array>();

  /** `keys()` gives the current keys, the sealing one first (a KeyRing's `current`). */
  constructor(private readonly keys: () => readonly Key[]) {}

  /** Seals `payload` for `purpose`, valid for `ttlMs`. */
  async seal(purpose: Purpose, payload: Record<string, unknown>, ttlMs: number): Promise<string> {
    const key = this.keys()[0]!;
    const now = Math.floor(Date.now() / 1000);
    const claims = { ...payload, aud: purpose, iat: now, exp: now + Math.max(1, Math.round(ttlMs / 1000)) };
    const header = b64u(JSON.stringify({ alg: 'dir', enc: 'A256GCM', kid: key.id }));
    const iv = randomBytes(12);
    const cipher = createCipheriv('aes-256-gcm', this.derive(key, purpose), iv);
    cipher.setAAD(Buffer.from(header, 'ascii'));
    const text = Buffer.concat([cipher.update(JSON.stringify(claims), 'utf8'), cipher.final()]);
    return `${header}..${b64u(iv)}.${b64u(text)}.${b64u(cipher.getAuthTag())}`;
  }

  /** Opens a value sealed for `purpose`; throws SealError('expired') after its expiry, SealError('invalid') otherwise. */
  async open<T extends Record<string, unknown>>(purpose: Purpose, token: string): Promise<T & JWTPayload> {
    const parts = token.split('.');
    if (parts.length !== 5 || parts[1] !== '') throw invalid('not a JWE compact serialization with a direct key');
    const [protectedHeader, , iv, text, tag] = parts as [string, string, string, string, string];
    let header: { alg?: unknown; enc?: unknown; kid?: unknown; zip?: unknown; crit?: unknown };
    try {
      header = JSON.parse(Buffer.from(protectedHeader, 'base64url').toString('utf8')) as typeof header;
    } catch (e) {
      throw invalid('the protected header is no JSON', e);
    }
    if (header.alg !== 'dir' || header.enc !== 'A256GCM' || header.zip !== undefined || header.crit !== undefined)
      throw invalid(`sealed as ${String(header.alg)}/${String(header.enc)}, not dir/A256GCM`);
    const key = this.keys().find((k) => k.id === header.kid);
    if (!key) throw new SealError('invalid', 'sealed with a key this backend does not have (rotated out, or forged)');
    const ivBytes = Buffer.from(iv, 'base64url');
    const tagBytes = Buffer.from(tag, 'base64url');
    if (ivBytes.length !== 12 || tagBytes.length !== 16) throw invalid('the IV or the tag has the wrong length');
    let claims: JWTPayload;
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.derive(key, purpose), ivBytes);
      decipher.setAAD(Buffer.from(protectedHeader, 'ascii'));
      decipher.setAuthTag(tagBytes);
      const plain = Buffer.concat([decipher.update(Buffer.from(text, 'base64url')), decipher.final()]);
      claims = JSON.parse(plain.toString('utf8')) as JWTPayload;
    } catch (e) {
      // Another purpose's key, or a changed byte: the tag does not verify.
      throw invalid('decryption failed', e);
    }
    if (typeof claims !== 'object' || claims === null) throw invalid('the claims are no object');
    const aud = Array.isArray(claims.aud) ? claims.aud : [claims.aud];
    if (!aud.includes(purpose)) throw invalid(`sealed for ${String(claims.aud)}, not ${purpose}`);
    const now = Math.floor(Date.now() / 1000);
    if (typeof claims.exp !== 'number') throw invalid('no expiry');
    if (claims.exp <= now) throw new SealError('expired', 'has expired', { cause: new Error(`expired at ${claims.exp}, now ${now}`) });
    if (claims.nbf !== undefined && (typeof claims.nbf !== 'number' || claims.nbf > now)) throw invalid('not valid yet');
    return claims as T & JWTPayload;
  }

  private derive(key: Key, purpose: Purpose): Uint8Array {
    const id = `${key.id}/${purpose}`;
    let k = this.derived.get(id);
    if (!k) {
      k = new Uint8Array(hkdfSync('sha256', key.bytes, '', `klutch-kit bind backend ${purpose}`, 32));
      // Bounded: keys × purposes, and old keys leave the ring.
      if (this.derived.size > 64) this.derived.clear();
      this.derived.set(id, k);
    }
    return k;
  }
}
