/**
 * Crossplane field paths: `spec.parameters.maxConnections`, `metadata.labels[crossplane.io/claim-name]`,
 * `spec.items[0].name`. A segment in brackets is a field name (it may hold dots) unless it is all digits, in which
 * case it is an array index — the rules of crossplane-runtime's fieldpath package.
 */

export type Segment = { readonly field: string } | { readonly index: number };

/** An error in a path or in the object it is applied to; the message names the path. */
class FieldPathError extends Error {
  constructor(
    readonly path: string,
    problem: string,
  ) {
    super(`field path "${path}": ${problem}`);
    this.name = 'FieldPathError';
  }
}

/**
 * Parsed paths by their text: a function run reads and writes the same few dozen paths of its recipe on every call,
 * and parsing them each time cost about a seventh of a call. Bounded: emptied when full, so a stream of odd paths
 * cannot grow it.
 */
const parsed = new Map<string, readonly Segment[]>();
const MAX_PARSED = 4096;

/** Splits a path into segments (frozen and shared: callers copy before changing them); throws on a bad path. */
export function parse(path: string): readonly Segment[] {
  const hit = parsed.get(path);
  if (hit) return hit;
  const segs = Object.freeze(parseUncached(path).map((s) => Object.freeze(s)));
  if (parsed.size >= MAX_PARSED) parsed.clear();
  parsed.set(path, segs);
  return segs;
}

function parseUncached(path: string): Segment[] {
  const out: Segment[] = [];
  let i = 0;
  if (path.length === 0) throw new FieldPathError(path, 'is empty');
  while (i < path.length) {
    if (path[i] === '[') {
      const end = path.indexOf(']', i);
      if (end < 0) throw new FieldPathError(path, `"[" at ${i} is not closed`);
      const inner = path.slice(i + 1, end);
      if (inner.length === 0) throw new FieldPathError(path, `empty brackets at ${i}`);
      out.push(/^[0-9]+$/.test(inner) ? { index: Number(inner) } : { field: inner });
      i = end + 1;
      if (i < path.length && path[i] === '.') {
        i++;
        if (i === path.length) throw new FieldPathError(path, 'ends with "."');
      }
      continue;
    }
    let j = i;
    while (j < path.length && path[j] !== '.' && path[j] !== '[') j++;
    if (j === i) throw new FieldPathError(path, `empty segment at ${i}`);
    if (path[j] === ']') throw new FieldPathError(path, `"]" at ${j} without "["`);
    const field = path.slice(i, j);
    if (field.includes(']')) throw new FieldPathError(path, `"]" without "[" in "${field}"`);
    out.push({ field });
    i = j;
    if (path[i] === '.') {
      i++;
      if (i === path.length) throw new FieldPathError(path, 'ends with "."');
    }
  }
  return out;
}

/** Joins a relative path below a base path: `join('spec.parameters', 'a.b')`, `join('metadata.labels', '[x.y]')`. */
export function join(base: string, rel: string): string {
  return rel.startsWith('[') ? `${base}${rel}` : `${base}.${rel}`;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** The value at `path`, or undefined when any step is missing or of the wrong type. Throws only on a bad path. */
export function get(obj: unknown, path: string): unknown {
  let cur: unknown = obj;
  for (const seg of parse(path)) {
    if ('index' in seg) {
      if (!Array.isArray(cur)) return undefined;
      cur = cur[seg.index];
    } else {
      if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, seg.field)) return undefined;
      cur = cur[seg.field];
    }
  }
  return cur;
}

/**
 * Sets `value` at `path`, creating objects and arrays on the way (arrays are padded with nulls, as Crossplane does).
 * Throws when the path crosses a value of another type (a string where an object is needed).
 */
export function set(obj: Record<string, unknown>, path: string, value: unknown): void {
  const segs = parse(path);
  let cur: unknown = obj;
  for (let k = 0; k < segs.length; k++) {
    const seg = segs[k] as Segment;
    const next = segs[k + 1];
    const make = (): unknown => (next === undefined ? value : 'index' in next ? [] : {});
    // Only an error names the part of the path walked so far.
    const upTo = () => describe(segs.slice(0, k)) || 'the object';
    if ('index' in seg) {
      if (!Array.isArray(cur)) throw new FieldPathError(path, `${upTo()} is not an array`);
      if (seg.index > 10_000) throw new FieldPathError(path, `index ${seg.index} is too large`);
      while (cur.length < seg.index) cur.push(null);
      if (next === undefined) cur[seg.index] = value;
      else if (cur[seg.index] === undefined || cur[seg.index] === null) cur[seg.index] = make();
      cur = cur[seg.index];
    } else {
      if (!isObject(cur)) throw new FieldPathError(path, `${upTo()} is not an object`);
      if (seg.field === '__proto__') throw new FieldPathError(path, 'names __proto__');
      if (next === undefined) cur[seg.field] = value;
      else if (cur[seg.field] === undefined || cur[seg.field] === null) cur[seg.field] = make();
      cur = cur[seg.field];
    }
  }
}

/** Writes segments back as a path (fields with dots in brackets). */
function describe(segs: readonly Segment[]): string {
  let out = '';
  for (const seg of segs) {
    if ('index' in seg) out += `[${seg.index}]`;
    else if (/[.[\]]/.test(seg.field) || /^[0-9]+$/.test(seg.field)) out += `[${seg.field}]`;
    else out += out ? `.${seg.field}` : seg.field;
  }
  return out;
}

/**
 * Removes the field at `path` (a path of field segments only) and returns its value; then removes each object on the
 * way that it left empty, up to but not including the first `keep` segments (a conversion never removes `spec`).
 */
export function unset(obj: Record<string, unknown>, path: string, keep = 1): unknown {
  const segs = parse(path);
  const chain: Record<string, unknown>[] = [];
  let cur: unknown = obj;
  for (const seg of segs.slice(0, -1)) {
    if ('index' in seg) throw new FieldPathError(path, 'unset takes field segments only');
    if (!isObject(cur)) return undefined;
    chain.push(cur);
    cur = cur[seg.field];
  }
  const last = segs[segs.length - 1] as Segment;
  if ('index' in last) throw new FieldPathError(path, 'unset takes field segments only');
  if (!isObject(cur) || !Object.prototype.hasOwnProperty.call(cur, last.field)) return undefined;
  const value = cur[last.field];
  delete cur[last.field];
  for (let k = segs.length - 2; k >= keep && isObject(cur) && Object.keys(cur).length === 0; k--) {
    const parent = chain[k] as Record<string, unknown>;
    delete parent[(segs[k] as { field: string }).field];
    cur = parent;
  }
  return value;
}
