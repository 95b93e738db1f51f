/**
 * Role and RoleBinding `klutch-binder-claimed` in every provider namespace (made for an APIServiceNamespace): read
 * access to exactly the claimed objects there (provision/claimed.ts), following the consumer's exports, the
 * templates, the CRDs, and the claimed and exported objects of the namespace (metadata-only informers). The ref is a
 * provider namespace (`{ name }`). Each is applied only when the cached one differs.
 */
import type { V1Namespace, V1PolicyRule, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileResult } from '../../controller';
import { Annotations } from '../../exports/bind-api';
import { Labels } from '../labels';
import type { ClaimedAccess } from '../consumer-access';
import { claimedResources, claimedRules, type ExportGrant, type PartialObjectMetadata } from '../provision/claimed';
import { claimedRole, claimedRoleBinding } from '../provision/rbac';

export const RETRY_UNSYNCED_MS = 1000;

export interface ClaimedAccessDeps {
  readonly access: ClaimedAccess;
  /** The provider namespace from the cache. */
  getNamespace(name: string): V1Namespace | undefined;
  /** What the consumer of a cluster namespace was granted (controllers/grants.ts). */
  grants(clusterNamespace: string): readonly ExportGrant[];
  /** The version informers list CRD `<plural>.<group>` at. */
  storageVersion(name: string): string | undefined;
  /** Starts the metadata informer of a resource if needed; whether it has listed once. */
  objectsSynced(group: string, version: string, resource: string): boolean;
  /** Objects' metadata of `group`/`resource` in a namespace (cache). */
  objects(group: string, resource: string, namespace: string): readonly PartialObjectMetadata[];
  /** Role and RoleBinding `klutch-binder-claimed` of a namespace from the cache. */
  getRole(namespace: string): V1Role | undefined;
  getRoleBinding(namespace: string): V1RoleBinding | undefined;
  /** Server-side applies. */
  applyRole(role: V1Role): Promise<void>;
  applyRoleBinding(binding: V1RoleBinding): Promise<void>;
}

/** A rule as a comparable string (the API server writes the fields in its own order). */
const ruleKey = (r: V1PolicyRule) =>
  JSON.stringify([r.apiGroups ?? [], r.resources ?? [], r.resourceNames ?? [], r.verbs ?? [], r.nonResourceURLs ?? []]);

export async function reconcileClaimedAccess(d: ClaimedAccessDeps, ref: ObjectRef): Promise<ReconcileResult> {
  const key = ref.name;
  const ns = d.getNamespace(key);
  const clusterNs = ns?.metadata?.labels?.[Labels.clusterNamespace];
  const owner = ns?.metadata?.annotations?.[Annotations.apiServiceNamespace];
  if (!ns || ns.metadata?.deletionTimestamp || !clusterNs || !owner?.startsWith(`${clusterNs}/`)) return;
  const grants = d.grants(clusterNs);
  // The informers the rules read; until each has listed once a missing object may just not be there yet.
  let unsynced = false;
  for (const g of grants) {
    const version = d.storageVersion(`${g.resource}.${g.group}`);
    if (version) unsynced = !d.objectsSynced(g.group, version, g.resource) || unsynced;
  }
  for (const r of claimedResources(grants)) unsynced = !d.objectsSynced(r.group, r.version, r.resource) || unsynced;
  if (unsynced) return { requeueAfterMs: RETRY_UNSYNCED_MS };

  const rules = claimedRules({ grants, objects: (group, resource) => d.objects(group, resource, key), access: d.access });
  const existing = d.getRole(key);
  if (!existing || JSON.stringify((existing.rules ?? []).map(ruleKey)) !== JSON.stringify(rules.map(ruleKey)))
    await d.applyRole(claimedRole(key, clusterNs, rules));
  const binding = d.getRoleBinding(key);
  if (!binding || binding.subjects?.[0]?.namespace !== clusterNs || binding.subjects.length !== 1)
    await d.applyRoleBinding(claimedRoleBinding(key, clusterNs));
  return;
}
