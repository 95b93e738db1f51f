/**
 * Unbound consumers go: a cluster namespace whose consumer never got an export within `--unbound-consumer-ttl` (a
 * bind that was abandoned or refused, or someone making namespaces) is deleted with everything in it. The first
 * export is remembered on the ClusterBinding (annotation `klutch-kit.anynines.com/first-export`), so a consumer that
 * later unbinds all its APIs is not deleted, and a consumer with an APIServiceNamespace (claims, so data) never is.
 * The ref is a cluster namespace (`{ name }`).
 */
import type { V1Namespace } from '@kubernetes/client-node';
import type { ObjectRef, ReconcileContext, ReconcileResult } from '../../controller';
import { Annotations, type ClusterBinding } from '../../exports/bind-api';
import { BackendAnnotations } from '../labels';

export const UNBOUND_TTL_MS = 3_600_000;

export interface ConsumerLifecycleDeps {
  readonly unboundTtlMs: number;
  /** Everything below from the caches. */
  getNamespace(name: string): V1Namespace | undefined;
  getClusterBinding(clusterNamespace: string): ClusterBinding | undefined;
  hasServiceNamespaces(clusterNamespace: string): boolean;
  hasExports(clusterNamespace: string): boolean;
  /** Whether an export request still waits for its CRD (it may yet export). */
  hasPendingRequests(clusterNamespace: string): boolean;
  /** Writes the first-export annotation onto the ClusterBinding. */
  markFirstExport(clusterNamespace: string, at: string): Promise<void>;
  /** Deletes the cluster namespace (gone already is fine). */
  deleteNamespace(name: string): Promise<void>;
  /** @default Date.now */
  now?(): number;
}

export async function reconcileLifecycle(
  d: ConsumerLifecycleDeps,
  ref: ObjectRef,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<ReconcileResult> {
  const key = ref.name;
  const ns = d.getNamespace(key);
  const identity = ns?.metadata?.annotations?.[Annotations.identity];
  if (!identity || ns.metadata?.deletionTimestamp) return;
  const binding = d.getClusterBinding(key);
  if (binding?.metadata.annotations?.[BackendAnnotations.firstExport]) return;
  // Never a consumer with provider namespaces: deleting its APIServiceNamespaces deletes those namespaces, and the
  // claims and databases in them (a consumer a Klutch backend made, whose exports are gone, can still have claims).
  if (d.hasServiceNamespaces(key)) return;
  const now = d.now?.() ?? Date.now();
  if (d.hasExports(key)) {
    if (!binding) return; // provisioning makes it; its event brings us back
    await d.markFirstExport(key, new Date(now).toISOString());
    return;
  }
  const ttl = d.unboundTtlMs;
  const age = now - Date.parse(ns.metadata?.creationTimestamp as unknown as string);
  if (Number.isNaN(age) || age < ttl || d.hasPendingRequests(key))
    return { requeueAfterMs: Math.max(1000, Number.isNaN(age) ? ttl : ttl - age) };
  await d.deleteNamespace(key);
  ctx.log.info({ namespace: key, identity, ttlMs: ttl }, 'deleted an unbound consumer: no export within --unbound-consumer-ttl');
  return;
}
