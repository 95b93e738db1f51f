/**
 * The heartbeat of one provider connection, wired: one key (the connection's ClusterBinding), enqueued by the
 * ClusterBinding's events, by the connection (a binding appeared, credentials rotated) and by its own requeue. It
 * builds the reconcile's narrow dependencies from the connection's clients and caches, and keeps each outcome on the
 * connection, where the bindings' status reads it.
 */
import { Controller } from '../../controller';
import { bindObjects, CLUSTER_BINDING_NAME, MERGE_PATCH } from '../../exports/bind-api';
import { isNotFound, messageOf } from '../../lib/kube-errors';
import { BindResources, type Runtime } from '../runtime';
import type { ProviderConnection } from './connection';
import { reconcileHeartbeat, type ConsumerKubeconfig, type HeartbeatDeps, type HeartbeatOutcome } from './heartbeat.reconcile';

/** The heartbeat controller's only key. */
export const HEARTBEAT_KEY = 'heartbeat';

export function heartbeatController(conn: ProviderConnection, rt: Runtime): Controller {
  const ns = conn.namespace;
  const clusterBindings = bindObjects(conn.clients.custom, BindResources.clusterBindings);
  const deps: HeartbeatDeps = {
    providerNamespace: ns,
    intervalMs: rt.heartbeatIntervalMs,
    version: rt.version,
    now: () => new Date(),
    get endpoint() {
      return conn.endpoint;
    },
    getClusterBinding: conn.clusterBinding,
    readProviderSecret: async (name) => {
      try {
        return await conn.clients.core.readNamespacedSecret({ namespace: ns, name });
      } catch (e) {
        if (isNotFound(e)) return undefined;
        throw new Error(`cannot read the provider's kubeconfig Secret ${ns}/${name}: ${messageOf(e)}`, { cause: e });
      }
    },
    consumerKubeconfigs: () =>
      [...conn.targets.values()].map((t) => {
        const raw = rt.kubeconfigSecret(t.namespace, t.name)?.data?.[t.key];
        return { ...t, kubeconfig: raw ? Buffer.from(raw, 'base64').toString('utf8') : undefined };
      }),
    writeConsumerKubeconfig: async (t: ConsumerKubeconfig, text: string) => {
      await rt.home.core.patchNamespacedSecret(
        { namespace: t.namespace, name: t.name, body: { data: { [t.key]: Buffer.from(text).toString('base64') } } },
        MERGE_PATCH,
      );
      conn.log.info({ secret: `${t.namespace}/${t.name}` }, "copied the provider's kubeconfig into the binding's Secret (rotation)");
    },
    writeHeartbeat: async (status) => {
      try {
        await clusterBindings.patchStatus({ namespace: ns, name: CLUSTER_BINDING_NAME }, status);
        rt.metrics.heartbeats.inc({ result: 'ok' });
      } catch (e) {
        throw new Error(`cannot write the heartbeat into ClusterBinding ${ns}/${CLUSTER_BINDING_NAME}: ${messageOf(e)}`, { cause: e });
      }
    },
  };
  const ctl = new Controller({
    name: `heartbeat/${ns}`,
    log: conn.log,
    registry: rt.registry,
    reconcile: async () => {
      let outcome: HeartbeatOutcome;
      try {
        outcome = await reconcileHeartbeat(deps);
      } catch (e) {
        const failing = conn.heartbeat.error !== undefined;
        conn.heartbeat = { ...conn.heartbeat, error: messageOf(e) };
        if (!failing) conn.statusChanged();
        rt.metrics.heartbeats.inc({ result: 'error' });
        throw e;
      }
      commitHeartbeat(conn, rt, outcome);
      if (outcome.error) throw outcome.error;
      return { requeueAfterMs: outcome.requeueAfterMs };
    },
  });
  ctl.watch(conn.clusterBindings, () => [HEARTBEAT_KEY]);
  return ctl;
}

/**
 * Keeps a heartbeat's outcome on the connection, once: the last beat (never older than the one it knew: the cache may
 * lag behind its own write), the refused rotations, a warning Event on each app-cluster Secret that kept its
 * kubeconfig; and tells the bindings when what their status shows changed.
 */
export function commitHeartbeat(
  conn: Pick<ProviderConnection, 'heartbeat' | 'refusedRotations' | 'statusChanged'>,
  rt: Pick<Runtime, 'metrics' | 'kubeconfigSecret' | 'warn'>,
  o: HeartbeatOutcome,
): void {
  const before = conn.heartbeat;
  const at = before.at && o.beatAt && before.at > o.beatAt ? before.at : (o.beatAt ?? before.at);
  conn.heartbeat = { ...(at ? { at } : {}), ...(o.error ? { error: messageOf(o.error) } : {}) };
  if (o.error) rt.metrics.heartbeats.inc({ result: 'error' });
  const refusals = (m: ProviderConnection['refusedRotations']) => JSON.stringify([...m].map(([k, r]) => [k, r.reason, r.message]));
  const was = refusals(conn.refusedRotations);
  conn.refusedRotations = new Map(o.refused.map((r) => [`${r.target.namespace}/${r.target.name}`, r]));
  const failedOrBack = (before.error === undefined) !== (o.error === undefined);
  if ((!before.at && at) || failedOrBack || refusals(conn.refusedRotations) !== was) conn.statusChanged();
  for (const r of o.refused) {
    const uid = rt.kubeconfigSecret(r.target.namespace, r.target.name)?.metadata?.uid;
    rt.warn(
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: r.target.name, namespace: r.target.namespace, uid } },
      r.reason,
      r.message,
    );
  }
}
