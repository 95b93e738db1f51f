/**
 * The part of function-patch-and-transform (v0.9, what Klutch's Compositions run) that Klutch's Compositions use,
 * evaluated in process: a resource's base, its FromCompositeFieldPath patches (the default type) onto the composed
 * resource, and its ToCompositeFieldPath patches back onto the composite. Transforms: string Format, TrimPrefix,
 * Regexp (the whole match unless a group is named) and Convert ToLower; map; convert toType int. A patch whose
 * fromFieldPath is not set is skipped (the Optional policy); a transform that fails throws, as the function fails.
 */
import { get, set } from '../../lib/fieldpath';
import type { Patch } from './klutch';

type Obj = Record<string, unknown>;

function transform(value: unknown, t: Obj): unknown {
  const fail = (why: string): never => {
    throw new Error(`${t.type} transform of ${JSON.stringify(value)}: ${why}`);
  };
  switch (t.type) {
    case 'string': {
      const st = t.string as { type: string; fmt?: string; trim?: string; convert?: string; regexp?: { match: string; group?: number } };
      if (st.type === 'Format') return (st.fmt as string).replaceAll('%s', String(value));
      if (typeof value !== 'string') return fail('not a string');
      if (st.type === 'TrimPrefix') return value.startsWith(st.trim as string) ? value.slice((st.trim as string).length) : value;
      if (st.type === 'Convert' && st.convert === 'ToLower') return value.toLowerCase();
      if (st.type === 'Regexp') {
        const m = new RegExp(st.regexp!.match).exec(value);
        if (!m) return fail(`does not match ${st.regexp!.match}`);
        return m[st.regexp!.group ?? 0];
      }
      return fail(`string transform ${st.type} is not supported here`);
    }
    case 'map': {
      const map = t.map as Obj;
      if (typeof value !== 'string' || !(value in map)) return fail('no map entry');
      return map[value];
    }
    case 'convert': {
      const to = (t.convert as { toType: string }).toType;
      if (to !== 'int') return fail(`convert to ${to} is not supported here`);
      if (typeof value === 'number' && Number.isInteger(value)) return value;
      if (typeof value !== 'string' || !/^[-+]?[0-9]+$/.test(value)) return fail('not an integer');
      return Number(value);
    }
    default:
      return fail('unknown transform');
  }
}

function apply(from: Obj, to: Obj, p: Patch): void {
  let v = get(from, p.fromFieldPath);
  if (v === undefined || v === null) return;
  for (const t of p.transforms ?? []) v = transform(v, t);
  set(to, p.toFieldPath, structuredClone(v));
}

/** The composed resource: the base with every FromCompositeFieldPath patch applied. */
export function composeFromPatches(base: Obj, patches: readonly Patch[], composite: Obj): Obj {
  const out = structuredClone(base);
  for (const p of patches) if ((p.type ?? 'FromCompositeFieldPath') === 'FromCompositeFieldPath') apply(composite, out, p);
  return out;
}

/** The composite's status from an observed composed resource: every ToCompositeFieldPath patch applied. */
export function statusFromPatches(patches: readonly Patch[], observed: Obj): Obj {
  const out: Obj = {};
  for (const p of patches) if (p.type === 'ToCompositeFieldPath') apply(observed, out, p);
  return out;
}
