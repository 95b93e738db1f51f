/**
 * The object a composed resource makes, as it already exists in the cluster (`GeneratedValue.live`): on a namespaced
 * (Crossplane v2) composite's first composition of a resource, the v1 package's composite may have made the same
 * object (the cnpg binding's Secret, with its password), and the v2 one takes it over by name. The function asks
 * Crossplane for it by that name in the composite's own namespace, so the generated values it holds are kept instead
 * of replaced. Pure: no SDK calls, no I/O.
 */
import type { Input } from '../../recipe';
import { trustedComposite } from './compose';
import { get } from '../../lib/fieldpath';

type Obj = Record<string, unknown>;

/** The key of the requirement (an `extra_resources` one, as related.ts asks). */
export const LIVE_REQUIREMENT = 'live-object';

export interface LiveSelector {
  readonly apiVersion: string;
  readonly kind: string;
  readonly matchName: string;
  readonly namespace: string;
}

/**
 * What to ask for: the object `composed` makes (the wrapped one, or the resource itself), when the recipe keeps a
 * generated value from it, nothing of it was observed yet, and the composite is namespaced (its namespace is the
 * object's; a cluster-scoped v1 composite has no object to take over, and Crossplane v1.20 cannot select by
 * namespace).
 */
export function liveRequirement(
  input: Input,
  composed: Obj,
  composite: Obj,
  observed: Obj | undefined,
  where: string,
): LiveSelector | undefined {
  if (observed || !(input.generated ?? []).some((g) => g.live)) return undefined;
  const namespace = get(trustedComposite(composite, where), 'metadata.namespace');
  if (typeof namespace !== 'string' || namespace === '') return undefined;
  const object = input.wrapper ? get(composed, input.wrapper.manifestAt) : composed;
  const name = get(object, 'metadata.name');
  const own = get(object, 'metadata.namespace') ?? namespace;
  if (typeof name !== 'string' || name === '' || own !== namespace) return undefined;
  return { apiVersion: input.resource.apiVersion, kind: input.resource.kind, matchName: name, namespace };
}

/** The object Crossplane found for the requirement, if it is the one asked for (kind, name and namespace). */
export function liveObject(found: readonly Obj[] | undefined, asked: LiveSelector | undefined): Obj | undefined {
  if (!asked) return undefined;
  return found?.find(
    (o) => get(o, 'kind') === asked.kind && get(o, 'metadata.name') === asked.matchName && get(o, 'metadata.namespace') === asked.namespace,
  );
}
