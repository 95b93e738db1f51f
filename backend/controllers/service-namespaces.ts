/**
 * APIServiceNamespace `<consumer ns>` in cluster namespace `<cluster ns>` → provider namespace
 * `<cluster ns>-<consumer ns>` (annotation `klutch.anynines.com/api-service-namespace: <cluster ns>/<consumer ns>`)
 * with RoleBinding `klutch-binder` → ClusterRole `klutch-binder-<cluster ns>`, reported in status.namespace. When the
 * APIServiceNamespace goes, the namespace goes too; namespaces are keyed back to their APIServiceNamespace, so one
 * deleted while the backend was down is removed when it starts.
 */
import { Controller, objectKey, splitKey, TerminalError, type ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { BindResources, isConflict, isNotFound, MERGE_PATCH } from '../kube';
import { Labels, MANAGED_BY, PodSecurity } from '../labels';
import { binderRoleBinding, consumerRoleName } from '../provision/rbac';
import type { ControllerDeps } from './deps';

export function serviceNamespacesController(d: ControllerDeps): Controller {
  const c = new Controller({
    name: 'apiservicenamespaces',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: (key) => reconcileServiceNamespace(d, key),
  });
  c.watch(d.leader.serviceNamespaces, (s) => [objectKey(s)]);
  c.watch(d.leader.namespaces, (ns) => {
    const owner = ns.metadata?.annotations?.[Annotations.apiServiceNamespace];
    return owner ? [owner] : [];
  });
  return c;
}

export function serviceNamespaceName(clusterNamespace: string, name: string): string {
  return `${clusterNamespace}-${name}`;
}

export async function reconcileServiceNamespace(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const { namespace: clusterNs, name } = splitKey(key);
  if (!clusterNs) return;
  const target = serviceNamespaceName(clusterNs, name);
  const sn = d.leader.serviceNamespaces.get(name, clusterNs);
  if (!sn || sn.metadata.deletionTimestamp) {
    // Gone: delete the namespaces made for it (found by annotation, so a name clash is never deleted).
    for (const ns of d.leader.namespaces.list()) {
      if (ns.metadata?.annotations?.[Annotations.apiServiceNamespace] !== key || ns.metadata.deletionTimestamp) continue;
      await d.clients.core.deleteNamespace({ name: ns.metadata.name! }).catch((e: unknown) => {
        if (!isNotFound(e)) throw e;
      });
      d.log.info({ apiServiceNamespace: key, namespace: ns.metadata.name }, 'deleted the namespace of a removed APIServiceNamespace');
    }
    return;
  }
  if (target.length > 63) {
    throw new TerminalError(
      `APIServiceNamespace ${key}: the provider namespace "${target}" would be longer than 63 characters; use a shorter consumer namespace or --namespace-prefix`,
    );
  }
  const existing = d.leader.namespaces.get(target);
  if (existing && existing.metadata?.annotations?.[Annotations.apiServiceNamespace] !== key) {
    throw new TerminalError(`APIServiceNamespace ${key}: namespace ${target} exists and belongs to something else; it is left alone`);
  }
  if (!existing) {
    try {
      await d.clients.core.createNamespace({
        body: {
          metadata: {
            name: target,
            annotations: { [Annotations.apiServiceNamespace]: key },
            labels: { [Labels.clusterNamespace]: clusterNs, [Labels.managedBy]: MANAGED_BY, ...PodSecurity.providerNamespace },
          },
        },
      });
    } catch (e) {
      if (!isConflict(e)) throw e;
      const ns = await d.clients.core.readNamespace({ name: target });
      if (ns.metadata?.annotations?.[Annotations.apiServiceNamespace] !== key) {
        throw new TerminalError(`APIServiceNamespace ${key}: namespace ${target} exists and belongs to something else; it is left alone`);
      }
      if (ns.metadata?.deletionTimestamp) return { requeueAfterMs: 1000 }; // still going from an earlier life
    }
  } else if (existing.metadata?.deletionTimestamp) {
    return { requeueAfterMs: 1000 };
  }
  try {
    await d.clients.rbac.createNamespacedRoleBinding({
      namespace: target,
      body: binderRoleBinding(target, clusterNs, consumerRoleName(clusterNs)),
    });
  } catch (e) {
    if (!isConflict(e)) throw e;
  }
  if (sn.status?.namespace !== target) {
    const r = BindResources.namespaces;
    await d.clients.custom.patchNamespacedCustomObjectStatus(
      { group: r.group, version: r.version, plural: r.plural, namespace: clusterNs, name, body: { status: { namespace: target } } },
      MERGE_PATCH,
    );
  }
  return;
}
