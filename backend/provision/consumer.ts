/**
 * Everything a consumer identity (`<sub>#<cluster id>`) has on the provider, made or found on each bind: the cluster
 * namespace, ServiceAccount `klutch-binder`, RoleBinding `klutch-binder` → ClusterRole `klutch-binder`, ClusterBinding
 * `cluster`, and the kubeconfig Secret whose context namespace is the cluster namespace. The per-consumer ClusterRole
 * for the exported resources follows the exports (controllers/consumer-rbac.reconcile.ts). Binding the same identity again
 * reuses all of it. Each cluster namespace has a ResourceQuota on the bind objects a consumer creates
 * (APIServiceNamespaces, export requests), and each bind is remembered on the ClusterBinding (a sign of life, like a
 * heartbeat: controllers/cluster-binding.reconcile.ts), with who bound (authz/binder.ts). The kubeconfig handed back
 * carries a ten-minute token of its own.
 */
import type { V1ClusterRole } from '@kubernetes/client-node';
import { binderRecord, BOUND_BY, recordedBinder, type RecordedBinder } from '../authz/binder';
import {
  Annotations,
  BIND_API_VERSION,
  bindObjects,
  CLUSTER_BINDING_NAME,
  KUBECONFIG_SECRET_KEY,
  Kinds,
  type ClusterBinding,
} from '../../exports/bind-api';
import { APPLY_PATCH, BindResources, type BackendClients, FIELD_MANAGER, isConflict, MERGE_PATCH } from '../kube';
import { applyQuota } from './quota';
import { BackendAnnotations, Labels, MANAGED_BY } from '../labels';
import type { ClaimedAccess } from '../consumer-access';
import { ensureClusterNamespace, findClusterNamespace, type NamespaceCache } from './cluster-namespace';
import { identityHash, MACHINE_IDENTITY_PREFIX, subjectOf } from './identity';
import { bindingKubeconfig, ensureKubeconfig, KUBECONFIG_SECRET, type KubeconfigTarget, type TokenPolicy } from './kubeconfig';
import { BINDER, binderClusterRole, binderRoleBinding } from './rbac';
import { BACKEND_VERSION_ANNOTATION, VERSION } from '../../lib/version';

export interface ProvisionOptions {
  readonly clients: BackendClients;
  /** The serving informers' namespaces: where a consumer's cluster namespace is found. */
  readonly namespaces: NamespaceCache;
  readonly prefix: string;
  readonly prettyName: string;
  readonly target: KubeconfigTarget;
  readonly tokens: TokenPolicy;
  /** @default unlimited */
  readonly maxClustersPerSubject?: number;
  /** The ResourceQuota of each cluster namespace. @default none */
  readonly quota?: { readonly serviceNamespaces: number; readonly exportRequests: number };
}

/** The ResourceQuota in each cluster namespace. */
const QUOTA = 'klutch-binder';

export interface Consumer {
  readonly namespace: string;
  readonly kubeconfig: string;
}

/** Applies ClusterRole `klutch-binder` (Klutch's backend bootstraps it at start too); `access` is `--claimed-access`. */
export async function applyBinderClusterRole(c: BackendClients, access?: ClaimedAccess): Promise<V1ClusterRole> {
  return c.rbac.patchClusterRole({ name: BINDER, body: binderClusterRole(access), fieldManager: FIELD_MANAGER, force: true }, APPLY_PATCH);
}

/**
 * Finds or makes everything of `identity` and records `binder` (who bound, authz/binder.ts) with the time of this bind
 * on its ClusterBinding. The requests are as few as the objects allow: a ClusterBinding made anew carries both
 * annotations from its create (an existing one gets them in one patch); in a cluster namespace this bind created,
 * nothing is read before it is made and the quota's first status counts nothing.
 */
