/**
 * What Role `klutch-binder-claimed` grants in one provider namespace (the contract is `CLAIMED_ROLE` in
 * exports/bind-api/constants.ts): per claimed resource of the consumer's exports' templates, read access to exactly
 * the objects a claim shares — name selected by the claim's `selector.names` AND belonging to a bound object (an
 * ownerReference to an existing object of an exported kind, or named `<n>-creds` for an existing exported object
 * `<n>`: Crossplane's connection Secret; konnector/provider/export/claims `claimOwner` is the same rule). An
 * operator's or instance's own Secret beside the claim is never shared. Consumer-owned claims (`selector.owner:
 * Consumer`) may create, and manage the objects marked `klutch.anynines.com/resource-owner: Consumer`. The consumer
 * may read the Role itself, so a konnector learns the names it may read.
 *
 * With `--claimed-access=Namespace` (Klutch's konnector lists the claimed resources namespace-wide) the read rules
 * cover every object of the claimed resources in the namespace, still only there and read-only.
 */
import type { V1PolicyRule } from '@kubernetes/client-node';
import { Annotations, CLAIMED_ROLE, claimOfCredentials, type PermissionClaim } from '../../exports/bind-api';
import type { ClaimedAccess } from '../consumer-access';

const READ = ['get', 'list', 'watch'];

/** An exported resource of a consumer, with what its template claims. */
export interface ExportGrant {
  readonly group: string;
  readonly resource: string;
  /** Kind of the exported resource (its CRD's); undefined while the CRD is unknown (then nothing belongs to it). */
  readonly kind?: string;
  /** The template's claims; none when no template offers the resource any more. */
  readonly claims: readonly PermissionClaim[];
}

/** An object as the backend's metadata-only informers hold it (Kubernetes' PartialObjectMetadata): what the computation reads. */
export interface PartialObjectMetadata {
  readonly metadata?: {
    readonly name?: string;
    readonly annotations?: Record<string, string>;
    readonly ownerReferences?: readonly { readonly apiVersion: string; readonly kind: string; readonly name: string }[];
  };
}

export interface ClaimedInputs {
  readonly grants: readonly ExportGrant[];
  /** Objects of `group`/`resource` in the provider namespace. */
  objects(group: string, resource: string): readonly PartialObjectMetadata[];
  readonly access: ClaimedAccess;
}

/** Whether `selector.names` selects `name` (absent, empty or `*`: any). */
function namesSelect(names: readonly string[] | undefined, name: string): boolean {
  return !names || names.length === 0 || names.includes('*') || names.includes(name);
}

const groupOf = (apiVersion: string) => (apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '');

/** The rules of Role `klutch-binder-claimed`. */
export function claimedRules(i: ClaimedInputs): V1PolicyRule[] {
  // Bound objects: names of the existing objects of each exported kind, and of all exported resources (for -creds).
  const byKind = new Map<string, Set<string>>();
  const bound = new Set<string>();
  for (const g of i.grants) {
    if (!g.kind) continue;
    const names = new Set(i.objects(g.group, g.resource).map((o) => o.metadata?.name ?? ''));
    names.delete('');
    byKind.set(`${g.group}/${g.kind}`, new Set([...(byKind.get(`${g.group}/${g.kind}`) ?? []), ...names]));
    for (const n of names) bound.add(n);
  }
  const belongs = (o: PartialObjectMetadata): boolean => {
    if ((o.metadata?.ownerReferences ?? []).some((r) => byKind.get(`${groupOf(r.apiVersion)}/${r.kind}`)?.has(r.name))) return true;
    const claim = claimOfCredentials(o.metadata?.name ?? '');
    return claim !== undefined && bound.has(claim);
  };

  interface Claimed {
    group: string;
    resource: string;
    read: Set<string>;
    consumer: boolean;
    managed: Set<string>;
  }
  const claimed = new Map<string, Claimed>();
  for (const g of i.grants) {
    for (const c of g.claims) {
      const group = c.group ?? '';
      const key = `${c.resource}.${group}`;
      const entry = claimed.get(key) ?? { group, resource: c.resource, read: new Set(), consumer: false, managed: new Set() };
      claimed.set(key, entry);
      const names = c.selector?.names;
      for (const o of i.objects(group, c.resource)) {
        const name = o.metadata?.name;
        if (!name || !namesSelect(names, name)) continue;
        if (c.selector?.owner === 'Consumer') {
          if (o.metadata?.annotations?.[Annotations.resourceOwner] === 'Consumer') entry.managed.add(name);
        } else if (belongs(o)) entry.read.add(name);
      }
      if (c.selector?.owner === 'Consumer') entry.consumer = true;
    }
  }

  const rules: V1PolicyRule[] = [];
  for (const key of [...claimed.keys()].sort()) {
    const c = claimed.get(key)!;
    const on = { apiGroups: [c.group], resources: [c.resource] };
    if (i.access === 'Namespace') rules.push({ ...on, verbs: READ });
    else if (c.read.size) rules.push({ ...on, resourceNames: [...c.read].sort(), verbs: READ });
    if (c.consumer) {
      rules.push({ ...on, verbs: ['create'] });
      if (c.managed.size) rules.push({ ...on, resourceNames: [...c.managed].sort(), verbs: ['get', 'update', 'patch', 'delete'] });
    }
  }
  rules.push({ apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], resourceNames: [CLAIMED_ROLE], verbs: READ });
  return rules;
}

/** Every claimed resource of `grants` (group, resource, version), for the informers that feed `objects`. */
export function claimedResources(grants: readonly ExportGrant[]): { group: string; resource: string; version: string }[] {
  const out = new Map<string, { group: string; resource: string; version: string }>();
  for (const g of grants)
    for (const c of g.claims) out.set(`${c.resource}.${c.group ?? ''}`, { group: c.group ?? '', resource: c.resource, version: c.version });
  return [...out.values()];
}
