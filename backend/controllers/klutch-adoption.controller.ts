/** Taking over from Klutch's backend, wired: the sweep key, and cluster namespaces from their ClusterBindings' heartbeats. */
import { byRef, Controller } from '../../controller';
import { adoptClusterNamespace, klutchClusterNamespaces, revokeLegacyToken } from '../provision/klutch-adoption';
import { ours, type ControllerDeps } from './deps';
import { LEGACY_TOKEN_GRACE_MS, reconcileKlutchAdoption, SWEEP, type KlutchAdoptionDeps } from './klutch-adoption.reconcile';

export function klutchAdoptionController(d: ControllerDeps): Controller {
  const deps: KlutchAdoptionDeps = {
    klutchNamespaces: () => klutchClusterNamespaces(d.clients, d.prefix),
    adopt: (ns) => adoptClusterNamespace(d.clients, ns),
    enqueue: (ns) => c.enqueue(ns),
    getNamespace: (name) => d.leader.namespaces.get(name),
    revokeLegacyToken: (ns) => revokeLegacyToken(d.clients, ns, d.legacyTokenGraceMs ?? LEGACY_TOKEN_GRACE_MS),
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
  c.enqueue(SWEEP);
  return c;
}
