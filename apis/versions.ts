/**
 * The versions of one data-service API (issue 36; docs/decisions/api-versions.md): the newest, which the recipes
 * read and etcd stores, and the older ones still served beside it, each with its conversion to its newer neighbour.
 * A definition whose conversion would drop a field silently is refused here, at synth time, naming the field.
 */
import type { ValidationRule, JSONSchemaProps, Schema } from '../lib/schema';
import type { RuleContext } from './api';
import { checkConversion, type VersionConversion } from '../lib/conversion';
import { API_VERSION } from '../lib/names';

/** An older version of an API, still served beside the newest. */
export interface PreviousVersion {
  /** `v1`: a Kubernetes API version older than the API's `version`. */
  readonly name: string;
  /** Its `spec` schema. */
  readonly spec: Schema;
  /** Its `status` schema. @default the newest version's */
  readonly status?: Schema;
  /** Its spec-level CEL rules: the API server checks a request against the rules of the version it is written in. */
  readonly rules?: (ctx: RuleContext) => readonly ValidationRule[];
  /** Marks it deprecated: kubectl prints this warning on every request in it, in the control plane and app clusters. */
  readonly deprecated?: string;
  /** The conversion to the next newer version: the fields it moves, adds and removes. */
  readonly conversion: Omit<VersionConversion, 'older' | 'newer'>;
}

/** One served version of an API, oldest first. */
export interface ApiVersion {
  readonly name: string;
  readonly spec: Schema;
  readonly status: Schema;
  readonly rules: (ctx: RuleContext) => readonly ValidationRule[];
  readonly deprecated?: string;
  /** The newest: the version etcd stores, Crossplane reads (referenceable) and the recipes are written against. */
  readonly storage: boolean;
}

/** A field path and the schema type at it, for every leaf of a schema (objects are walked, the rest are leaves). */
function leaves(p: JSONSchemaProps, at: string, out = new Map<string, string>()): Map<string, string> {
  if (p.type === 'object' && p.properties && Object.keys(p.properties).length > 0) {
    for (const [k, v] of Object.entries(p.properties)) leaves(v, `${at}.${k}`, out);
  } else out.set(at, p['x-kubernetes-int-or-string'] ? 'int-or-string' : (p.type ?? 'any'));
  return out;
}

/** Whether `path` is `prefix` or lies below it. */
const within = (path: string, prefix: string) => path === prefix || path.startsWith(`${prefix}.`);

/**
 * Checks that the conversion from `older` to `newer` accounts for every field: each field only the older version has
 * is moved or removed, each only the newer has is moved or added, and a field both have keeps its type (a conversion
 * copies values unchanged). `fail(field, problem, fix)` throws.
 */
function checkCoverage(
  older: Pick<ApiVersion, 'name' | 'spec' | 'status'>,
  newer: Pick<ApiVersion, 'name' | 'spec' | 'status'>,
  c: VersionConversion,
  fail: (field: string, problem: string, fix: string) => never,
): void {
  const of = (v: Pick<ApiVersion, 'spec' | 'status'>) =>
    new Map([...leaves(v.spec.toJSON(), 'spec'), ...leaves(v.status.toJSON(), 'status')]);
  const [o, n] = [of(older), of(newer)];
  const field = `versions.${older.name}.conversion`;
  const exists = (m: Map<string, string>, path: string) => [...m.keys()].some((k) => within(k, path) || within(path, k));
  for (const m of c.moved ?? []) {
    if (!exists(o, m.older)) fail(`${field}.moved`, `${m.older} is not a field of ${older.name}`, `name a field of ${older.name}'s schema`);
    if (!exists(n, m.newer)) fail(`${field}.moved`, `${m.newer} is not a field of ${newer.name}`, `name a field of ${newer.name}'s schema`);
  }
  for (const a of c.added ?? []) {
    if (!exists(n, a.newer)) fail(`${field}.added`, `${a.newer} is not a field of ${newer.name}`, `name a field of ${newer.name}'s schema`);
    if (exists(o, a.newer))
      fail(`${field}.added`, `${a.newer} is a field of ${older.name} too`, 'list only fields the older version lacks');
  }
  for (const r of c.removed ?? []) {
    if (!exists(o, r)) fail(`${field}.removed`, `${r} is not a field of ${older.name}`, `name a field of ${older.name}'s schema`);
    if (exists(n, r)) fail(`${field}.removed`, `${r} is a field of ${newer.name} too`, 'list only fields the newer version lacks');
  }
  const movedOlder = (c.moved ?? []).map((m) => m.older);
  const movedNewer = (c.moved ?? []).map((m) => m.newer);
  for (const [path, type] of o) {
    if (movedOlder.some((p) => within(path, p)) || (c.removed ?? []).some((p) => within(path, p))) continue;
    const there = n.get(path);
    if (there === undefined)
      fail(
        field,
        `${older.name}'s field ${path} is not in ${newer.name}, and the conversion would drop it`,
        `add it to conversion.moved ({ older: '${path}', newer: <its path in ${newer.name}> }) or to conversion.removed (kept in an annotation)`,
      );
    if (there !== type)
      fail(
        field,
        `${path} is ${type} in ${older.name} and ${there} in ${newer.name}; a conversion copies values unchanged`,
        `give the ${newer.name} field a new name and list it in conversion.added, the old one in conversion.removed`,
      );
  }
  for (const path of n.keys()) {
    if (o.has(path) || movedNewer.some((p) => within(path, p)) || (c.added ?? []).some((a) => within(path, a.newer))) continue;
    fail(
      field,
      `${newer.name}'s field ${path} is not in ${older.name}, and the conversion neither moves nor adds it`,
      `add it to conversion.added (with the default it takes for objects written in ${older.name}) or to conversion.moved`,
    );
  }
}

/** The neighbour conversions of `versions` (oldest first), each checked; `previous` gives each older version's own. */
export function conversionsOf(
  versions: readonly ApiVersion[],
  previous: readonly PreviousVersion[],
  fail: (field: string, problem: string, fix: string) => never,
): VersionConversion[] {
  return previous.map((p, i) => {
    const newer = versions[i + 1]!;
    let c: VersionConversion;
    try {
      c = checkConversion({ older: p.name, newer: newer.name, ...p.conversion });
    } catch (e) {
      return fail(`versions.${p.name}.conversion`, (e as Error).message, 'see docs/add-a-data-service.md, "Changing an API"');
    }
    checkCoverage(versions[i]!, newer, c, fail);
    return c;
  });
}

/** Orders Kubernetes API versions as the API server does (v1alpha1 < v1beta1 < v1 < v2alpha1 ...). */
export function versionRank(v: string): [number, number, number] {
  const m = API_VERSION.exec(v);
  if (!m) return [0, 0, 0];
  return [Number(m[1]), m[2] === 'alpha' ? 0 : m[2] === 'beta' ? 1 : 2, Number(m[3] ?? 0)];
}
