/**
 * A konnector's receipt for the credentials it copied into an app cluster (issue 39): a rotation's old user keeps
 * working until the new credentials have reached the app cluster and the overlap has passed, so the konnector says
 * which ones it delivered, on the bound object upstream (Annotations.credentialsReceived), and the composition
 * function compares that with the credentials it published. Both sides read a Secret's `data` (base64) and call this.
 * A digest, not the values: more people may read a claim than its Secret.
 */
import { createHash } from 'node:crypto';

/** The keys of a credentials Secret that say which credentials it holds. */
const RECEIPT_KEYS = ['username', 'password'] as const;

/**
 * The receipt of a Secret's `data` (base64), or of its `stringData` (`plain`): undefined unless it holds every
 * RECEIPT_KEYS entry, non-empty.
 */
export function credentialsReceipt(data: unknown, encoding: 'base64' | 'plain' = 'base64'): string | undefined {
  if (typeof data !== 'object' || data === null) return undefined;
  const values = RECEIPT_KEYS.map((k) => (data as Record<string, unknown>)[k]);
  if (!values.every((v): v is string => typeof v === 'string' && v !== '')) return undefined;
  const hash = createHash('sha256').update('klutch-kit credentials receipt');
  for (const v of values) hash.update('\0').update(encoding === 'base64' ? Buffer.from(v, 'base64') : Buffer.from(v, 'utf8'));
  return `sha256:${hash.digest('hex').slice(0, 32)}`;
}
