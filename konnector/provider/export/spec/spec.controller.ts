/**
 * Spec up, wired: keys are app-cluster `namespace/name`; they come from the app-cluster informer, from provider
 * copies that appear or vanish, and from APIServiceNamespaces that get their provider namespace.
 */
import type { Controller } from '../../../../controller';
import { BIND_API_VERSION, Kinds } from '../../../../exports/bind-api';
import { readyCondition, type ClaimCondition as Condition } from '../../../../lib/claim-hold';
import { isConflict } from '../../../../lib/kube-errors';
import { keyOf } from '../../../kube/objects';
import { Stopwatch } from '../../../metrics';
import { BindResources } from '../../../runtime';
import { consumerObj, pointer, providerObj, resourceClient, syncController, type ExportContext } from '../context';
import { reconcileSpec } from './spec.reconcile';

export function specController(x: ExportContext): Controller {
  const { rt, conn } = x;
  const consumer = resourceClient(rt.consumer, x.resource);
  const provider = resourceClient(conn.clients, x.sides.provider);
  const watch = new Stopwatch();
  /** Applies whose result the provider cache has not shown yet, by key (dropped on the copy's event, or after 10 s). */
  const applied = new Map<string, { body: string; at: number }>();
  const ctl = syncController(
    x,
    {
      name: 'spec',
      direction: 'up',
      failure: (key) => `cannot sync ${x.resource.kind} ${key} to the provider`,
      reconcile: (namespace, name, key) =>
        reconcileSpec(
          {
            getConsumer: (ns, n) => consumerObj(x, ns, n),
            namespaces: conn.map,
            ensureServiceNamespace: async (ns) => {
              try {
                await conn.clients.custom.createNamespacedCustomObject({
                  ...BindResources.serviceNamespaces,
                  namespace: conn.namespace,
                  body: {
                    apiVersion: BIND_API_VERSION,
                    kind: Kinds.APIServiceNamespace,
                    metadata: { name: ns, namespace: conn.namespace },
                    spec: {},
                  },
                });
                x.log.info({ namespace: ns }, 'asked the provider for a namespace (APIServiceNamespace)');
              } catch (e) {
                if (!isConflict(e)) throw e;
              }
            },
            getProvider: (ns, n) => providerObj(x, ns, n),
            readProvider: (ns, n) => provider.read(ns, n),
            toProvider: x.sides.toProvider,
            applyProvider: async (o) => {
              const r = await provider.apply(o);
              applied.set(key, { body: JSON.stringify(o), at: Date.now() });
              if (applied.size > 10_000) for (const [k, v] of applied) if (Date.now() - v.at > 10_000) applied.delete(k);
              return r;
            },
            justApplied: (d) => {
              const e = applied.get(key);
              return e !== undefined && Date.now() - e.at < 10_000 && e.body === JSON.stringify(d);
            },
            deleteProvider: (ns, n, uid) => provider.delete(ns, n, uid),
            updateConsumerMeta: (c, finalizers, annotations) => consumer.patch(namespace, name, metaPatch(c, finalizers, annotations)),
            warn: rt.warn,
            hold: async (c, hold) => {
              if (!x.statusConditions) return;
              const status = (c.status ?? {}) as { conditions?: Condition[] };
              const conditions = Array.isArray(status.conditions) ? status.conditions : [];
              const ready = readyCondition(hold, new Date().toISOString());
              const was = conditions.find((k) => k.type === 'Ready');
              if (was && was.status === ready.status && was.reason === ready.reason && was.message === ready.message) return;
              const value = { ...status, conditions: [...conditions.filter((k) => k.type !== 'Ready'), ready] };
              await consumer.patch(namespace, name, [{ op: 'add', path: '/status', value }], x.statusSubresource);
            },
            observe: (what) => rt.metrics.syncSeconds.observe({ direction: what === 'applied' ? 'up' : 'delete' }, watch.elapsed(key)),
          },
          namespace,
          name,
        ),
    },
    watch,
  );
  const mark = (keys: string[]) => (keys.forEach((k) => watch.mark(k)), keys);
  ctl.watch(x.consumer, (o) => mark([keyOf(o)]));
  x.provider.each((pns, inf) =>
    ctl.watch(inf, (o, event) => {
      const ns = conn.map.consumerNamespace(pns);
      if (ns === undefined) return [];
      const key = `${ns}/${o.metadata!.name}`;
      applied.delete(key);
      return event === 'update' ? [] : [key];
    }),
  );
  // A namespace assigned (or taken away) upstream: every object of the app namespace moves on.
  ctl.watch(conn.serviceNamespaces, (sn) => x.consumer.list(sn.metadata!.name).map((o) => keyOf(o)));
  return ctl;
}

/** A JSON patch that sets the finalizers (guarded by the old list) and adds annotations. */
export function metaPatch(
  c: { metadata?: { finalizers?: string[]; annotations?: Record<string, string> } },
  finalizers: string[],
  annotations: Record<string, string>,
): unknown[] {
  const ops: unknown[] = [];
  const old = c.metadata?.finalizers;
  if (old)
    ops.push({ op: 'test', path: '/metadata/finalizers', value: old }, { op: 'replace', path: '/metadata/finalizers', value: finalizers });
  else if (finalizers.length) ops.push({ op: 'add', path: '/metadata/finalizers', value: finalizers });
  const entries = Object.entries(annotations);
  if (entries.length && !c.metadata?.annotations) ops.push({ op: 'add', path: '/metadata/annotations', value: annotations });
  else for (const [k, v] of entries) ops.push({ op: 'add', path: `/metadata/annotations/${pointer(k)}`, value: v });
  return ops;
}
