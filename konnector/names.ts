/**
 * Name translation between the app cluster (consumer) and the control plane (provider), in one place.
 *
 * A consumer object `ns/name` lives upstream as `<provider ns>/name`, where the provider namespace is whatever the
 * backend wrote into `status.namespace` of the APIServiceNamespace named `ns` in the consumer's cluster namespace
 * (Klutch's backend makes `<cluster ns>-<ns>`; we never compute it ourselves, so any backend's choice works).
 *
 * "Not yet" has two forms, and callers treat them differently:
 * - `missing`: no APIServiceNamespace asks for `ns` — the spec syncer creates one; nothing can exist upstream.
 * - `pending`: it exists but the backend has not assigned a namespace — wait for the status update.
 */
import type { APIServiceNamespace } from '../exports/bind-api';

export type ProviderNamespace =
  { readonly state: 'assigned'; readonly namespace: string } | { readonly state: 'pending' } | { readonly state: 'missing' };

export interface NamespaceMap {
  /** Consumer namespace → provider namespace. */
  providerNamespace(consumerNamespace: string): ProviderNamespace;
  /** Provider namespace → consumer namespace; undefined when no APIServiceNamespace maps to it. */
  consumerNamespace(providerNamespace: string): string | undefined;
}

/**
 * A NamespaceMap over the APIServiceNamespaces of one cluster namespace, read through `get`/`list` (an informer's
 * cache). The reverse index is rebuilt from the list when a lookup misses, so it never goes stale for long.
 */
export function namespaceMap(o: {
  get: (consumerNamespace: string) => APIServiceNamespace | undefined;
  list: () => readonly APIServiceNamespace[];
}): NamespaceMap {
  let reverse = new Map<string, string>();
  return {
    providerNamespace(consumerNamespace) {
      const sn = o.get(consumerNamespace);
      if (!sn || sn.metadata.deletionTimestamp) return { state: sn ? 'pending' : 'missing' };
      const ns = sn.status?.namespace;
      return ns ? { state: 'assigned', namespace: ns } : { state: 'pending' };
    },
    consumerNamespace(providerNamespace) {
      const hit = reverse.get(providerNamespace);
      if (hit !== undefined && o.get(hit)?.status?.namespace === providerNamespace) return hit;
      reverse = new Map(
        o
          .list()
          .filter((sn) => sn.status?.namespace)
          .map((sn) => [sn.status!.namespace!, sn.metadata.name!]),
      );
      return reverse.get(providerNamespace);
    },
  };
}
