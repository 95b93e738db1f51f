/**
 * The consumer's cluster namespace: found by its identity (`<sub>#<cluster id>`, Klutch's annotation), else created
 * with `generateName: <prefix>-`. Klutch looks the identity up in a cache, so two quick binds of one identity can
 * make two namespaces. Here the lookup is a label-selected list from the API server, and creation happens under a
 * per-identity lock (a Lease named after the identity's hash in the backend's namespace, so replicas share it):
 * whoever holds the lock looks again, then creates; everyone else waits for the namespace to appear.
 *
 * The cluster id is the client's choice, so one subject could make namespaces without end: a subject may have at
 * most `maxPerSubject` cluster namespaces. The lock is per subject, so concurrent binds of one subject's clusters
 * cannot together pass the limit.
 */
import { V1MicroTime, type V1Namespace } from '@kubernetes/client-node';
import { Annotations } from '../../exports/bind-api';
import { type Clients, isConflict, isNotFound, statusCode } from '../kube';
import { Labels, MANAGED_BY, PodSecurity } from '../labels';
import { identityHash, subjectOf } from './identity';
import { adoptClusterNamespace, findKlutchClusterNamespace } from './klutch-adoption';

export { identityHash, subjectOf } from './identity';

export interface ClusterNamespaceOptions {
  readonly clients: Clients;
  /** Where the locks live (the backend's namespace). */
  readonly lockNamespace: string;
  /** This replica, written into the locks it holds. */
  readonly holder: string;
  /** Namespaces are `<prefix>-<random>`. */
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

/** A lock older than this was left by a replica that died while holding it. */
const LOCK_STALE_MS = 15_000;
const WAIT_MS = 30_000;

/** The cluster namespace of `identity`, if it exists and is not being deleted. */
export async function findClusterNamespace(c: Clients, identity: string): Promise<V1Namespace | undefined> {
  const list = await c.core.listNamespace({ labelSelector: `${Labels.identityHash}=${identityHash(identity)}` });
  return oldest(
    list.items.filter((ns) => ns.metadata?.annotations?.[Annotations.identity] === identity && !ns.metadata?.deletionTimestamp),
  );
}

/** The oldest of `list` (two namespaces of one identity, made by Klutch's racing binds: the first is kept). */
function oldest(list: readonly V1Namespace[]): V1Namespace | undefined {
  return [...list].sort((a, b) => String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)))[0];
}

/** A cluster namespace, and whether this call created it (then nothing of the consumer's exists in it yet). */
export interface ClusterNamespace {
  readonly namespace: V1Namespace;
  readonly created: boolean;
}

/** Finds or creates the cluster namespace of `identity`; concurrent calls for one identity get the same namespace. */
export async function ensureClusterNamespace(o: ClusterNamespaceOptions, identity: string): Promise<ClusterNamespace> {
  const hash = identityHash(identity);
  const subjectHash = identityHash(subjectOf(identity));
  const lock = `subject-${subjectHash}`;
  const deadline = Date.now() + WAIT_MS;
  for (;;) {
    const found = await findClusterNamespace(o.clients, identity);
    if (found) return { namespace: found, created: false };
    if (Date.now() > deadline) {
      throw new Error(
        `no cluster namespace for ${identity} after ${WAIT_MS / 1000}s: the lock Lease ${o.lockNamespace}/${lock} is held by another replica`,
      );
    }
    if (await acquire(o, lock)) {
      try {
        // One list under the lock: the subject's namespaces hold the identity's, if it was made meanwhile, and are what
        // the limit counts (by their label: every namespace this backend makes or adopts carries it).
        const subject = subjectOf(identity);
        const theirs = (await o.clients.core.listNamespace({ labelSelector: `${Labels.subjectHash}=${subjectHash}` })).items.filter(
          (ns) => {
            const id = ns.metadata?.annotations?.[Annotations.identity];
            return id !== undefined && subjectOf(id) === subject && !ns.metadata?.deletionTimestamp;
          },
        );
        const again = oldest(theirs.filter((ns) => ns.metadata?.annotations?.[Annotations.identity] === identity));
        if (again) return { namespace: again, created: false };
        // A consumer Klutch's backend provisioned binds again before the adoption controller got to it.
        const klutch = await findKlutchClusterNamespace(o.clients, o.prefix, identity);
        if (klutch) {
          await adoptClusterNamespace(o.clients, klutch);
          return { namespace: (await findClusterNamespace(o.clients, identity)) ?? klutch, created: false };
        }
        if (o.maxPerSubject !== undefined && theirs.length >= o.maxPerSubject) throw new TooManyClustersError(subject, o.maxPerSubject);
        const namespace = await o.clients.core.createNamespace({
          body: {
            metadata: {
              generateName: `${o.prefix}-`,
              annotations: { [Annotations.identity]: identity },
              labels: {
                [Labels.identityHash]: hash,
                [Labels.subjectHash]: subjectHash,
                [Labels.managedBy]: MANAGED_BY,
                ...PodSecurity.clusterNamespace,
              },
            },
          },
        });
        return { namespace, created: true };
      } finally {
        await o.clients.leases.deleteNamespacedLease({ name: lock, namespace: o.lockNamespace }).catch(() => undefined);
      }
    }
    await new Promise((r) => setTimeout(r, 50 + Math.random() * 100));
  }
}

/** Creates the lock Lease; false when another holds it (a stale one is removed, and the caller tries again). */
async function acquire(o: ClusterNamespaceOptions, name: string): Promise<boolean> {
  const now = new V1MicroTime();
  try {
    await o.clients.leases.createNamespacedLease({
      namespace: o.lockNamespace,
      body: {
        metadata: { name, labels: { [Labels.managedBy]: MANAGED_BY } },
        spec: { holderIdentity: o.holder, acquireTime: now, renewTime: now, leaseDurationSeconds: LOCK_STALE_MS / 1000 },
      },
    });
    return true;
  } catch (e) {
    if (!isConflict(e)) {
      if (isNotFound(e)) throw new Error(`cannot lock ${name}: the backend's namespace "${o.lockNamespace}" does not exist (--namespace)`);
      throw e;
    }
  }
  try {
    const held = await o.clients.leases.readNamespacedLease({ name, namespace: o.lockNamespace });
    const since = held.spec?.acquireTime ? new Date(held.spec.acquireTime).getTime() : 0;
    if (Date.now() - since > LOCK_STALE_MS) {
      await o.clients.leases.deleteNamespacedLease({
        name,
        namespace: o.lockNamespace,
        body: { preconditions: { uid: held.metadata?.uid, resourceVersion: held.metadata?.resourceVersion } },
      });
    }
  } catch (e) {
    if (!isNotFound(e) && statusCode(e) !== 409) throw e;
  }
  return false;
}
