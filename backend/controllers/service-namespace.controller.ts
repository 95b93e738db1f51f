/**
 * Provider namespaces for APIServiceNamespaces, wired: keys are APIServiceNamespaces `<cluster ns>/<name>`; a
 * namespace's event is keyed back to the APIServiceNamespace its annotation names.
 */
import { byRef, Controller, objectKey } from '../../controller';
import { Annotations, bindObjects } from '../../exports/bind-api';
import { BindResources, isConflict, isNotFound, MERGE_PATCH } from '../kube';
import { ours, type ControllerDeps } from './deps';
import { reconcileServiceNamespace, type ServiceNamespaceDeps } from './service-namespace.reconcile';
import { applyQuota, CLAIM_QUOTA } from '../provision/quota';
import { type BackupTenantDeps, ensureBackupTenant, TENANT_ANNOTATION } from '../backup-store/tenant';

export function serviceNamespacesController(d: ControllerDeps): Controller {
  const c = d.clients;
  const serviceNamespaces = bindObjects(c.custom, BindResources.serviceNamespaces);
  const deps: ServiceNamespaceDeps = {
    ours: (namespace) => ours(d, namespace),
    getServiceNamespace: (ref) => d.leader.serviceNamespaces.get(ref.name, ref.namespace),
    getNamespace: (name) => d.leader.namespaces.get(name),
    namespacesFor: (key) => d.leader.namespaces.list().filter((ns) => ns.metadata?.annotations?.[Annotations.apiServiceNamespace] === key),
    createNamespace: async (body) => {
      try {
        await c.core.createNamespace({ body });
        return undefined;
      } catch (e) {
        if (!isConflict(e)) throw e;
        return c.core.readNamespace({ name: body.metadata!.name! });
      }
    },
    deleteNamespace: (name) =>
      c.core.deleteNamespace({ name }).then(
        () => undefined,
        (e: unknown) => {
          if (!isNotFound(e)) throw e;
        },
      ),
    createRoleBinding: (body) =>
      c.rbac.createNamespacedRoleBinding({ namespace: body.metadata!.namespace!, body }).then(
        () => undefined,
        (e: unknown) => {
          if (!isConflict(e)) throw e;
        },
      ),
    applyClaimQuota: async (namespace, created) => {
      if (!d.claimQuota || !Object.keys(d.claimQuota).length) return;
      await applyQuota(c, namespace, CLAIM_QUOTA, d.claimQuota, created ? async () => '0' : undefined);
    },
    ...(d.backupStore ? { ensureBackupTenant: (ns) => ensureBackupTenant(backupTenantDeps(d, d.backupStore!), ns) } : {}),
    writeStatus: (ref, namespace) => serviceNamespaces.patchStatus({ namespace: ref.namespace!, name: ref.name }, { namespace }),
  };
  const ctl = new Controller({
    name: 'apiservicenamespaces',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileServiceNamespace(deps, ref, ctx)),
  });
  ctl.watch(d.leader.serviceNamespaces, (s) => (ours(d, s.metadata.namespace) ? [objectKey(s)] : []));
  ctl.watch(d.leader.namespaces, (ns) => {
    const owner = ns.metadata?.annotations?.[Annotations.apiServiceNamespace];
    return owner ? [owner] : [];
  });
  return ctl;
}

/** The tenant's Secret written whole (replacing one of its name, whoever made it) and the namespace annotated. */
function backupTenantDeps(d: ControllerDeps, store: NonNullable<ControllerDeps['backupStore']>): BackupTenantDeps {
  const c = d.clients;
  return {
    ...store,
    readSecret: (namespace, name) =>
      c.core.readNamespacedSecret({ namespace, name }).catch((e: unknown) => {
        if (isNotFound(e)) return undefined;
        throw e;
      }),
    writeSecret: async (body) => {
      const ref = { namespace: body.metadata!.namespace!, name: body.metadata!.name! };
      try {
        await c.core.createNamespacedSecret({ namespace: ref.namespace, body });
      } catch (e) {
        if (!isConflict(e)) throw e;
        await c.core.replaceNamespacedSecret({ ...ref, body });
      }
    },
    readAnnotation: async (name) => (await c.core.readNamespace({ name })).metadata?.annotations?.[TENANT_ANNOTATION],
    annotate: async (namespace, access) => {
      await c.core.patchNamespace({ name: namespace, body: { metadata: { annotations: { [TENANT_ANNOTATION]: access } } } }, MERGE_PATCH);
    },
  };
}
