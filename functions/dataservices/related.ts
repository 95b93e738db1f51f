/**
 * A list with one item per related composite (`Recipe.related`): an instance whose Cluster lists one database role
 * per binding. The function cannot list objects itself: it asks Crossplane through the response's requirements and
 * Crossplane calls it again with what it found, as for adoption (adopt.ts). Pure: no SDK calls, no I/O.
 *
 * Trust: which composites count is decided here from the composite as Crossplane or the API server wrote it (its own
 * namespace, or the claim-namespace label Crossplane sets on a cluster-scoped composite), and checked again on every
 * object found, so neither a tenant's labels nor a lax fetcher widen it.
 */
import type { Input, RelatedList, RelatedMatch } from '../../recipe';
import { expiryOf } from './expiry';
import { keptRotation, liveSlots } from './rotation';
import { applyField, CLAIM_NAMESPACE_LABEL, claimRef, ComposeError, OverLimitError, trustedComposite } from './compose';
import { get, set } from '../../lib/fieldpath';

type Obj = Record<string, unknown>;

/**
 * The key of the requirement in the response, and of what Crossplane found in the next request. It is asked as an
 * `extra_resources` requirement, the field both Crossplane lines answer (v1.20 knows no other; v2 keeps it).
 */
export const RELATED_REQUIREMENT = 'related';

/** What the function asks Crossplane for: the related kind in the composite's namespace, or with its claim label. */
export interface RelatedSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly namespace?: string;
  readonly matchLabels: { readonly labels: Record<string, string> };
}

const isObj = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);
const namespaceOf = (o: Obj): string | undefined => {
  const ns = get(o, 'metadata.namespace');
  return typeof ns === 'string' && ns !== '' ? ns : undefined;
};

/** The selector for the composite's related composites of `r`'s kind, and the namespace they must be of. */
export function relatedSelector(r: Pick<RelatedList, 'apiVersion' | 'kind'>, composite: Obj, where: string): RelatedSelector {
  const trusted = trustedComposite(composite, where);
  const own = namespaceOf(trusted);
  if (own) return { apiVersion: r.apiVersion, kind: r.kind, namespace: own, matchLabels: { labels: {} } };
  const ns = claimRef(trusted).namespace;
  if (!ns)
    throw new ComposeError(
      `cannot select the related ${r.kind}s ${where}: the composite has no ${CLAIM_NAMESPACE_LABEL} label and no namespace of its own`,
    );
  return { apiVersion: r.apiVersion, kind: r.kind, matchLabels: { labels: { [CLAIM_NAMESPACE_LABEL]: ns } } };
}

/** Whether a found object is in the selector's scope: the same namespace, or (cluster-scoped) the same claim label. */
export function inScope(o: Obj, s: RelatedSelector): boolean {
  if (s.namespace) return namespaceOf(o) === s.namespace;
  if (namespaceOf(o)) return false;
  const ns = s.matchLabels.labels[CLAIM_NAMESPACE_LABEL];
  return get(o, `metadata.labels[${CLAIM_NAMESPACE_LABEL}]`) === ns;
}

/** The key a `revoke` composite's item would have; undefined when its fields cannot make one (over a limit). */
function keyOf(r: RelatedList, related: Obj, where: string): string | undefined {
  const item: Obj = {};
  try {
    r.item.forEach((f, i) => applyField(item, f, i, related, where, 'related.item'));
  } catch (e) {
    if (e instanceof OverLimitError) return undefined;
    throw e;
  }
  const key = item[r.key];
  return typeof key === 'string' && key !== '' ? key : undefined;
}

/** The second slot's item of a rotating related composite (RelatedList.rotation), from its first slot's; undefined
 * when a value is over its limit (as for the first slot). */
function secondItem(r: RelatedList, o: Obj, related: Obj, first: Obj, where: string): { key: string; item: Obj } | undefined {
  const item = structuredClone(first);
  try {
    r.rotation?.second.forEach((f, i) => applyField(item, f, i, related, where, 'related.rotation.second'));
  } catch (e) {
    if (e instanceof OverLimitError) return undefined;
    throw e;
  }
  const key = item[r.key];
  if (typeof key !== 'string' || key === '' || key === first[r.key])
    throw new ComposeError(
      `cannot list the second slot of the related ${r.kind} ${String(get(o, 'metadata.name'))} ${where}: its ${r.key} "${String(key)}" is not one of its own`,
    );
  return { key, item };
}

/**
 * Sets the related list on `target` (the composed resource, or the object its wrapper holds), in place, and returns
 * the requirement to ask Crossplane for (also once answered: requirements must stay the same to settle).
 * - `found` undefined (not answered yet): the list the observed resource (`observedTarget`) has is kept as it is;
 *   Crossplane applies only the response once its requirements settled, but nothing is dropped even if it did not.
 * - answered: one item per found composite in scope that matches and is not being deleted (a binding being deleted
 *   is revoked at once, not once it is gone); an observed item whose composite is not among them becomes `gone`.
 */
