/**
 * Conversion between two neighbouring versions of a data-service API, written once as field mappings and applied both
 * ways (issue 36; the design in docs/decisions/api-versions.md). What one version cannot hold is kept in an
 * annotation of the object, as Kubernetes' own conversions keep it, so that older → newer → older and newer → older →
 * newer give the object back. This module is the conversion alone: pure, over wire JSON, for the conversion server
 * and the konnector to call.
 */
import { get, parse, set, unset } from './fieldpath';

/** The path the conversion server serves an XRD's conversions on (the XRD's webhook names it). */
export const conversionPath = (xrdName: string): string => `/convert/${xrdName}`;

/** The annotation that carries what the other version cannot hold: JSON `{ "<field path>": <value> }`. */
export const KEPT_ANNOTATION = 'klutch.anynines.com/conversion-kept';

export interface VersionConversion {
  /** The older version (`v1`). */
  readonly older: string;
  /** The newer version (`v2`). */
  readonly newer: string;
  /** A field under another path in the newer version, its value unchanged (`spec.compositionRef` → `spec.crossplane.compositionRef`). */
  readonly moved?: readonly { readonly older: string; readonly newer: string }[];
  /**
   * Fields only the newer version has; `default` (the newer schema's default of the field) is set going up where the
   * object kept none and the field's parent exists.
   */
  readonly added?: readonly { readonly newer: string; readonly default?: unknown }[];
  /** Fields only the older version has: kept in the annotation going up, given back going down. */
  readonly removed?: readonly string[];
}

/** A conversion that cannot be defined as given: names the conversion, the field and the fix. */
class ConversionDefinitionError extends Error {
  constructor(c: Pick<VersionConversion, 'older' | 'newer'>, problem: string, fix: string, options?: ErrorOptions) {
    super(`conversion ${c.older} ⇄ ${c.newer}: ${problem}; ${fix}`, options);
    this.name = 'ConversionDefinitionError';
  }
}

/** Checks a conversion: field paths below `spec` or `status`, each field named once. */
export function checkConversion(c: VersionConversion): VersionConversion {
  const seen = new Set<string>();
  const field = (path: string, side: 'older' | 'newer', what: string) => {
    let segs;
    try {
      segs = parse(path);
    } catch (e) {
      throw new ConversionDefinitionError(
        c,
        `${what} "${path}": ${(e as Error).message}`,
        'write a field path, e.g. spec.parameters.size',
        {
          cause: e,
        },
      );
    }
    const root = segs[0];
    if (segs.length < 2 || !root || !('field' in root) || !['spec', 'status'].includes(root.field) || segs.some((s) => 'index' in s))
      throw new ConversionDefinitionError(
        c,
        `${what} "${path}" is not a field below spec or status`,
        'name a field of spec or status, without list indexes',
      );
    const key = `${side} ${path}`;
    if (seen.has(key)) throw new ConversionDefinitionError(c, `${what} "${path}" is named twice`, 'name each field once');
    seen.add(key);
  };
  for (const m of c.moved ?? []) (field(m.older, 'older', 'moved.older'), field(m.newer, 'newer', 'moved.newer'));
  for (const a of c.added ?? []) field(a.newer, 'newer', 'added');
  for (const r of c.removed ?? []) field(r, 'older', 'removed');
  return c;
}

type Obj = Record<string, unknown>;

function keptOf(obj: Obj): Obj {
  const raw = get(obj, `metadata.annotations[${KEPT_ANNOTATION}]`);
  if (typeof raw !== 'string') return {};
  try {
    const v: unknown = JSON.parse(raw);
    return v && typeof v === 'object' && !Array.isArray(v) ? (v as Obj) : {};
  } catch {
    return {}; // an annotation someone broke: nothing kept, the defaults apply
  }
}

function writeKept(obj: Obj, kept: Obj): void {
  const annotations = (get(obj, 'metadata.annotations') as Obj | undefined) ?? {};
  delete annotations[KEPT_ANNOTATION];
  if (Object.keys(kept).length) annotations[KEPT_ANNOTATION] = JSON.stringify(kept);
  if (Object.keys(annotations).length) set(obj, 'metadata.annotations', annotations);
  else if (get(obj, 'metadata') !== undefined) unset(obj, 'metadata.annotations');
}

