/**
 * APIServiceNamespace `<consumer ns>` in cluster namespace `<cluster ns>` → provider namespace
 * `<cluster ns>-<consumer ns>` (annotation `klutch.anynines.com/api-service-namespace: <cluster ns>/<consumer ns>`)
 * with RoleBinding `klutch-binder` → ClusterRole `klutch-binder-<cluster ns>`, reported in status.namespace. When the
 * APIServiceNamespace goes, the namespace goes too; namespaces are keyed back to their APIServiceNamespace, so one
 * deleted while the backend was down is removed when it starts.
 */
import type { V1Namespace, V1RoleBinding } from '@kubernetes/client-node';
import { refKey, TerminalError, type ObjectRef, type ReconcileContext, type ReconcileResult } from '../../controller';
import { Annotations, type APIServiceNamespace } from '../../exports/bind-api';
import { Labels, MANAGED_BY, PodSecurity } from '../labels';
import { binderRoleBinding, consumerRoleName } from '../provision/rbac';

export interface ServiceNamespaceDeps {
  /**
   * Whether a cluster namespace is this backend's (`--namespace-prefix`): another backend's APIServiceNamespaces, and
   * the namespaces made for them, are that backend's to make and delete.
   */
  ours(clusterNamespace: string): boolean;
  /** The APIServiceNamespace from the cache. */
  getServiceNamespace(ref: ObjectRef): APIServiceNamespace | undefined;
  /** A namespace from the cache (the backend's namespaces). */
  getNamespace(name: string): V1Namespace | undefined;
  /** The namespaces annotated as made for APIServiceNamespace `<cluster ns>/<name>` (cache). */
  namespacesFor(key: string): readonly V1Namespace[];
  /** Creates the namespace; one that exists already is read back live and returned instead. */
  createNamespace(ns: V1Namespace): Promise<V1Namespace | undefined>;
  /** Deletes a namespace (gone already is fine). */
  deleteNamespace(name: string): Promise<void>;
  /** Creates a RoleBinding (one that exists already is fine). */
  createRoleBinding(rb: V1RoleBinding): Promise<void>;
  /**
   * Applies the claims' ResourceQuota (--claim-quota; nothing without it) in a provider namespace; `created`: this
   * reconcile made the namespace, so nothing in it counts yet.
   */
  applyClaimQuota(namespace: string, created: boolean): Promise<void>;
  /**
   * Makes the namespace a backup tenant of the platform's object store (backup-store/tenant.ts); none without
   * --backup-store-endpoint.
   */
  ensureBackupTenant?(ns: V1Namespace): Promise<'ready' | 'made'>;
  /** The one status write: status.namespace. */
  writeStatus(ref: ObjectRef, namespace: string): Promise<void>;
}

/** How often a provider namespace's backup tenant is looked at again (its Secret). */
export const BACKUP_TENANT_RECHECK_MS = 10 * 60_000;

export function serviceNamespaceName(clusterNamespace: string, name: string): string {
  return `${clusterNamespace}-${name}`;
}

export async function reconcileServiceNamespace(
  d: ServiceNamespaceDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const clusterNs = ref.namespace;
  if (!clusterNs || !d.ours(clusterNs)) return;
  const key = refKey(ref);
  const target = serviceNamespaceName(clusterNs, ref.name);
  const sn = d.getServiceNamespace(ref);
  if (!sn || sn.metadata.deletionTimestamp) {
    // Gone: delete the namespaces made for it (found by annotation, so a name clash is never deleted).
    for (const ns of d.namespacesFor(key)) {
      if (ns.metadata?.deletionTimestamp) continue;
      await d.deleteNamespace(ns.metadata!.name!);
      ctx.log.info({ namespace: ns.metadata!.name }, 'deleted the namespace of a removed APIServiceNamespace');
    }
    return;
  }
  if (target.length > 63) {
    throw new TerminalError(
      `APIServiceNamespace ${key}: the provider namespace "${target}" would be longer than 63 characters; use a shorter consumer namespace or --namespace-prefix`,
    );
  }
  const theirs = () =>
    new TerminalError(`APIServiceNamespace ${key}: namespace ${target} exists and belongs to something else; it is left alone`);
  let existing = d.getNamespace(target);
  if (existing && existing.metadata?.annotations?.[Annotations.apiServiceNamespace] !== key) throw theirs();
  if (!existing) {
    existing = await d.createNamespace({
      metadata: {
        name: target,
        annotations: { [Annotations.apiServiceNamespace]: key },
        labels: { [Labels.clusterNamespace]: clusterNs, [Labels.managedBy]: MANAGED_BY, ...PodSecurity.providerNamespace },
      },
    });
    if (existing && existing.metadata?.annotations?.[Annotations.apiServiceNamespace] !== key) throw theirs();
  }
  if (existing?.metadata?.deletionTimestamp) return { requeueAfterMs: 1000 }; // still going from an earlier life
  await d.createRoleBinding(binderRoleBinding(target, clusterNs, consumerRoleName(clusterNs)));
  // createNamespace answers undefined where it made the namespace just now.
  await d.applyClaimQuota(target, !existing);
  if (sn.status?.namespace !== target) await d.writeStatus(ref, target);
  // A namespace made just now is not read back: its watch event brings the next reconcile, with its uid.
  if (!existing || !d.ensureBackupTenant) return;
  if ((await d.ensureBackupTenant(existing)) === 'made')
    ctx.log.info({ namespace: target }, "made the namespace's backup tenant in the object store");
  // Its Secret is not watched: a deleted or overwritten one is made again at the next look.
  return { requeueAfterMs: BACKUP_TENANT_RECHECK_MS };
}
