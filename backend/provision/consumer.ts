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
import { binderRecord, BOUND_BY, type RecordedBinder } from '../authz/binder';
import {
  BIND_API_VERSION,
  bindObjects,
  CLUSTER_BINDING_NAME,
  KUBECONFIG_SECRET_KEY,
  Kinds,
  type ClusterBinding,
} from '../../exports/bind-api';
import { APPLY_PATCH, BindResources, type BackendClients, FIELD_MANAGER, isConflict } from '../kube';
import { applyQuota } from './quota';
import { BackendAnnotations, Labels, MANAGED_BY } from '../labels';
import type { ClaimedAccess } from '../consumer-access';
import { ensureClusterNamespace, type NamespaceCache } from './cluster-namespace';
import { bindingKubeconfig, ensureKubeconfig, KUBECONFIG_SECRET, type KubeconfigTarget, type TokenPolicy } from './kubeconfig';
import { BINDER, binderClusterRole, binderRoleBinding } from './rbac';

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
  const { namespace: ns, created } = await ensureClusterNamespace(
    { clients: c, cache: o.namespaces, prefix: o.prefix, maxPerSubject: o.maxClustersPerSubject },
    identity,
  );
  const namespace = ns.metadata!.name!;
  const labels = { [Labels.managedBy]: MANAGED_BY };
  const annotations = { [BackendAnnotations.lastBind]: new Date().toISOString(), ...(binder ? { [BOUND_BY]: binderRecord(binder) } : {}) };
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
      if (!made) await clusterBindings.patch({ namespace, name: CLUSTER_BINDING_NAME }, { metadata: { annotations } });
    })(),
  ]);
  if (o.quota) await ensureQuota(c, namespace, o.quota, created);
  const k = await ensureKubeconfig(c, namespace, o.target, o.tokens, { absent: created });
  return { namespace, kubeconfig: await bindingKubeconfig(c, namespace, o.target, k.secretUid) };
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
