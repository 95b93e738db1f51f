/**
 * Memory: the informer caches hold only what the konnector reads. Every object passes through `trimForCache` before
 * it enters a cache (the informer's transform, as client-go's `SetTransform`), which drops
 * - `managedFields`, often the largest part of an object: the konnector reads none of it but its own Apply entry
 *   upstream (needsApply reads it), kept with `keepOwn`;
 * - kubectl's `last-applied-configuration` annotation, a second copy of the object as `kubectl apply` last sent it:
 *   a reserved key, never copied across, never read.
 */
import type { KubernetesObject } from '@kubernetes/client-node';
import { SYNCER_FIELD_MANAGER } from '../../exports/bind-api';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/** The cache transform; with `keepOwn`, the konnector's own Apply entry stays in managedFields. */
export function trimForCache<T extends KubernetesObject>(o: { keepOwn?: boolean } = {}): (obj: T) => T {
  return (obj) => {
    const m = obj.metadata;
    if (!m) return obj;
    if (m.managedFields) {
      const own = o.keepOwn
        ? m.managedFields.filter((e) => e.manager === SYNCER_FIELD_MANAGER && e.operation === 'Apply' && !e.subresource)
        : [];
      if (own.length) m.managedFields = own;
      else delete m.managedFields;
    }
    if (m.annotations && LAST_APPLIED in m.annotations) {
      const { [LAST_APPLIED]: _, ...rest } = m.annotations;
      if (Object.keys(rest).length) m.annotations = rest;
      else delete m.annotations;
    }
    return obj;
  };
}
