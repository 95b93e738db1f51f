/** Taking over from Klutch's backend, wired: the sweep key, and cluster namespaces from their ClusterBindings and the namespace cache. */
import { byRef, Controller } from '../../controller';
import { MERGE_PATCH } from '../kube';
import { BackendAnnotations, Labels } from '../labels';
import { adoptClusterNamespace, klutchClusterNamespaces, revokeLegacyToken } from '../provision/klutch-adoption';
import { ours, type ControllerDeps } from './deps';
import {
  LEGACY_TOKEN_GRACE_MS,
  LEGACY_TOKEN_MAX_AGE_MS,
  reconcileKlutchAdoption,
  SWEEP,
  type KlutchAdoptionDeps,
} from './klutch-adoption.reconcile';

export function klutchAdoptionController(d: ControllerDeps): Controller {
  const deps: KlutchAdoptionDeps = {
    klutchNamespaces: () => klutchClusterNamespaces(d.clients, d.prefix),
    adopt: (ns) => adoptClusterNamespace(d.clients, ns),
    enqueue: (ns) => c.enqueue(ns),
    getNamespace: (name) => d.leader.namespaces.get(name),
    revokeLegacyToken: (ns, adoptedAt) =>
      revokeLegacyToken(d.clients, ns, d.legacyTokenGraceMs ?? LEGACY_TOKEN_GRACE_MS, {
        adoptedAt,
        maxAgeMs: d.legacyTokenMaxAgeMs ?? LEGACY_TOKEN_MAX_AGE_MS,
        now: Date.now(),
      }),
    markAdopted: (name, at) =>
      d.clients.core
        .patchNamespace({ name, body: { metadata: { annotations: { [BackendAnnotations.adopted]: at } } } }, MERGE_PATCH)
        .then(() => undefined),
    clean: new Set(),
  };
  const c: Controller = new Controller({
    name: 'klutchadoption',
    log: d.log,
    registry: d.registry,
    reconcile: byRef((ref, ctx) => reconcileKlutchAdoption(deps, ref, ctx)),
  });
  c.watch(d.leader.clusterBindings, (b) => {
    const ns = b.metadata.namespace;
    return ns && ours(d, ns) && !deps.clean.has(ns) ? [ns] : [];
  });
  // An adopted namespace enters the cache after its adoption enqueued it (and every one after a restart): its
  // legacy token needs no heartbeat to go (--legacy-token-max-age).
  c.watch(d.leader.namespaces, (n) => {
    const name = n.metadata?.name;
    return name && n.metadata?.labels?.[Labels.identityHash] && ours(d, name) && !deps.clean.has(name) ? [name] : [];
  });
  c.enqueue(SWEEP);
  return c;
}