/** `obj` (older) as the newer version: moved fields moved, removed ones kept, added ones from the annotation or defaults. */
export function up(obj: Obj, c: VersionConversion, apiVersionOf: (version: string) => string): Obj {
  const out = structuredClone(obj);
  const kept = keptOf(out);
  const keep: Obj = {};
  for (const r of c.removed ?? []) {
    const v = unset(out, r);
    if (v !== undefined) keep[r] = v;
  }
  const values = (c.moved ?? []).map((m) => [m, unset(out, m.older)] as const);
  for (const [m, v] of values) if (v !== undefined) set(out, m.newer, v);
  for (const a of c.added ?? []) {
    // A default applies only where its parent object exists, as the API server's structural defaulting does.
    const parent = a.newer.slice(0, a.newer.lastIndexOf('.'));
    const v = a.newer in kept ? kept[a.newer] : get(out, parent) !== undefined ? a.default : undefined;
    if (v !== undefined && get(out, a.newer) === undefined) set(out, a.newer, structuredClone(v));
  }
  // What the older version kept of the newer is given back; what it could not hold goes into the annotation.
  for (const k of Object.keys(kept)) if (!(k in keep) && !(c.added ?? []).some((a) => a.newer === k)) keep[k] = kept[k];
  writeKept(out, keep);
  out.apiVersion = apiVersionOf(c.newer);
  return out;
}

/** `obj` (newer) as the older version: the inverse of `up`. */
export function down(obj: Obj, c: VersionConversion, apiVersionOf: (version: string) => string): Obj {
  const out = structuredClone(obj);
  const kept = keptOf(out);
  const keep: Obj = {};
  for (const a of c.added ?? []) {
    const v = unset(out, a.newer);
    // Its default is no information: going up gives it back.
    if (v !== undefined && JSON.stringify(v) !== JSON.stringify(a.default)) keep[a.newer] = v;
  }
  const values = (c.moved ?? []).map((m) => [m, unset(out, m.newer)] as const);
  for (const [m, v] of values) if (v !== undefined) set(out, m.older, v);
  for (const r of c.removed ?? []) if (r in kept && get(out, r) === undefined) set(out, r, kept[r]);
  for (const k of Object.keys(kept)) if (!(k in keep) && !(c.removed ?? []).includes(k)) keep[k] = kept[k];
  writeKept(out, keep);
  out.apiVersion = apiVersionOf(c.older);
  return out;
}

/**
 * `obj` in version `to`, through the chain of neighbour conversions (`conversions` ordered oldest first, each
 * `newer` the next one's `older`). Throws on a version the chain does not name.
 */
export function convert(obj: Obj, to: string, conversions: readonly VersionConversion[], apiVersionOf: (version: string) => string): Obj {
  const versions = conversions.length ? [conversions[0]!.older, ...conversions.map((c) => c.newer)] : [];
  const from =
    String(obj.apiVersion ?? '')
      .split('/')
      .pop() ?? '';
  const i = versions.indexOf(from);
  const j = versions.indexOf(to);
  if (from === to) return obj;
  if (i < 0 || j < 0)
    throw new Error(`cannot convert ${String(obj.apiVersion)} to ${to}: the versions are ${versions.join(', ') || 'none'}`);
  let out = obj;
  for (let k = i; k < j; k++) out = up(out, conversions[k]!, apiVersionOf);
  for (let k = i; k > j; k--) out = down(out, conversions[k - 1]!, apiVersionOf);
  return out;
}

/** A ConversionReview (apiextensions.k8s.io/v1) as the API server sends it to a conversion webhook. */
export interface ConversionReview {
  readonly apiVersion: string;
  readonly kind: 'ConversionReview';
  readonly request?: { readonly uid: string; readonly desiredAPIVersion: string; readonly objects: readonly Obj[] };
}

/**
 * The webhook's answer to a review of objects of `group`: every object converted, or a Failure naming the object and
 * why (the API server then refuses the request with that message).
 */
export function answerReview(review: ConversionReview, group: string, conversions: readonly VersionConversion[]): Obj {
  const request = review.request;
  const uid = request?.uid ?? '';
  const fail = (message: string) => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, result: { status: 'Failure', message }, convertedObjects: [] },
  });
  if (!request) return fail('the ConversionReview has no request');
  const [desiredGroup, to] = request.desiredAPIVersion.split('/');
  if (desiredGroup !== group || !to) return fail(`this webhook converts ${group}, not ${request.desiredAPIVersion}`);
  const apiVersionOf = (version: string) => `${group}/${version}`;
  const converted: Obj[] = [];
  for (const o of request.objects) {
    try {
      converted.push(convert(o, to, conversions, apiVersionOf));
    } catch (e) {
      const meta = (o.metadata ?? {}) as { namespace?: string; name?: string };
      return fail(`${String(o.kind)} ${meta.namespace ? `${meta.namespace}/` : ''}${meta.name ?? ''}: ${(e as Error).message}`);
    }
  }
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'ConversionReview',
    response: { uid, result: { status: 'Success' }, convertedObjects: converted },
  };
}
