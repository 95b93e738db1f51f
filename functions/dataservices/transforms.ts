/** The recipe's transforms (recipe/recipe.ts `Transform`), applied in order to a value read from the composite. */
import type { Transform } from '../../recipe';

class TransformError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TransformError';
  }
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 80 ? `${s.slice(0, 77)}...` : s;
}

/** Applies one transform; throws TransformError naming the transform and the value it cannot handle. */
function applyTransform(value: unknown, t: Transform): unknown {
  switch (t.type) {
    case 'trimPrefix':
      if (typeof value !== 'string') throw new TransformError(`trimPrefix "${t.prefix}" needs a string, got ${show(value)}`);
      return value.startsWith(t.prefix) ? value.slice(t.prefix.length) : value;
    case 'toInteger':
      if (typeof value === 'number' && Number.isSafeInteger(value)) return value;
      if (typeof value !== 'string' || !/^[-+]?[0-9]+$/.test(value))
        throw new TransformError(`toInteger needs a decimal integer string, got ${show(value)}`);
      {
        const n = Number(value);
        if (!Number.isSafeInteger(n)) throw new TransformError(`toInteger: ${show(value)} is out of range`);
        return n;
      }
    case 'lowercase':
      if (typeof value !== 'string') throw new TransformError(`lowercase needs a string, got ${show(value)}`);
      return value.toLowerCase();
    case 'format':
      if (typeof value === 'object' && value !== null) throw new TransformError(`format "${t.format}" needs a scalar, got ${show(value)}`);
      return t.format.replaceAll('%s', String(value));
    case 'map': {
      const key = typeof value === 'string' ? value : show(value);
      if (!Object.prototype.hasOwnProperty.call(t.map, key)) {
        throw new TransformError(`map has no entry for ${show(value)} (keys: ${Object.keys(t.map).join(', ') || 'none'})`);
      }
      return t.map[key];
    }
    default:
      throw new TransformError(`unknown transform type ${show((t as { type: unknown }).type)}`);
  }
}

/** Applies the transforms in order; an error names the failing transform's position. */
export function applyTransforms(value: unknown, transforms: readonly Transform[] | undefined): unknown {
  let v = value;
  (transforms ?? []).forEach((t, i) => {
    try {
      v = applyTransform(v, t);
    } catch (e) {
      throw new TransformError(`transforms[${i}]: ${(e as Error).message}`, { cause: e });
    }
  });
  return v;
}
