/**
 * Sealed values: what the backend hands a browser (cookies) or sends through the OpenID provider (state) is a JWE
 * (jose: `dir` + A256GCM, so encrypted and authenticated at once) with an expiry, under a key derived per purpose.
 * A value sealed for one purpose never opens as another, and nothing in it can be read or changed on the way.
 */
import { hkdfSync } from 'node:crypto';
import { EncryptJWT, errors, jwtDecrypt, type JWTPayload } from 'jose';
import { causeOf } from '../../controller';
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

export class Sealer {
  private readonly derived = new Map<string, Uint8Array>();

  /** `keys()` gives the current keys, the sealing one first (a KeyRing's `current`). */
  constructor(private readonly keys: () => readonly Key[]) {}

  /** Seals `payload` for `purpose`, valid for `ttlMs`. */
  async seal(purpose: Purpose, payload: Record<string, unknown>, ttlMs: number): Promise<string> {
    const key = this.keys()[0]!;
    const now = Math.floor(Date.now() / 1000);
    return new EncryptJWT(payload)
      .setProtectedHeader({ alg: 'dir', enc: 'A256GCM', kid: key.id })
      .setAudience(purpose)
      .setIssuedAt(now)
      .setExpirationTime(now + Math.max(1, Math.round(ttlMs / 1000)))
      .encrypt(this.derive(key, purpose));
  }

  /** Opens a value sealed for `purpose`; throws SealError('expired') after its expiry, SealError('invalid') otherwise. */
  async open<T extends Record<string, unknown>>(purpose: Purpose, token: string): Promise<T & JWTPayload> {
    const keys = this.keys();
    try {
      const { payload } = await jwtDecrypt(
        token,
        (header) => {
          const key = keys.find((k) => k.id === header.kid);
          if (!key) throw new SealError('invalid', 'sealed with a key this backend does not have (rotated out, or forged)');
          return this.derive(key, purpose);
        },
        { audience: purpose, keyManagementAlgorithms: ['dir'], contentEncryptionAlgorithms: ['A256GCM'], clockTolerance: 0 },
      );
      return payload as T & JWTPayload;
    } catch (e) {
      // jose may wrap what the key lookup threw: its refusal is the answer.
      const refused = causeOf(e, SealError);
      if (refused) throw refused;
      if (e instanceof errors.JWTExpired) throw new SealError('expired', 'has expired', { cause: e });
      throw new SealError('invalid', 'is not one this backend sealed, or was changed', { cause: e });
    }
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
