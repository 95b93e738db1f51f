/**
 * A value of another object written into the composed resource (`Recipe.valueFrom`): the address a load balancer gave
 * an instance's Service, say, which exists only after the instance was composed. The function cannot read objects
 * itself: it asks Crossplane on every run (the value may change or come late), and the object found must be of the
 * composite's namespace and carry every label from the composite's trusted view, as for diagnostics. Pure.
 */
import type { ValueFrom } from '../../recipe';
import { get, set } from '../../lib/fieldpath';
import { diagnosticsSelector, foundFor, type DiagnosticsSelector } from './diagnostics';

type Obj = Record<string, unknown>;

/** The key of the requirement in the response, and of what Crossplane found in the next request. */
export const VALUE_FROM_REQUIREMENT = 'value-from';

export interface ValueFound {
  /** What to ask Crossplane for (undefined when the composite has no namespace to look in or lacks a label's field). */
  readonly selector?: DiagnosticsSelector;
  /** The formatted value, once an object found has a scalar at `from`. */
  readonly value?: string;
}

/** The selector for `v` and, of the objects found that may speak for the composite, the first one's value. */
export function valueFrom(v: ValueFrom, composite: Obj, found: readonly Obj[] | undefined, where: string): ValueFound {
  const selector = diagnosticsSelector(v, composite, where, 'valueFrom');
  if (!selector) return {};
  for (const o of foundFor(selector, found)) {
    const x = get(o, v.from);
    if (typeof x === 'string' ? x !== '' : typeof x === 'number' || typeof x === 'boolean')
      return { selector, value: v.format.replaceAll('%s', String(x)) };
  }
  return { selector };
}

/** Writes the value at `v.to` of `target` (the wrapped object, or the resource itself), when there is one. */
export function writeValue(v: ValueFrom, target: Obj, found: ValueFound): void {
  if (found.value !== undefined) set(target, v.to, v.base64 ? Buffer.from(found.value).toString('base64') : found.value);
}