export function composeRelated(
  input: Input,
  target: Obj,
  composite: Obj,
  observedTarget: unknown,
  found: readonly Obj[] | undefined,
  where: string,
  now: number = Date.now(),
): { requirement?: RelatedSelector; nextExpiry?: number } {
  const r = input.related;
  if (!r) return {};
  const requirement = relatedSelector(r, composite, where);
  const before = get(observedTarget, r.to);
  const previous = Array.isArray(before) ? before.filter(isObj) : [];
  // Items the recipe's own fields put in the list come first and own their keys: never a related item, never gone.
  const own = get(target, r.to);
  const fixed = Array.isArray(own) ? own.filter(isObj) : [];
  const reserved = new Set(fixed.map((o) => o[r.key]).filter((k): k is string => typeof k === 'string' && k !== ''));
  const list = (items: readonly Obj[]) => {
    if (fixed.length || items.length) set(target, r.to, [...fixed, ...items]);
  };
  if (found === undefined) {
    list(previous.filter((o) => !reserved.has(o[r.key] as string)).map((o) => structuredClone(o)));
    return { requirement };
  }
  const trusted = trustedComposite(composite, where);
  const items = new Map<string, Obj>();
  const revoked = new Set<string>();
  let nextExpiry: number | undefined;
  const matchesAll = (related: Obj, matches: readonly RelatedMatch[]) =>
    matches.length > 0 &&
    matches.every((m) => {
      const want = m.from !== undefined ? get(trusted, m.from) : m.equals;
      return typeof want === 'string' && want !== '' && get(related, m.path) === want;
    });
  for (const o of found) {
    if (!inScope(o, requirement)) continue;
    const related = trustedComposite(o, `(related ${r.kind} ${String(get(o, 'metadata.name'))})`);
    if (!matchesAll(related, r.match)) {
      // Being deleted or not: its role is revoked here either way, and its second slot's once it rotated (a copy of
      // its instance's data holds both users with their passwords).
      if (r.revoke && matchesAll(related, r.revoke)) {
        const key = keyOf(r, related, where);
        if (key === undefined || reserved.has(key)) continue;
        revoked.add(key);
        const second =
          r.rotation && (keptRotation(r.rotation.statusAt, related)?.generation ?? 0) > 0
            ? secondItem(r, o, related, { [r.key]: key }, where)
            : undefined;
        if (second && !reserved.has(second.key)) revoked.add(second.key);
      }
      continue;
    }
    if (get(o, 'metadata.deletionTimestamp')) continue;
    // Expired (RelatedList.expiresAt): gone from then on, as if deleted; the soonest time to come is looked at again.
    const expires = r.expiresAt ? expiryOf(related, r.expiresAt, `(related ${r.kind} ${String(get(o, 'metadata.name'))})`) : undefined;
    if (expires !== undefined && expires <= now) {
      const key = keyOf(r, related, where);
      if (key !== undefined && !reserved.has(key)) revoked.add(key);
      continue;
    }
    if (expires !== undefined) nextExpiry = Math.min(nextExpiry ?? expires, expires);
    const item: Obj = {};
    try {
      r.item.forEach((f, i) => applyField(item, f, i, related, where, 'related.item'));
    } catch (e) {
      // A value over its limit (FieldMapping.limit): left out, as the related composite's own composition fails too,
      // saying why; one tenant's object never stops the list of the others.
      if (e instanceof OverLimitError) continue;
      throw e;
    }
    const key = item[r.key];
    if (typeof key !== 'string' || key === '')
      throw new ComposeError(`cannot list the related ${r.kind} ${String(get(o, 'metadata.name'))} ${where}: its item has no ${r.key}`);
    if (reserved.has(key))
      throw new ComposeError(
        `cannot list the related ${r.kind} ${String(get(o, 'metadata.name'))} ${where}: its ${r.key} "${key}" is the platform's own; rename it`,
      );
    if (!r.rotation) {
      items.set(key, item);
      continue;
    }
    // Credentials that rotate (RelatedList.rotation): an item per slot whose user may log in, the others gone.
    const state = keptRotation(r.rotation.statusAt, related);
    const slots = liveSlots(state, now);
    if (slots.until !== undefined) nextExpiry = Math.min(nextExpiry ?? slots.until, slots.until);
    if (slots.live.includes(0)) items.set(key, item);
    else revoked.add(key);
    if ((state?.generation ?? 0) === 0) continue;
    const second = secondItem(r, o, related, item, where);
    if (!second) continue;
    if (reserved.has(second.key))
      throw new ComposeError(
        `cannot list the second slot of the related ${r.kind} ${String(get(o, 'metadata.name'))} ${where}: its ${r.key} "${second.key}" is the platform's own`,
      );
    if (slots.live.includes(1)) items.set(second.key, second.item);
    else revoked.add(second.key);
  }
  for (const old of previous) {
    const key = old[r.key];
    if (typeof key === 'string' && key !== '' && !items.has(key) && !reserved.has(key))
      items.set(key, { [r.key]: key, ...structuredClone(r.gone) });
  }
  for (const key of revoked) if (!items.has(key)) items.set(key, { [r.key]: key, ...structuredClone(r.gone) });
  list([...items.keys()].sort().map((k) => items.get(k) as Obj));
  return { requirement, ...(nextExpiry !== undefined ? { nextExpiry } : {}) };
}
