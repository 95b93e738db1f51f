/**
 * Whether the konnector of a namespace runs, by its leader-election Lease: a running konnector renews it every few
 * seconds, so a renewal within a minute means it runs (`remove` waits for one, `why` names it as a hop).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { getOrUndefined, type Cluster } from './kube';

/** The konnector's Lease (its `--lease-name` default) and how old a renewal may be for it to count as running. */
export const KONNECTOR_LEASE = 'klutch-bind';
export const KONNECTOR_LEASE_FRESH_MS = 60_000;

/** Milliseconds since the konnector of `namespace` last renewed its Lease; undefined when it has none (or it is unreadable). */
export async function konnectorLeaseAge(app: Cluster, namespace: string): Promise<number | undefined> {
  const lease = (await getOrUndefined(app.coordination.readNamespacedLease({ namespace, name: KONNECTOR_LEASE })).catch(
    () => undefined,
  )) as V1Lease | undefined;
  const renewed = lease?.spec?.renewTime;
  return renewed === undefined ? undefined : Date.now() - new Date(renewed as unknown as string).getTime();
}
