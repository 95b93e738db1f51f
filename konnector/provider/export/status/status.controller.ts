/**
 * Status down, wired: keys are provider `namespace/name`; they come from the provider copies and from app-cluster
 * objects (a changed or vanished consumer object is looked at from its copy's side).
 */
import type { Controller } from '../../../../controller';
import { Stopwatch } from '../../../metrics';
import { consumerObj, providerObj, resourceClient, syncController, type ExportContext } from '../context';
import { reconcileStatus } from './status.reconcile';

export function statusController(x: ExportContext): Controller {
  const { rt, conn } = x;
  const consumer = resourceClient(rt.consumer, x.resource);
  const provider = resourceClient(conn.clients, x.sides.provider);
  const watch = new Stopwatch();
  const ctl = syncController(
    x,
    {
      name: 'status',
      direction: 'down',
      failure: (key) => `cannot sync the status of ${x.resource.kind} ${key} to the app cluster`,
      reconcile: (namespace, name, key) =>
        reconcileStatus(
          {
            // As the app cluster's version has it: its status is what comes down.
            getProvider: (ns, n) => {
              const p = providerObj(x, ns, n);
              return p && x.sides.toConsumer(p);
            },
            namespaces: conn.map,
            claim: x.statusConditions,
            ...(x.bindingHold ? { bindingHold: x.bindingHold } : {}),
            getConsumer: (ns, n) => consumerObj(x, ns, n),
            readConsumer: (ns, n) => consumer.read(ns, n),
            writeConsumerStatus: async (c, status) => {
              await consumer.patch(
                c.metadata.namespace!,
                c.metadata.name,
                [{ op: 'add', path: '/status', value: status }],
                x.statusSubresource,
              );
            },
            deleteProvider: async (ns, n, uid) => {
              x.log.info({ object: `${ns}/${n}` }, 'the app-cluster object is gone: deleting its copy on the provider');
              await provider.delete(ns, n, uid);
            },
            observe: (what) => rt.metrics.syncSeconds.observe({ direction: what === 'status' ? 'down' : 'delete' }, watch.elapsed(key)),
          },
          namespace,
          name,
        ),
    },
    watch,
  );
  x.provider.each((pns, inf) =>
    ctl.watch(inf, (o) => {
      const k = `${pns}/${o.metadata!.name}`;
      watch.mark(k);
      return [k];
    }),
  );
  ctl.watch(x.consumer, (c) => {
    const mapped = conn.map.providerNamespace(c.metadata.namespace!);
    return mapped.state === 'assigned' ? [`${mapped.namespace}/${c.metadata.name}`] : [];
  });
  return ctl;
}
