/**
 * A consumer identity `<sub>#<cluster id>` and the hashes it is found by (an identity is no label value).
 *
 * People (an OIDC login), machines (an access token of the client-credentials grant) and AppClusterBindings share
 * one issuer's names but must never share a consumer: a person whose `sub` equals a machine client's (some providers
 * make a client's `sub` its client id, and let people pick theirs) would otherwise bind as that client's consumer and
 * reach its claims. So each kind is qualified: a person is `<sub>#<cid>` as Klutch keys it (its consumers adopt
 * as they are), a machine `system:client:<sub>#<cid>`, an AppClusterBinding `system:appclusterbinding:…`; /bind
 * refuses `system:` names from the identity provider, so no person's `<sub>` reaches the other two.
 */
import { createHash } from 'node:crypto';

/** What a machine's identity begins with. */
export const MACHINE_IDENTITY_PREFIX = 'system:client:';

/** The consumer identity of who binds from cluster `cid`: a machine (it has a client id) qualified as one. */
export function consumerIdentity(who: { readonly subject: string; readonly clientId?: string }, cid: string): string {
  return `${who.clientId !== undefined ? MACHINE_IDENTITY_PREFIX : ''}${who.subject}#${cid}`;
}

/** `<sub>` of an identity `<sub>#<cluster id>` (the cluster id is base62, so the last `#` splits). */
export function subjectOf(identity: string): string {
  const i = identity.lastIndexOf('#');
  return i < 0 ? identity : identity.slice(0, i);
}

export function identityHash(identity: string): string {
  return createHash('sha256').update(identity).digest('hex').slice(0, 40);
}
