/**
 * The consumer's cluster namespace: found by its identity (`<sub>#<cluster id>`, Klutch's annotation) in the serving
 * cache, else created. Klutch looks the identity up in a cache and creates with `generateName`, so two quick binds of
 * one identity can make two namespaces. Here no lock is needed and a first bind costs two requests
 * (docs/decisions/bind-flow-cost.md):
 *
 * - The namespace is created under a name derived from the identity (`<prefix>-` and five characters of its hash, in
 *   the alphabet `generateName` uses): concurrent first binds of one identity race for one name, and the loser's
 *   create conflicts and takes the winner's. A name held by someone else (another identity's hash collides, or this
 *   identity's previous namespace is still terminating) falls back to `generateName`.
 * - Right after its create, one list of the subject's namespaces (by label, from the API server) settles what no
 *   cache can: another live namespace of the same identity that is older (a bind that took the fallback, or a
 *   cache that lagged) wins and the new one is deleted again; and a subject that now holds more than `maxPerSubject`
 *   namespaces is refused, its new namespace deleted. Two binds of one subject racing for its last place may both be
 *   refused (each sees the other), never both admitted.
 */
import { createHash } from 'node:crypto';
import type { V1Namespace } from '@kubernetes/client-node';
import { Annotations } from '../../exports/bind-api';
import { type BackendClients, isConflict, isNotFound } from '../kube';
import { BackendAnnotations, Labels, MANAGED_BY, PodSecurity } from '../labels';
import { identityHash, subjectOf } from './identity';
import { adoptClusterNamespace, isKlutchClusterNamespace } from './klutch-adoption';

export { identityHash } from './identity';

/** What the serving informers hold of namespaces (backend/informers.ts). */
export interface NamespaceCache {
  /** Namespaces with an identity-hash label: this backend's cluster namespaces (and other backends'). */
  clusterNamespaces(): readonly V1Namespace[];
  /** Namespaces that are neither cluster nor provider namespaces of a klutch-kit backend: Klutch's unadopted ones. */
  foreignNamespaces(): readonly V1Namespace[];
}

export interface ClusterNamespaceOptions {
  readonly clients: BackendClients;
  readonly cache: NamespaceCache;
  /** Namespaces are `<prefix>-<five characters>`. */
  readonly prefix: string;
  /** How many cluster namespaces one subject may have. @default unlimited */
  readonly maxPerSubject?: number;
}

/** A subject has as many cluster namespaces as it may: the bind is refused. */
export class TooManyClustersError extends Error {
  constructor(
    readonly subject: string,
    readonly limit: number,
  ) {
    super(
      `${subject} has already bound ${limit} app clusters, the most this provider allows (--max-clusters-per-subject). Bind again from a cluster you bound before (its cluster id is kept in the app cluster), unbind one you no longer use (ask the platform operator to delete its cluster namespace), or ask the operator to raise the limit.`,
    );
  }
}

/** The characters `generateName` draws from (no vowels, no look-alikes): derived names look like made ones. */
const ALPHABET = 'bcdfghjklmnpqrstvwxz2456789';

/** The name a first bind of `identity` tries: `<prefix>-` and five characters of the identity's hash. */
export function derivedNamespaceName(prefix: string, identity: string): string {
  const h = createHash('sha256').update(identity).digest();
  let suffix = '';
  for (let i = 0; i < 5; i++) suffix += ALPHABET[h[i]! % ALPHABET.length];
  return `${prefix}-${suffix}`;
}

const live = (ns: V1Namespace) => !ns.metadata?.deletionTimestamp;
const identityOf = (ns: V1Namespace) => ns.metadata?.annotations?.[Annotations.identity];

/** Oldest first; a tie in creation time (seconds) goes by name, so every replica orders alike. */
function byAge(a: V1Namespace, b: V1Namespace): number {
  const t = String(a.metadata?.creationTimestamp?.toISOString?.() ?? a.metadata?.creationTimestamp).localeCompare(
    String(b.metadata?.creationTimestamp?.toISOString?.() ?? b.metadata?.creationTimestamp),
  );
  return t || String(a.metadata?.name).localeCompare(String(b.metadata?.name));
}

/** The live cluster namespace of `identity` among `list` (two, made by Klutch's racing binds: the oldest). */
function clusterNamespaceOf(list: readonly V1Namespace[], identity: string): V1Namespace | undefined {
  return list.filter((ns) => live(ns) && identityOf(ns) === identity).sort(byAge)[0];
}

