/**
 * Memory: the informer caches hold only what the konnector reads. Every object passes through `trimForCache` before
 * it enters a cache (the informer's transform, as client-go's `SetTransform`), which drops
 * - `managedFields`, often the largest part of an object: the konnector reads none of it but its own Apply entry
 *   upstream (needsApply reads it), kept with `keepOwn`;
 * - kubectl's `last-applied-configuration` annotation, a second copy of the object as `kubectl apply` last sent it:
 *   a reserved key, never copied across, never read;
 * and, for the synced resources' caches (`intern`), holds each repeated short value once (`Interner`): JSON.parse
 * gives every object its own copy of its
 * apiVersion, kind, namespace, plan, defaulted spec fields and annotation values — 15,000 copies of
 * "anynines.com/v1" at 5,000 claims, about 3 MiB of the heap (docs/decisions/konnector-memory.md).
 */
import { SYNCER_FIELD_MANAGER } from '../../exports/bind-api';

export const LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';

/**
 * One copy of each short string value: `intern(s)` answers the first string equal to `s` it was given. Bounded: at
 * most `maxEntries` strings of at most `maxLength` characters are kept (then new values pass through as they are),
 * and values that are unique per object (names, uids, resource versions, timestamps) are never entered.
 */
export class Interner {
  private readonly seen = new Map<string, string>();
  constructor(
    private readonly maxEntries = 8192,
    private readonly maxLength = 128,
  ) {}

  get size(): number {
    return this.seen.size;
  }

  intern(s: string): string {
    if (s.length > this.maxLength) return s;
    const known = this.seen.get(s);
    if (known !== undefined) return known;
    if (this.seen.size < this.maxEntries) this.seen.set(s, s);
    return s;
  }

  /** Replaces the string values of `v`'s tree in place with interned ones (but those under a unique key). */
  internTree(v: unknown): unknown {
    if (typeof v === 'string') return this.intern(v);
    if (v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) {
      for (let i = 0; i < v.length; i++) v[i] = this.internTree(v[i]);
      return v;
    }
    const o = v as Record<string, unknown>;
    for (const k in o) if (!UNIQUE_KEYS.has(k)) o[k] = this.internTree(o[k]);
    return v;
  }
}

/** Keys whose values differ on every object (or every write): entering them would fill the interner for nothing. */
const UNIQUE_KEYS = new Set(['name', 'uid', 'resourceVersion', 'creationTimestamp', 'deletionTimestamp', 'time', 'lastTransitionTime']);

/** The synced resources' caches share one: the app cluster's objects and their provider copies hold the same values. */
const shared = new Interner();

export interface TrimOptions {
  /** Keep the konnector's own Apply entry in managedFields. @default false */
  readonly keepOwn?: boolean;
  /**
   * Intern string values: for the caches of synced resources, thousands of objects of a few kinds. Not for CRDs,
   * whose schemas' descriptions would fill the interner with strings no other object repeats. @default false
   */
  readonly intern?: boolean;
  /** @default the one the konnector's caches share */
  readonly interner?: Interner;
}

/** What the transform changes of an object's metadata (client-node's and our wire types both have it). */
interface TrimmedMeta {
  managedFields?: { manager?: string; operation?: string; subresource?: string }[];
  annotations?: Record<string, string>;
}

/** The cache transform. */
export function trimForCache<T extends { metadata?: TrimmedMeta }>(o: TrimOptions = {}): (obj: T) => T {
  const interner = o.intern ? (o.interner ?? shared) : undefined;
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
    interner?.internTree(obj);
    return obj;
  };
}
