/**
 * The breaking-change guard (`npm run synth -- --against <git ref or dist folder>`, issue 36 item 4), as `buf
 * breaking` is for protobuf: the XRDs synth is about to write are compared with the ones of an earlier output, and a
 * change that would break claims already stored — in the control plane and, through the konnectors, in every bound
 * app cluster, where app teams wrote them against the old schema — is refused before anything is written.
 *
 * A schema may widen (a new optional field, an enum value more, a bound dropped, an integer that may now be any
 * number); it may not narrow. Compared per API and version: a version the earlier output did not have is new and
 * compared with nothing. Under `status` only removed fields and changed types count: the control plane writes the
 * status, so narrowing what it writes refuses no claim, but a reader of a removed field loses it.
 */
import type { JSONSchemaProps } from '../lib/schema';

/** What of a stored claim a change breaks; each has its fix (FIXES). */
export type BreakRule =
  | 'api-removed'
  | 'identity-changed'
  | 'version-removed'
  | 'field-removed'
  | 'type-changed'
  | 'enum-narrowed'
  | 'pattern-narrowed'
  | 'bound-narrowed'
  | 'required-added'
  | 'rule-added'
  | 'unknown-fields-pruned';

export interface Break {
  /** The XRD's name (`xpostgresqlinstances.anynines.com`) and the claim's kind where it has one. */
  readonly api: string;
  /** The API version, empty for a change of the whole API. */
  readonly version: string;
  /** The field's path in the object (`spec.parameters.plan`), empty for a change of the whole API or version. */
  readonly field: string;
  readonly rule: BreakRule;
  /** What changed. */
  readonly detail: string;
}

/** The smallest part of a Crossplane XRD (v1 or v2) the guard reads. */
export interface XrdLike {
  readonly metadata?: { readonly name?: string };
  readonly spec?: {
    readonly group?: string;
    readonly scope?: string;
    readonly names?: { readonly kind?: string };
    readonly claimNames?: { readonly kind?: string };
    readonly versions?: readonly {
      readonly name: string;
      readonly served?: boolean;
      readonly referenceable?: boolean;
      readonly deprecated?: boolean;
      readonly schema?: { readonly openAPIV3Schema?: JSONSchemaProps };
    }[];
  };
}

const NEW_VERSION = 'or make the change in a new version of the API with a conversion (docs/add-a-data-service.md, "Changing an API")';

/** The fix of each rule: what to do instead. */
export const FIXES: Record<BreakRule, string> = {
  'api-removed': 'keep the API in the catalog until no claim of it is stored anywhere: removing its XRD orphans every stored claim',
  'identity-changed': 'a kind, group or scope is part of what stored claims are: add the new shape as an API of its own beside this one',
  'version-removed':
    'keep the version served, marked deprecated, until every stored object has moved to another version (docs/add-a-data-service.md, "Changing an API")',
  'field-removed': `keep the field (say in its description that it is deprecated), ${NEW_VERSION}`,
  'type-changed': `keep the type, ${NEW_VERSION}`,
  'enum-narrowed': `keep every value the earlier schema accepted, ${NEW_VERSION}`,
  'pattern-narrowed': `keep the earlier pattern or format, ${NEW_VERSION}`,
  'bound-narrowed': `keep the earlier bound, ${NEW_VERSION}`,
  'required-added': 'give the new field a default, or leave it optional: stored claims do not have it',
  'rule-added': `a new or changed validation rule refuses claims written against the earlier schema: leave it out, ${NEW_VERSION}`,
  'unknown-fields-pruned': `keep x-kubernetes-preserve-unknown-fields: without it the API server drops the fields stored claims have, ${NEW_VERSION}`,
};

/** One line per break: the API, version, field, what changed and the fix. */
export function formatBreak(b: Break): string {
  const where = [b.api, b.version, b.field].filter(Boolean).join(' ');
  return `${where}: ${b.detail}; ${FIXES[b.rule]}`;
}

