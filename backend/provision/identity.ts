/** A consumer identity `<sub>#<cluster id>` and the hashes it is found by (an identity is no label value). */
import { createHash } from 'node:crypto';

/** `<sub>` of an identity `<sub>#<cluster id>` (the cluster id is base62, so the last `#` splits). */
export function subjectOf(identity: string): string {
  const i = identity.lastIndexOf('#');
  return i < 0 ? identity : identity.slice(0, i);
}

export function identityHash(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 40);
}
