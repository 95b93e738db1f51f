/**
 * Permission claims, wired for one claimed resource (Secrets or ConfigMaps) in the `Provider` direction: sources are
 * provider objects in the assigned provider namespaces — the whole namespace where the provider lets the consumer
 * list it, else only the objects it shares by name (claimed-source.ts) — and targets are the copies in the app
 * cluster (watched by the `klutch.anynines.com/resource-owner` label, so the konnector never lists an app's other
 * Secrets).
 */
import type { V1ConfigMap, V1Secret } from '@kubernetes/client-node';
import { watchInformer, type Controller, type WatchInformer } from '../../../../controller';
import { Annotations } from '../../../../exports/bind-api';
import { isConflict, isNotFound } from '../../../../lib/kube-errors';
import { NamespacedInformers } from '../../../kube/namespaced-informers';
import { trimForCache } from '../../../kube/trim';
import { isDeleting, keyOf, type Listed, type Obj } from '../../../kube/objects';
import { Stopwatch } from '../../../metrics';
import { consumerObj, pointer, providerObj, resourceClient, syncController, type ExportContext } from '../context';
import { claimedSource } from './claimed-source';
import { claimOwner, reconcileClaim } from './claims.reconcile';

export type ClaimedResource = 'secrets' | 'configmaps';
const KIND: Record<ClaimedResource, string> = { secrets: 'Secret', configmaps: 'ConfigMap' };

export interface ClaimSync {
  readonly controller: Controller;
  readonly sources: NamespacedInformers<Listed>;
  readonly targets: WatchInformer<Listed>;
}

