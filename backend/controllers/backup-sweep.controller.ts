/**
 * The sweep of the backup store (backup-store/janitor.ts), on the leader: one key, reconciled once it leads and then
 * every --backup-store-sweep-interval. A failed pass is retried with the queue's backoff.
 */
import { Controller } from '../../controller';
import { sweepBackups, type SweepDeps } from '../backup-store/janitor';
import type { StoreObjects } from '../backup-store/objects';
import type { StoreAdmin } from '../backup-store/versitygw';
import { type BackendClients, isNotFound } from '../kube';
import type { ControllerDeps } from './deps';

const KEY = 'backup-store';

export function backupSweepController(d: ControllerDeps, store: NonNullable<ControllerDeps['backupStore']>): Controller {
  const deps = sweepDeps(d.clients, store.admin, store.sweep.objects);
  const ctl = new Controller({
    name: 'backup-sweep',
    log: d.log,
    registry: d.registry,
    reconcile: async (_key, ctx) => {
      const { removed } = await sweepBackups(
        deps,
        { bucket: store.settings.bucket, keepMs: store.sweep.keepMs, now: Date.now() },
        (message, err) => (err ? ctx.log.error({ err }, message) : ctx.log.info(message)),
      );
      ctx.log.info({ removed: removed.length }, 'swept the backup store');
      return { requeueAfterMs: store.sweep.intervalMs };
    },
  });
  ctl.enqueue(KEY);
  return ctl;
}

/** The sweep's reads of the control plane, live (a sweep an hour needs no cache), and the store's admin and objects. */
export function sweepDeps(c: Pick<BackendClients, 'core' | 'custom'>, admin: StoreAdmin, objects: StoreObjects): SweepDeps {
  return {
    buckets: () => admin.listBuckets(),
    prefixes: (bucket) => objects.prefixes(bucket),
    newest: (bucket, prefix) => objects.newest(bucket, prefix),
    deleteObjects: (bucket, prefix, until) => objects.deleteObjects(bucket, prefix, until),
    deleteBucket: (bucket) => objects.deleteBucket(bucket),
    deleteUser: (access) => admin.deleteUser(access),
    namespaceUid: (name) =>
      c.core.readNamespace({ name }).then(
        (ns) => ns.metadata?.uid ?? null,
        (e: unknown) => {
          if (isNotFound(e)) return null;
          throw e;
        },
      ),
    clusters: async (namespace) => {
      const list = (await c.custom.listNamespacedCustomObject({
        group: 'postgresql.cnpg.io',
        version: 'v1',
        namespace,
        plural: 'clusters',
      })) as {
        items?: { metadata?: { name?: string } }[];
      };
      return new Set((list.items ?? []).flatMap((x) => (x.metadata?.name ? [x.metadata.name] : [])));
    },
  };
}
