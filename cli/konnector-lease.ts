/**
 * Whether the konnector of a namespace runs, by its leader-election Lease: a running konnector renews it every few
 * seconds, so a renewal within a minute means it runs (`remove` waits for one, `why` names it as a hop).
 */
import type { V1Lease } from '@kubernetes/client-node';
import { messageOf } from '../lib/kube-errors';
import { getOrUndefined, type Cluster } from './kube';

/** The konnector's Lease (its `--lease-name` default) and how old a renewal may be for it to count as running. */
export const KONNECTOR_LEASE = 'klutch-bind';
const KONNECTOR_LEASE_FRESH_MS = 60_000;

/**
 * The konnector's Lease in `namespace`: `age`, the milliseconds since it was last renewed; neither field when there is
 * none; `unreadable`, why it could not be read (a user without `get` on Leases there: 403), so that a refusal is not
 * taken for a konnector that never ran.
 */
export interface KonnectorLease {
  readonly age?: number;
  readonly unreadable?: string;
}

export async function konnectorLease(app: Cluster, namespace: string): Promise<KonnectorLease> {
  try {
    const lease = (await getOrUndefined(app.coordination.readNamespacedLease({ namespace, name: KONNECTOR_LEASE }))) as V1Lease | undefined;
    const renewed = lease?.spec?.renewTime;
    return renewed === undefined ? {} : { age: Date.now() - new Date(renewed as unknown as string).getTime() };
  } catch (e) {
    return { unreadable: messageOf(e) };
  }
}

/** A renewal within KONNECTOR_LEASE_FRESH_MS: the konnector runs. */
export const konnectorRuns = (l: KonnectorLease): boolean => l.age !== undefined && l.age < KONNECTOR_LEASE_FRESH_MS;