const apiName = (x: XrdLike) => {
  const claim = x.spec?.claimNames?.kind ?? x.spec?.names?.kind;
  return `${x.metadata?.name ?? '<unnamed XRD>'}${claim ? ` (${claim})` : ''}`;
};

/** The changes from `before` to `after` (XRDs of two synth outputs) that would break stored claims. */
export function breakingChanges(before: readonly XrdLike[], after: readonly XrdLike[]): Break[] {
  const found: Break[] = [];
  const now = new Map(after.map((x) => [x.metadata?.name, x]));
  for (const old of before) {
    const api = apiName(old);
    const cur = now.get(old.metadata?.name);
    if (!cur) {
      found.push({ api, version: '', field: '', rule: 'api-removed', detail: 'the API is gone' });
      continue;
    }
    for (const [what, a, b] of [
      ['group', old.spec?.group, cur.spec?.group],
      ['scope', old.spec?.scope ?? 'LegacyCluster', cur.spec?.scope ?? 'LegacyCluster'],
      ['kind', old.spec?.names?.kind, cur.spec?.names?.kind],
      ['claim kind', old.spec?.claimNames?.kind, cur.spec?.claimNames?.kind],
    ] as const)
      if (a !== b)
        found.push({ api, version: '', field: '', rule: 'identity-changed', detail: `its ${what} changed from ${show(a)} to ${show(b)}` });
    const versions = new Map((cur.spec?.versions ?? []).map((v) => [v.name, v]));
    for (const v of old.spec?.versions ?? []) {
      const next = versions.get(v.name);
      // A deprecated version that is not the storage version may go (its stored objects migrated first: the manual).
      const why = v.referenceable ? 'objects are stored in it' : v.served && !v.deprecated ? 'it was not deprecated first' : undefined;
      if (!next?.served && why)
        found.push({ api, version: v.name, field: '', rule: 'version-removed', detail: `the version is no longer served, and ${why}` });
      if (!next) continue;
      const schema = (x: typeof v) => x.schema?.openAPIV3Schema ?? {};
      compareSchema(schema(v), schema(next), '', false, (field, rule, detail) => found.push({ api, version: v.name, field, rule, detail }));
    }
  }
  return found;
}

type Report = (field: string, rule: BreakRule, detail: string) => void;

const show = (v: unknown) => (v === undefined ? 'none' : JSON.stringify(v));
const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

