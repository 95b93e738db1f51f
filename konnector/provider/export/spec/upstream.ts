/**
 * The provider-side copy of a consumer object, and whether the provider copy needs a new apply.
 *
 * The copy keeps what the user wrote — labels, annotations, spec — and drops what belongs to the consumer cluster
 * (uid, resourceVersion, managedFields, owner references, finalizers, status). Labels and annotations under a
 * reserved prefix (`crossplane.io/`, `kubernetes.io/`, `klutch.anynines.com/`, ...) never go up: an app developer's
 * `crossplane.io/claim-namespace` must not reach Crossplane. The copy carries the konnector's own
 * `klutch.anynines.com/bound` so a copy whose consumer object is gone can be recognised and deleted. A reserved key
 * an older konnector applied is in the konnector's managedFields upstream, so `needsApply` sees it as no longer
 * desired and the next apply removes it; reserved keys other writers set upstream are theirs and no difference.
 */
import { Annotations, SYNCER_FIELD_MANAGER, withoutReservedKeys } from '../../../../exports/bind-api';
import { jsonSubset, type Obj } from '../../../kube/objects';

/** The object applied upstream (server-side apply body) for `consumer` in `providerNamespace`. */
export function upstreamOf(consumer: Obj, providerNamespace: string): Obj {
  const labels = withoutReservedKeys(consumer.metadata.labels);
  const annotations = withoutReservedKeys(consumer.metadata.annotations);
  const out: Obj = {
    apiVersion: consumer.apiVersion,
    kind: consumer.kind,
    metadata: {
      name: consumer.metadata.name,
      namespace: providerNamespace,
      ...(labels ? { labels } : {}),
      annotations: { ...annotations, [Annotations.bound]: 'true' },
    },
  };
  if (consumer.spec !== undefined) out.spec = structuredClone(consumer.spec);
  return out;
}

/**
 * Whether applying `desired` would change `provider`: a field differs or is missing upstream, or a field the
 * konnector applied before is no longer desired (found through the konnector's own managedFields entry, so fields
 * other writers own upstream — Crossplane's `resourceRef`, say — are not a difference). Without that entry (a cache
 * that drops managedFields, an object created by someone else) it answers true: one apply too many, never one too few.
 */
export function needsApply(desired: Obj, provider: Obj): boolean {
  const parts = ['spec', 'labels', 'annotations'] as const;
  const pick = (o: Obj, p: (typeof parts)[number]) => (p === 'spec' ? o.spec : o.metadata[p]);
  if (!parts.every((p) => jsonSubset(pick(desired, p), pick(provider, p)))) return true;
  const mine = provider.metadata.managedFields?.find(
    (m) => m.manager === SYNCER_FIELD_MANAGER && m.operation === 'Apply' && !m.subresource,
  );
  if (!mine?.fieldsV1) return true;
  const owned = mine.fieldsV1 as Record<string, Record<string, unknown> | undefined>;
  const meta = (owned['f:metadata'] ?? {}) as Record<string, Record<string, unknown> | undefined>;
  const wanted = (path: string[], v: unknown): boolean => hasPath(v, path);
  return (
    leaves(owned['f:spec']).some((p) => !wanted(p, desired.spec)) ||
    leaves(meta['f:labels']).some((p) => !wanted(p, desired.metadata.labels)) ||
    leaves(meta['f:annotations']).some((p) => !wanted(p, desired.metadata.annotations))
  );
}

/** The field paths a fieldsV1 set owns, stopping at lists and values (`k:`, `v:`, `i:` and `.` entries). */
function leaves(set: Record<string, unknown> | undefined, prefix: string[] = []): string[][] {
  if (!set) return [];
  const fields = Object.keys(set).filter((k) => k.startsWith('f:'));
  if (fields.length === 0) return prefix.length ? [prefix] : [];
  return fields.flatMap((k) => leaves(set[k] as Record<string, unknown>, [...prefix, k.slice(2)]));
}

function hasPath(v: unknown, path: readonly string[]): boolean {
  let cur = v;
  for (const p of path) {
    if (cur === null || typeof cur !== 'object' || Array.isArray(cur) || !(p in cur)) return false;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur !== undefined;
}