/** The cluster namespace of `identity` from the serving cache, if it exists and is not being deleted. */
export function findClusterNamespace(cache: NamespaceCache, identity: string): V1Namespace | undefined {
  const hash = identityHash(identity);
  return clusterNamespaceOf(
    cache.clusterNamespaces().filter((ns) => ns.metadata?.labels?.[Labels.identityHash] === hash),
    identity,
  );
}

/** What the list after a create decides about the namespace `mine` just made. */
export type Settled =
  | { readonly keep: true }
  /** An older namespace of the same identity: it is the consumer's, `mine` goes. */
  | { readonly keep: false; readonly use: V1Namespace }
  /** The subject holds more than the limit: `mine` goes and the bind is refused. */
  | { readonly keep: false; readonly refuse: true };

/** Decides from the subject's namespaces (`theirs`, listed after `mine` was created) whether `mine` stays. */
export function settle(mine: V1Namespace, theirs: readonly V1Namespace[], identity: string, maxPerSubject?: number): Settled {
  const subject = subjectOf(identity);
  const alive = theirs.filter((ns) => {
    const id = identityOf(ns);
    return live(ns) && id !== undefined && subjectOf(id) === subject;
  });
  const first = clusterNamespaceOf(alive, identity);
  if (first && first.metadata?.name !== mine.metadata?.name) return { keep: false, use: first };
  const count = alive.length + (alive.some((ns) => ns.metadata?.name === mine.metadata?.name) ? 0 : 1);
  if (maxPerSubject !== undefined && count > maxPerSubject) return { keep: false, refuse: true };
  return { keep: true };
}

/** A cluster namespace, and whether this call created it (then nothing of the consumer's exists in it yet). */
export interface ClusterNamespace {
  readonly namespace: V1Namespace;
  readonly created: boolean;
}

/** Finds or creates the cluster namespace of `identity`; concurrent calls for one identity get the same namespace. */
export async function ensureClusterNamespace(o: ClusterNamespaceOptions, identity: string): Promise<ClusterNamespace> {
  const cached = findClusterNamespace(o.cache, identity);
  if (cached) return { namespace: cached, created: false };
  // A consumer Klutch's backend provisioned binds again before the adoption controller got to it.
  const klutch = o.cache
    .foreignNamespaces()
    .filter((ns) => isKlutchClusterNamespace(ns, o.prefix) && identityOf(ns) === identity)
    .sort(byAge)[0];
  if (klutch) {
    await adoptClusterNamespace(o.clients, klutch);
    return { namespace: klutch, created: false };
  }
  const body = (name: { name: string } | { generateName: string }): V1Namespace => ({
    metadata: {
      ...name,
      annotations: { [Annotations.identity]: identity, [BackendAnnotations.provisioned]: 'true' },
      labels: {
        [Labels.identityHash]: identityHash(identity),
        [Labels.subjectHash]: identityHash(subjectOf(identity)),
        [Labels.managedBy]: MANAGED_BY,
        ...PodSecurity.clusterNamespace,
      },
    },
  });
  const name = derivedNamespaceName(o.prefix, identity);
  let mine: V1Namespace | undefined;
  for (let attempt = 0; !mine; attempt++) {
    try {
      mine = await o.clients.core.createNamespace({ body: body({ name }) });
    } catch (e) {
      if (!isConflict(e)) throw e;
      const held = await o.clients.core.readNamespace({ name }).catch((e: unknown) => {
        if (isNotFound(e) && attempt < 3) return undefined; // gone meanwhile: try the name again
        throw e;
      });
      if (!held) continue;
      if (identityOf(held) === identity && live(held)) return { namespace: held, created: false };
      // Someone else's name, or this identity's previous namespace still terminating.
      mine = await o.clients.core.createNamespace({ body: body({ generateName: `${o.prefix}-` }) });
    }
  }
  const theirs = await o.clients.core.listNamespace({ labelSelector: `${Labels.subjectHash}=${identityHash(subjectOf(identity))}` });
  const s = settle(mine, theirs.items, identity, o.maxPerSubject);
  if (s.keep) return { namespace: mine, created: true };
  await o.clients.core.deleteNamespace({ name: mine.metadata!.name! }).catch((e: unknown) => {
    if (!isNotFound(e)) throw e;
  });
  if ('use' in s) return { namespace: s.use, created: false };
  throw new TooManyClustersError(subjectOf(identity), o.maxPerSubject!);
}
