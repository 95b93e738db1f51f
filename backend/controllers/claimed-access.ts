/**
 * Role and RoleBinding `klutch-binder-claimed` in every provider namespace (made for an APIServiceNamespace): read
 * access to exactly the claimed objects there (provision/claimed.ts), following the consumer's exports, the
 * templates, the CRDs, and the claimed and exported objects of the namespace (metadata-only informers). `key` is a
 * provider namespace's name.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import { Controller, type ReconcileResult } from '../../controller';
import { Annotations, CLAIMED_ROLE } from '../../exports/bind-api';
import { APPLY, FIELD_MANAGER } from '../kube';
import { Labels } from '../labels';
import { claimedResources, claimedRules } from '../provision/claimed';
import { claimedRole, claimedRoleBinding } from '../provision/rbac';
import { ours, type ControllerDeps } from './deps';
import { consumerGrants, storageVersion } from './grants';

const RETRY_UNSYNCED_MS = 1000;

export function claimedAccessController(d: ControllerDeps): Controller {
  const c = new Controller({
    name: 'claimedaccess',
    workers: 2,
    log: d.log,
    registry: d.registry,
    reconcile: (key) => reconcileClaimedAccess(d, key),
  });
  const isProvider = (name: string | undefined): boolean =>
    ours(d, name) && Boolean(name && d.leader.namespaces.get(name)?.metadata?.annotations?.[Annotations.apiServiceNamespace]);
  const providerNamespaces = (clusterNamespace?: string) =>
    d.leader.namespaces
      .list()
      .filter(
        (ns) =>
          ns.metadata?.annotations?.[Annotations.apiServiceNamespace] &&
          ours(d, ns.metadata.name) &&
          (!clusterNamespace || ns.metadata.labels?.[Labels.clusterNamespace] === clusterNamespace),
      )
      .map((ns) => ns.metadata!.name!);
  c.watch(d.leader.namespaces, (ns) => (isProvider(ns.metadata?.name) ? [ns.metadata!.name!] : []));
  c.watch(d.leader.exports, (e) => (ours(d, e.metadata.namespace) ? providerNamespaces(e.metadata.namespace) : []));
  c.watch(d.serving.templates, () => providerNamespaces());
  c.watch(d.serving.crds, () => providerNamespaces());
  c.watch(d.leader.claimedRoles, (r) => (isProvider(r.metadata?.namespace) ? [r.metadata!.namespace!] : []));
  c.watch(d.leader.claimedRoleBindings, (r) => (isProvider(r.metadata?.namespace) ? [r.metadata!.namespace!] : []));
  d.objects.onNew((i) => c.watch(i, (o) => (isProvider(o.metadata?.namespace) ? [o.metadata!.namespace!] : [])));
  return c;
}

/** A rule as a comparable string (the API server writes the fields in its own order). */
const ruleKey = (r: V1PolicyRule) =>
  JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.verbs ?? [], r.nonResourceURLs ?? []]);

export async function reconcileClaimedAccess(d: ControllerDeps, key: string): Promise<ReconcileResult> {
  const ns = d.leader.namespaces.get(key);
  const clusterNs = ns?.metadata?.labels?.[Labels.clusterNamespace];
  const owner = ns?.metadata?.annotations?.[Annotations.apiServiceNamespace];
  if (!ns || ns.metadata?.deletionTimestamp || !clusterNs || !owner?.startsWith(`${clusterNs}/`)) return;
  const grants = consumerGrants(d, clusterNs);
  // The informers the rules read; until each has listed once a missing object may just not be there yet.
  let unsynced = false;
  for (const g of grants) {
    const version = storageVersion(d, `${g.resource}.${g.group}`);
    if (version) unsynced = !d.objects.ensure(g.group, version, g.resource).hasSynced() || unsynced;
  }
  for (const r of claimedResources(grants)) unsynced = !d.objects.ensure(r.group, r.version, r.resource).hasSynced() || unsynced;
  if (unsynced) return { requeueAfterMs: RETRY_UNSYNCED_MS };

  const rules = claimedRules({
    grants,
    objects: (group, resource) => d.objects.get(group, resource)?.list(key) ?? [],
    access: d.claimedAccess ?? 'Object',
  });
  const existing = d.leader.claimedRoles.get(CLAIMED_ROLE, key);
  if (!existing || JSON.stringify((existing.rules ?? []).map(ruleKey)) !== JSON.stringify(rules.map(ruleKey))) {
    const role = claimedRole(key, clusterNs, rules);
    await d.clients.rbac.patchNamespacedRole(
      { name: CLAIMED_ROLE, namespace: key, body: role, fieldManager: FIELD_MANAGER, force: true },
      APPLY,
    );
  }
  const binding = d.leader.claimedRoleBindings.get(CLAIMED_ROLE, key);
  if (!binding || binding.subjects?.[0]?.namespace !== clusterNs || binding.subjects.length !== 1) {
    await d.clients.rbac.patchNamespacedRoleBinding(
      { name: CLAIMED_ROLE, namespace: key, body: claimedRoleBinding(key, clusterNs), fieldManager: FIELD_MANAGER, force: true },
      APPLY,
    );
  }
  return;
}
