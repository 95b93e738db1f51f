/**
 * Everything a consumer identity (`<sub>#<cluster id>`) has on the provider, made or found on each bind: the cluster
 * namespace, ServiceAccount `klutch-binder`, RoleBinding `klutch-binder` → ClusterRole `klutch-binder`, ClusterBinding
 * `cluster`, and the kubeconfig Secret whose context namespace is the cluster namespace. The per-consumer ClusterRole
 * for the exported resources follows the exports (controllers/consumer-rbac.ts). Binding the same identity again
 * reuses all of it.
 */
import type { V1ClusterRole } from '@kubernetes/client-node';
import { BIND_API_VERSION, CLUSTER_BINDING_NAME, KUBECONFIG_SECRET_KEY, Kinds, type ClusterBinding } from '../../exports/bind-api';
import { APPLY, BindResources, type Clients, FIELD_MANAGER, isConflict } from '../kube';
import { Labels, MANAGED_BY } from '../labels';
import { ensureClusterNamespace } from './cluster-namespace';
import { ensureKubeconfig, KUBECONFIG_SECRET, type KubeconfigTarget, type TokenPolicy } from './kubeconfig';
import { BINDER, binderClusterRole, binderRoleBinding } from './rbac';

export interface ProvisionOptions {
  readonly clients: Clients;
  readonly lockNamespace: string;
  readonly holder: string;
  readonly prefix: string;
  readonly prettyName: string;
  readonly target: KubeconfigTarget;
  readonly tokens: TokenPolicy;
}

export interface Consumer {
  readonly namespace: string;
  readonly kubeconfig: string;
}

/** Applies ClusterRole `klutch-binder` (Klutch's backend bootstraps it at start too). */
export async function applyBinderClusterRole(c: Clients): Promise<V1ClusterRole> {
  return c.rbac.patchClusterRole({ name: BINDER, body: binderClusterRole(), fieldManager: FIELD_MANAGER, force: true }, APPLY);
}

export async function provisionConsumer(o: ProvisionOptions, identity: string): Promise<Consumer> {
  const c = o.clients;
  const ns = await ensureClusterNamespace({ clients: c, lockNamespace: o.lockNamespace, holder: o.holder, prefix: o.prefix }, identity);
  const namespace = ns.metadata!.name!;
  const labels = { [Labels.managedBy]: MANAGED_BY };
  await Promise.all([
    createIfMissing(() => c.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: BINDER, namespace, labels } } })),
    createIfMissing(() => c.rbac.createNamespacedRoleBinding({ namespace, body: binderRoleBinding(namespace, namespace, BINDER) })),
    createIfMissing(() => {
      const body: ClusterBinding = {
        apiVersion: BIND_API_VERSION,
        kind: Kinds.ClusterBinding,
        metadata: { name: CLUSTER_BINDING_NAME, namespace, labels },
        spec: { kubeconfigSecretRef: { name: KUBECONFIG_SECRET, key: KUBECONFIG_SECRET_KEY }, providerPrettyName: o.prettyName },
      };
      const r = BindResources.clusterBindings;
      return c.custom.createNamespacedCustomObject({ group: r.group, version: r.version, plural: r.plural, namespace, body });
    }),
  ]);
  const kubeconfig = await ensureKubeconfig(c, namespace, o.target, o.tokens);
  return { namespace, kubeconfig: kubeconfig.yaml };
}

async function createIfMissing(create: () => Promise<unknown>): Promise<void> {
  try {
    await create();
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
}