/** Every narrowing of `a` to `b` at `path`; `status` says the node is under the object's status. */
function compareSchema(a: JSONSchemaProps, b: JSONSchemaProps, path: string, status: boolean, report: Report): void {
  const at = path || '<root>';
  const [from, to] = [typeOf(a), typeOf(b)];
  if (from !== to && to !== 'any' && !(from === 'integer' && to === 'number')) {
    report(at, 'type-changed', `its type changed from ${from} to ${to}`);
    return; // what is below a changed type is not comparable
  }
  if (a['x-kubernetes-preserve-unknown-fields'] && !b['x-kubernetes-preserve-unknown-fields'])
    report(at, 'unknown-fields-pruned', 'it no longer keeps unknown fields');
  for (const [key, sub] of Object.entries(a.properties ?? {})) {
    const next = b.properties?.[key];
    const field = join(path, key);
    const isStatus = status || (path === '' && key === 'status');
    if (!next) {
      if (!b['x-kubernetes-preserve-unknown-fields'] && !b.additionalProperties)
        report(field, 'field-removed', 'the field is gone, and stored claims have it');
    } else compareSchema(sub, next, field, isStatus, report);
  }
  if (typeof a.additionalProperties === 'object') {
    if (typeof b.additionalProperties === 'object')
      compareSchema(a.additionalProperties, b.additionalProperties, join(path, '*'), status, report);
    else if (!b['x-kubernetes-preserve-unknown-fields'])
      report(at, 'field-removed', 'it no longer takes keys of its own (additionalProperties)');
  }
  if (a.items && b.items) compareSchema(a.items, b.items, `${path}[]`, status, report);
  if (status) return; // the rest narrows what is accepted: the control plane writes the status
  const had = new Set(a.required ?? []);
  for (const key of b.required ?? [])
    if (!had.has(key) && b.properties?.[key]?.default === undefined)
      report(join(path, key), 'required-added', 'the field is required now, without a default');
  if (b.enum) {
    const lost = a.enum ? a.enum.filter((v) => !b.enum!.some((w) => JSON.stringify(w) === JSON.stringify(v))) : undefined;
    if (!lost) report(at, 'enum-narrowed', `it takes only ${b.enum.map(show).join(', ')} now`);
    else if (lost.length) report(at, 'enum-narrowed', `it no longer takes ${lost.map(show).join(', ')}`);
  }
  for (const key of ['pattern', 'format'] as const)
    if (b[key] !== undefined && b[key] !== a[key])
      report(at, 'pattern-narrowed', `its ${key} changed from ${show(a[key])} to ${show(b[key])}`);
  narrowedBounds(a, b, at, report);
  if (a.nullable && !b.nullable) report(at, 'bound-narrowed', 'it is no longer nullable');
  for (const key of ['anyOf', 'oneOf', 'allOf', 'not', 'x-kubernetes-list-type', 'x-kubernetes-list-map-keys'] as const)
    if (b[key] !== undefined && JSON.stringify(b[key]) !== JSON.stringify(a[key]))
      report(at, key.startsWith('x-') ? 'bound-narrowed' : 'rule-added', `its ${key} changed from ${show(a[key])} to ${show(b[key])}`);
  // A rule's text cannot be proven to accept what the earlier text did: a changed rule counts as a new one.
  const rules = new Set((a['x-kubernetes-validations'] ?? []).map((r) => r.rule));
  const messages = new Set((a['x-kubernetes-validations'] ?? []).map((r) => r.message));
  for (const r of b['x-kubernetes-validations'] ?? [])
    if (!rules.has(r.rule))
      report(
        at,
        'rule-added',
        messages.has(r.message) ? `the rule of "${r.message}" changed to ${r.rule}` : `a new validation rule "${r.message}": ${r.rule}`,
      );
}

/** `any` for a node that takes every type (int-or-string counts as a type of its own). */
function typeOf(s: JSONSchemaProps): string {
  if (s['x-kubernetes-int-or-string']) return 'int-or-string';
  return s.type ?? (s['x-kubernetes-preserve-unknown-fields'] ? 'any' : 'object');
}

/** Lower bounds that rose, upper bounds that fell, and bounds that are new. */
function narrowedBounds(a: JSONSchemaProps, b: JSONSchemaProps, at: string, report: Report): void {
  const lower = ['minimum', 'minLength', 'minItems', 'minProperties'] as const;
  const upper = ['maximum', 'maxLength', 'maxItems', 'maxProperties'] as const;
  for (const key of lower)
    if (b[key] !== undefined && (a[key] === undefined || b[key] > a[key]))
      report(at, 'bound-narrowed', `its ${key} rose from ${show(a[key])} to ${b[key]}`);
  for (const key of upper)
    if (b[key] !== undefined && (a[key] === undefined || b[key] < a[key]))
      report(at, 'bound-narrowed', `its ${key} fell from ${show(a[key])} to ${b[key]}`);
  for (const key of ['exclusiveMinimum', 'exclusiveMaximum', 'uniqueItems'] as const)
    if (b[key] && !a[key]) report(at, 'bound-narrowed', `${key} is set now`);
  if (b.multipleOf !== undefined && (a.multipleOf === undefined || a.multipleOf % b.multipleOf !== 0))
    report(at, 'bound-narrowed', `its multipleOf changed from ${show(a.multipleOf)} to ${b.multipleOf}`);
}
