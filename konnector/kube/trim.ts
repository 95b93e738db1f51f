/**
 * Memory: informer caches hold every object whole, and `managedFields` is often the largest part of it. The
 * konnector needs none of it but its own Apply entry upstream (needsApply reads it), so the first handler registered
 * on an informer trims each object as it enters the cache: client-node's ListWatch stores the very object it hands
 * to its add/update handlers. (The machinery has no transform hook; see docs/decisions/konnector.md.)
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import type { WatchInformer } from '../../controller';
import { SYNCER_FIELD_MANAGER } from '../../exports/bind-api';

/** Drops managedFields from cached objects; with `keepOwn`, keeps the konnector's own Apply entry. */
export function trimManagedFields<T extends KubernetesObject>(inf: WatchInformer<T>, o: { keepOwn?: boolean } = {}): WatchInformer<T> {
  const trim = (obj: T) => {
    const m = obj.metadata;
    if (!m?.managedFields) return;
    const own = o.keepOwn
      ? m.managedFields.filter((e) => e.manager === SYNCER_FIELD_MANAGER && e.operation === 'Apply' && !e.subresource)
      : [];
    if (own.length) m.managedFields = own;
    else delete m.managedFields;
  };
  inf.on('add', trim);
  inf.on('update', trim);
  return inf;
}