export async function provisionConsumer(o: ProvisionOptions, identity: string, binder?: RecordedBinder): Promise<Consumer> {
  const c = o.clients;
  const migrated = await requalifyMachineNamespace(o, identity, binder);
  const { namespace: ns, created } = migrated
    ? { namespace: migrated, created: false }
    : await ensureClusterNamespace({ clients: c, cache: o.namespaces, prefix: o.prefix, maxPerSubject: o.maxClustersPerSubject }, identity);
  const namespace = ns.metadata!.name!;
  const labels = { [Labels.managedBy]: MANAGED_BY };
  const annotations = {
    [BackendAnnotations.lastBind]: new Date().toISOString(),
    // The konnector compares its own release with this one (docs/upgrading.md); the ClusterBinding controller keeps it.
    [BACKEND_VERSION_ANNOTATION]: VERSION,
    ...(binder ? { [BOUND_BY]: binderRecord(binder) } : {}),
  };
  const clusterBindings = bindObjects<ClusterBinding>(c.custom, BindResources.clusterBindings);
  await Promise.all([
    createIfMissing(() => c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: BINDER, namespace, labels } } })),
    createIfMissing(() => c.rbac.createNamespacedRoleBinding({ namespace, body: binderRoleBinding(namespace, namespace, BINDER) })),
    (async () => {
      const made = await clusterBindings.create({
        apiVersion: BIND_API_VERSION,
        kind: Kinds.ClusterBinding,
        metadata: { name: CLUSTER_BINDING_NAME, namespace, labels, annotations },
        spec: { kubeconfigSecretRef: { name: KUBECONFIG_SECRET, key: KUBECONFIG_SECRET_KEY }, providerPrettyName: o.prettyName },
      });
      if (made) return;
      // Bound before by a machine, now by a person of the same `<sub>` (or the other way): a namespace a machine
      // bound before identities were qualified by kind (identity.ts), which only that machine may take over.
      if (binder) {
        const before = await recordedBinder(c, namespace);
        if (before.clientId !== undefined && before.clientId !== binder.clientId) throw new IdentityKindError(identity, before.clientId);
      }
      await clusterBindings.patch({ namespace, name: CLUSTER_BINDING_NAME }, { metadata: { annotations } });
    })(),
  ]);
  if (o.quota) await ensureQuota(c, namespace, o.quota, created);
  const k = await ensureKubeconfig(c, namespace, o.target, o.tokens, { absent: created });
  return { namespace, kubeconfig: await bindingKubeconfig(c, namespace, o.target, k.secretUid) };
}

/** A person's bind that would take a consumer a machine client bound: refused (identity.ts). */
export class IdentityKindError extends Error {
  constructor(identity: string, clientId: string) {
    super(
      `${subjectOf(identity)} is also the subject of machine client ${clientId}, which bound this app cluster before: only that client binds it. Bind from another app cluster, or ask the operator of your identity provider why your subject is a client's.`,
    );
  }
}

/**
 * A machine's consumer made before identities were qualified by kind is keyed `<sub>#<cid>`: on its first bind as
 * `system:client:<sub>#<cid>`, the namespace is re-keyed to that, when its ClusterBinding records that the same client
 * bound it (a person's namespace of the same `<sub>` is not), so a GitOps job that binds again keeps its consumer,
 * its bindings and its claims. Returns the namespace re-keyed, if one was.
 */
async function requalifyMachineNamespace(o: ProvisionOptions, identity: string, binder?: RecordedBinder) {
  if (!identity.startsWith(MACHINE_IDENTITY_PREFIX) || binder?.clientId === undefined) return undefined;
  if (findClusterNamespace(o.namespaces, identity)) return undefined;
  const legacy = identity.slice(MACHINE_IDENTITY_PREFIX.length);
  const ns = findClusterNamespace(o.namespaces, legacy);
  if (!ns || (await recordedBinder(o.clients, ns.metadata!.name!)).clientId !== binder.clientId) return undefined;
  return o.clients.core.patchNamespace(
    {
      name: ns.metadata!.name!,
      body: {
        metadata: {
          annotations: { [Annotations.identity]: identity },
          labels: { [Labels.identityHash]: identityHash(identity), [Labels.subjectHash]: identityHash(subjectOf(identity)) },
        },
      },
    },
    MERGE_PATCH,
  );
}

/** ResourceQuota `klutch-binder` on the bind objects a consumer creates (quota.ts: the first status written here). */
async function ensureQuota(c: BackendClients, namespace: string, q: NonNullable<ProvisionOptions['quota']>, empty: boolean): Promise<void> {
  const counted = [
    [BindResources.serviceNamespaces, q.serviceNamespaces],
    [BindResources.exportRequests, q.exportRequests],
  ] as const;
  const key = (r: (typeof counted)[number][0]) => `count/${r.plural}.${r.group}`;
  const hard = Object.fromEntries(counted.map(([r, n]) => [key(r), String(n)]));
  await applyQuota(c, namespace, QUOTA, hard, async (k) => {
    // In a namespace this bind just created there is nothing to count yet.
    const r = counted.find(([r]) => key(r) === k)![0];
    return empty ? '0' : String((await bindObjects(c.custom, r).list(namespace)).length);
  });
}

/** Whether `create` made the object (false: it existed). */
async function createIfMissing(create: () => Promise<unknown>): Promise<boolean> {
  try {
    await create();
    return true;
  } catch (e) {
    if (!isConflict(e)) throw e;
    return false;
  }
}
