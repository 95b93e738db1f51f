/**
 * Unbound consumers go: a cluster namespace whose consumer never got an export within `--unbound-consumer-ttl` (a
 * bind that was abandoned or refused, or someone making namespaces) is deleted with everything in it. The first
 * export is remembered on the ClusterBinding (annotation `klutch-kit.anynines.com/first-export`), so a consumer that
 * later unbinds all its APIs is not deleted, and a consumer with an APIServiceNamespace (claims, so data) never is.
 * `key` is a cluster namespace's name.
 */
import { Controller, type ReconcileResult } from '../../controller';
import { Annotations, CLUSTER_BINDING_NAME } from '../../exports/bind-api';
import { BindResources, isNotFound, MERGE_PATCH } from '../kube';
import { BackendAnnotations } from '../labels';
import { ours, type ControllerDeps } from './deps';

export const UNBOUND_TTL_MS = 3_600_000;

export function consumerLifecycleController(d: ControllerDeps): Controller {
  const c = new Controller({ name: 'consumerlifecycle', log: d.log, registry: d.registry, reconcile: (key) => reconcileLifecycle(d, key) });
  const cluster = (ns: string | undefined) =>
    ns && ours(d, ns) && d.leader.namespaces.get(ns)?.metadata?.annotations?.[Annotations.identity] ? [ns] : [];
  c.watch(d.leader.namespaces, (ns) => cluster(ns.metadata?.name));
  c.watch(d.leader.exports, (e) => cluster(e.metadata.namespace));
  c.watch(d.leader.clusterBindings, (b) => cluster(b.metadata.namespace));
  return c;
}

export async function reconcileLifecycle(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const ns = d.leader.namespaces.get(key);
  if (!ns?.metadata?.annotations?.[Annotations.identity] || ns.metadata.deletionTimestamp) return;
  const binding = d.leader.clusterBindings.get(CLUSTER_BINDING_NAME, key);
  if (binding?.metadata.annotations?.[BackendAnnotations.firstExport]) return;
  // Never a consumer with provider namespaces: deleting its APIServiceNamespaces deletes those namespaces, and the
  // claims and databases in them (a consumer a Klutch backend made, whose exports are gone, can still have claims).
  if (d.leader.serviceNamespaces.list(key).length > 0) return;
  if (d.leader.exports.list(key).length > 0) {
    if (!binding) return; // provisioning makes it; its event brings us back
    const r = BindResources.clusterBindings;
    await d.clients.custom.patchNamespacedCustomObject(
      {
        group: r.group,
        version: r.version,
        plural: r.plural,
        namespace: key,
        name: CLUSTER_BINDING_NAME,
        body: { metadata: { annotations: { [BackendAnnotations.firstExport]: new Date().toISOString() } } },
      },
      MERGE_PATCH,
    );
    return;
  }
  const ttl = d.unboundConsumerTtlMs ?? UNBOUND_TTL_MS;
  const age = Date.now() - Date.parse(ns.metadata.creationTimestamp as unknown as string);
  // A request still waiting for its CRD may yet export.
  const pending = d.leader.exportRequests.list(key).some((r) => !r.status?.phase || r.status.phase === 'Pending');
  if (Number.isNaN(age) || age < ttl || pending) return { requeueAfterMs: Math.max(1000, Number.isNaN(age) ? ttl : ttl - age) };
  await d.clients.core.deleteNamespace({ name: key }).catch((e: unknown) => {
    if (!isNotFound(e)) throw e;
  });
  d.log.info(
    { namespace: key, identity: ns.metadata.annotations[Annotations.identity], ttlMs: ttl },
    'deleted an unbound consumer: no export within --unbound-consumer-ttl',
  );
  return;
}