export function claimSync(x: ExportContext, resource: ClaimedResource, names: readonly string[]): ClaimSync {
  const { rt, conn } = x;
  const kind = KIND[resource];
  // A cached object as wire JSON; a live read (client-node's typed Secret or ConfigMap) is read only for its name,
  // labels, annotations, type and resourceVersion, which both shapes hold alike.
  const withKind = (o: Listed | V1Secret | V1ConfigMap | undefined): Obj | undefined =>
    o ? ({ ...o, apiVersion: 'v1', kind } as Obj) : undefined;
  const core = rt.consumer.core;
  const sources = new NamespacedInformers<Listed>((ns) =>
    claimedSource({ kc: conn.kc, authz: conn.clients.authz, namespace: ns, resource, log: x.log }),
  );
  const selector = `${Annotations.resourceOwner}=Provider`;
  const targets = watchInformer<Listed>({
    kc: rt.consumer.kc,
    path: `/api/v1/${resource}`,
    labelSelector: selector,
    log: x.log,
    transform: trimForCache(),
  });
  const watch = new Stopwatch();
  const controller = syncController(
    x,
    {
      name: `claims-${resource}`,
      direction: 'claims',
      failure: (key) => `cannot copy ${kind} ${key} to the app cluster`,
      reconcile: (namespace, name, key) =>
        reconcileClaim(
          {
            from: 'Provider',
            names,
            getSource: (ns, n) => withKind(sources.get(ns, n)),
            listed: (pns) => sources.listed(pns) && x.provider.listed(pns),
            targetNamespace: (pns) => conn.map.consumerNamespace(pns),
            ownerTwin: (src) => {
              const ref = claimOwner(src, x.resource.kind, x.resource.group);
              const owner = ref && providerObj(x, src.metadata.namespace!, ref.name);
              if (!ref || !owner || (ref.uid !== undefined && owner.metadata.uid !== ref.uid)) return undefined;
              if (owner.metadata.annotations?.[Annotations.bound] !== 'true') return undefined;
              const cns = conn.map.consumerNamespace(src.metadata.namespace!);
              const twin = cns === undefined ? undefined : consumerObj(x, cns, ref.name);
              return twin && !isDeleting(twin) ? twin : undefined;
            },
            getTarget: (ns, n) => withKind(targets.get(n, ns)),
            writeTarget: async (desired, existing) => {
              const ns = desired.metadata.namespace!;
              const body = desired as never;
              if (existing && resource === 'secrets' && (existing.type ?? 'Opaque') !== (desired.type ?? 'Opaque')) {
                await core.deleteNamespacedSecret({ namespace: ns, name: desired.metadata.name }); // type is immutable
                existing = undefined;
              }
              try {
                if (existing) {
                  const withRv = {
                    ...desired,
                    metadata: { ...desired.metadata, resourceVersion: existing.metadata.resourceVersion },
                  } as never;
                  if (resource === 'secrets')
                    await core.replaceNamespacedSecret({ namespace: ns, name: desired.metadata.name, body: withRv });
                  else await core.replaceNamespacedConfigMap({ namespace: ns, name: desired.metadata.name, body: withRv });
                } else if (resource === 'secrets') await core.createNamespacedSecret({ namespace: ns, body });
                else await core.createNamespacedConfigMap({ namespace: ns, body });
              } catch (e) {
                // A Secret of that name the label watch does not show: the reconcile's conflict check needs to see it.
                if (isConflict(e) && !existing) {
                  const other = withKind(
                    resource === 'secrets'
                      ? await core.readNamespacedSecret({ namespace: ns, name: desired.metadata.name })
                      : await core.readNamespacedConfigMap({ namespace: ns, name: desired.metadata.name }),
                  );
                  if (other && other.metadata.annotations?.[Annotations.resourceOwner] !== 'Provider') {
                    rt.warn(
                      other,
                      'ClaimConflict',
                      `${kind} ${ns}/${desired.metadata.name} exists in the app cluster and is not a copy made by the konnector; rename or remove it so the claimed ${kind} can be copied`,
                    );
                    return false;
                  }
                  // A copy Klutch's konnector made (its annotation, without the label we watch): taken over in place,
                  // so the app's Secret is never missing while the konnectors are switched.
                  if (other && (resource !== 'secrets' || (other.type ?? 'Opaque') === (desired.type ?? 'Opaque'))) {
                    const adopted = {
                      ...desired,
                      metadata: { ...desired.metadata, resourceVersion: other.metadata.resourceVersion },
                    } as never;
                    if (resource === 'secrets')
                      await core.replaceNamespacedSecret({ namespace: ns, name: desired.metadata.name, body: adopted });
                    else await core.replaceNamespacedConfigMap({ namespace: ns, name: desired.metadata.name, body: adopted });
                    rt.metrics.syncSeconds.observe({ direction: 'claims' }, watch.elapsed(key));
                    return true;
                  }
                }
                throw e;
              }
              rt.metrics.syncSeconds.observe({ direction: 'claims' }, watch.elapsed(key));
              return true;
            },
            deleteTarget: async (ns, n, uid) => {
              try {
                const opts = { namespace: ns, name: n, body: { preconditions: { uid } } };
                if (resource === 'secrets') await core.deleteNamespacedSecret(opts);
                else await core.deleteNamespacedConfigMap(opts);
              } catch (e) {
                if (!isNotFound(e) && !isConflict(e)) throw e;
              }
            },
            deleteKlutchCopy: async (ns, n) => {
              const read =
                resource === 'secrets'
                  ? core.readNamespacedSecret({ namespace: ns, name: n })
                  : core.readNamespacedConfigMap({ namespace: ns, name: n });
              const o = withKind(await read.catch((e: unknown) => (isNotFound(e) ? undefined : Promise.reject(e))));
              if (
                !o ||
                o.metadata.annotations?.[Annotations.resourceOwner] !== 'Provider' ||
                o.metadata.labels?.[Annotations.resourceOwner]
              )
                return;
              // Marked first (the admission policy lets the konnector delete only marked copies), then deleted.
              const marked = {
                ...o,
                metadata: { ...o.metadata, labels: { ...o.metadata.labels, [Annotations.resourceOwner]: 'Provider' } },
              } as never;
              if (resource === 'secrets') await core.replaceNamespacedSecret({ namespace: ns, name: n, body: marked });
              else await core.replaceNamespacedConfigMap({ namespace: ns, name: n, body: marked });
              const opts = { namespace: ns, name: n, body: { preconditions: { uid: o.metadata.uid } } };
              await (resource === 'secrets' ? core.deleteNamespacedSecret(opts) : core.deleteNamespacedConfigMap(opts)).catch(
                (e: unknown) => {
                  if (!isNotFound(e) && !isConflict(e)) throw e;
                },
              );
              x.log.info({ namespace: ns, name: n, kind }, "deleted a copy Klutch's konnector made: its provider object is gone");
            },
            warn: rt.warn,
            ...(resource === 'secrets' ? { acknowledge: (src: Obj, receipt: string) => acknowledge(x, src, receipt) } : {}),
          },
          namespace,
          name,
        ),
    },
    watch,
  );
  sources.each((pns, inf) =>
    controller.watch(inf, (o) => {
      const k = `${pns}/${o.metadata!.name}`;
      watch.mark(k);
      return [k];
    }),
  );
  controller.watch(targets, (o) => {
    const mapped = conn.map.providerNamespace(o.metadata!.namespace!);
    return mapped.state === 'assigned' ? [`${mapped.namespace}/${o.metadata!.name}`] : [];
  });
  // A bound object that appears, changes or goes decides whether the sources it owns are claimed.
  const owned = (pns: string, ownerName: string) =>
    sources
      .list(pns)
      .filter((s) => claimOwner(s, x.resource.kind, x.resource.group)?.name === ownerName)
      .map((s) => keyOf(s));
  x.provider.each((pns, inf) => controller.watch(inf, (o) => owned(pns, o.metadata!.name!)));
  controller.watch(x.consumer, (o) => {
    const mapped = conn.map.providerNamespace(o.metadata!.namespace!);
    return mapped.state === 'assigned' ? owned(mapped.namespace, o.metadata!.name!) : [];
  });
  return { controller, sources, targets };
}

/**
 * Writes the receipt of the credentials now in the app cluster on the bound object upstream that owns `source`,
 * unless it says so already (the cache shows it). A JSON patch of that one annotation: it needs the object to exist,
 * and the spec syncer's applies leave a field they do not own alone.
 */
async function acknowledge(x: ExportContext, source: Obj, receipt: string): Promise<void> {
  const ref = claimOwner(source, x.resource.kind, x.resource.group);
  const owner = ref && providerObj(x, source.metadata.namespace!, ref.name);
  if (!owner || owner.metadata.annotations?.[Annotations.credentialsReceived] === receipt) return;
  const ops = owner.metadata.annotations
    ? [{ op: 'add', path: `/metadata/annotations/${pointer(Annotations.credentialsReceived)}`, value: receipt }]
    : [{ op: 'add', path: '/metadata/annotations', value: { [Annotations.credentialsReceived]: receipt } }];
  try {
    await resourceClient(x.conn.clients, x.sides.provider).patch(owner.metadata.namespace!, owner.metadata.name, ops);
  } catch (e) {
    if (!isNotFound(e)) throw e; // gone meanwhile: nothing to say it to
  }
}
