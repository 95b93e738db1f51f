/**
 * The two ids of a login, computed as Klutch's CLI does (the backend keys a consumer by `<subject>#<cluster id>`, so a
 * cluster keeps its provider namespace across kubectl-bind implementations):
 * - cluster id: base62 of the SHA-224 of the `klutch-bind` namespace's UID read as a big integer, first 6 characters;
 * - session id: 6 random base62 characters.
 */
import { createHash, randomInt } from 'node:crypto';

/** Go's big.Int.Text(62) digits. */
const BASE62 = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/** A non-negative integer in base 62, most significant digit first (big.Int.Text(62)). */
export function base62(n: bigint): string {
  if (n < 0n) throw new Error(`base62: ${n} is negative`);
  if (n === 0n) return '0';
  let out = '';
  for (let x = n; x > 0n; x /= 62n) out = BASE62[Number(x % 62n)] + out;
  return out;
}

export function clusterId(namespaceUid: string): string {
  const hash = createHash('sha224').update(namespaceUid).digest('hex');
  return base62(BigInt(`0x${hash}`)).slice(0, 6);
}

export function sessionId(): string {
  return Array.from({ length: 6 }, () => BASE62[randomInt(62)]).join('');
}
