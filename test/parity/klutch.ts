/**
 * Klutch's own API contract (schemas/klutch-crossplane-api/, v1.5.0, verbatim) as the parity tests read it: its XRDs
 * by our API name, its Compositions by name, and the claim schema Crossplane derives from an XRD flattened into
 * facets per path (type, enum, bounds, pattern, ...), so that two schemas can be compared path by path.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import type { JSONSchemaProps } from '../../lib/schema';
import { parseYaml, ROOT } from '../../harness/crossplane/catalog';
import { claimCrd, type XrdObject } from '../../lib/xcrd';

const KLUTCH_DIR = join(ROOT, 'schemas', 'klutch-crossplane-api');
const KLUTCH_V2_DIR = join(ROOT, 'schemas', 'klutch-crossplane-api-v2');

type Obj = Record<string, unknown>;

function yamlFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith('.yaml'))
    .map((d) => join(d.parentPath, d.name))
    .sort();
}

/** Our API name for a Klutch claim kind (`PostgresqlInstance` → `postgresql`, `ServiceBinding` → `servicebinding`). */
export function apiNameOf(claimKind: string): string {
  return claimKind.replace(/Instance$/, '').toLowerCase();
}

/**
 * Klutch's XRDs by our API name, with the file each came from: v1.5.0's, or (`v2`) those of its branch
 * migration-crossplane-v2 (schemas/klutch-crossplane-api-v2/: namespaced, the backend in `spec.crossplane.compositionRef`).
 */
export function klutchXrds(release: 'v1.5.0' | 'v2' = 'v1.5.0'): Map<string, { xrd: XrdObject; file: string }> {
  const out = new Map<string, { xrd: XrdObject; file: string }>();
  for (const f of yamlFiles(release === 'v2' ? KLUTCH_V2_DIR : KLUTCH_DIR)) {
    for (const doc of parseYaml(readFileSync(f, 'utf8'))) {
      if (doc.kind !== 'CompositeResourceDefinition') continue;
      const xrd = doc as unknown as XrdObject;
      out.set(apiNameOf(xrd.spec.claimNames?.kind ?? xrd.spec.names.kind), { xrd, file: relative(ROOT, f) });
    }
  }
  return out;
}

/** A function-patch-and-transform Composition of Klutch's, as far as the parity tests read it. */
export interface KlutchComposition {
  readonly name: string;
  readonly file: string;
  readonly compositeKind: string;
  readonly resources: readonly { readonly name: string; readonly base: Obj; readonly patches: readonly Patch[] }[];
}

export interface Patch {
  readonly type?: 'FromCompositeFieldPath' | 'ToCompositeFieldPath';
  readonly fromFieldPath: string;
  readonly toFieldPath: string;
  readonly transforms?: readonly Obj[];
}

/** Klutch's Compositions by name (`a9s-postgresql`, `a8s-backup`, ...). */
export function klutchCompositions(): Map<string, KlutchComposition> {
  const out = new Map<string, KlutchComposition>();
  for (const f of yamlFiles(KLUTCH_DIR)) {
    for (const doc of parseYaml(readFileSync(f, 'utf8'))) {
      if (doc.kind !== 'Composition') continue;
      const spec = doc.spec as { compositeTypeRef: { kind: string }; pipeline: { input: { resources: KlutchComposition['resources'] } }[] };
      const name = (doc.metadata as { name: string }).name;
      if (spec.pipeline.length !== 1) throw new Error(`${f}: expected one pipeline step, found ${spec.pipeline.length}`);
      out.set(name, {
        name,
        file: relative(ROOT, f),
        compositeKind: spec.compositeTypeRef.kind,
        resources: spec.pipeline[0]!.input.resources,
      });
    }
  }
  return out;
}

/** The claim CRD's `openAPIV3Schema` that Crossplane derives from an XRD (unknown keywords such as Klutch's `supported` dropped). */
export function claimSchema(xrd: XrdObject | Obj): JSONSchemaProps {
  const crd = claimCrd(xrd as XrdObject);
  return crd.spec.versions[0]!.schema!.openAPIV3Schema as JSONSchemaProps;
}

/** What one schema node says about the values it accepts; CEL rules that are not plain bounds or patterns stay as `cel`. */
export interface Facets {
  type?: string;
  enum?: string[];
  required?: string[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  pattern?: string[];
  format?: string;
  nullable?: boolean;
  intOrString?: boolean;
  preserveUnknownFields?: boolean;
  additionalProperties?: boolean;
  listType?: string;
  /** CEL rules compared by effect (claims on the real API server), not by text. */
  cel?: string[];
}

export const FACETS: readonly (keyof Facets)[] = [
  'type',
  'enum',
  'required',
  'default',
  'minimum',
  'maximum',
  'minLength',
  'maxLength',
  'minItems',
  'maxItems',
  'pattern',
  'format',
  'nullable',
  'intOrString',
  'preserveUnknownFields',
  'additionalProperties',
  'listType',
  'cel',
];

/** A CEL string literal's value (`"^a\\.b$"` → `^a\.b$`). */
function celStringValue(lit: string): string {
  return lit.slice(1, -1).replace(/\\(.)/g, '$1');
}

/**
 * Folds a CEL rule that only bounds a number or matches a regular expression into facets (`self >= 256` is
 * `minimum: 256`; `self > 0` on an integer is `minimum: 1`; `self.matches("re")` is `pattern: re`, both evaluated by
 * Go's RE2). Returns false for any other rule.
 */
function foldRule(rule: string, type: string | undefined, f: Facets): boolean {
  const r = rule.trim();
  const bound = /^self\s*(>=|>|<=|<)\s*(-?[0-9]+(?:\.[0-9]+)?)$/.exec(r);
  if (bound && (type === 'integer' || type === 'number')) {
    const n = Number(bound[2]);
    const step = type === 'integer' ? 1 : 0;
    if ((bound[1] === '>' || bound[1] === '<') && step === 0) return false; // exclusive bounds on numbers: keep as CEL
    if (bound[1] === '>=' || bound[1] === '>') f.minimum = Math.max(f.minimum ?? -Infinity, bound[1] === '>' ? n + step : n);
    else f.maximum = Math.min(f.maximum ?? Infinity, bound[1] === '<' ? n - step : n);
    return true;
  }
  const match = /^self\.matches\(("(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*')\)$/.exec(r);
  if (match && type === 'string') {
    f.pattern = [...(f.pattern ?? []), celStringValue(match[1] as string)];
    return true;
  }
  return false;
}

function facetsOf(s: JSONSchemaProps): Facets {
  const f: Facets = {};
  const intOrString = s['x-kubernetes-int-or-string'] === true;
  if (s.type) f.type = s.type;
  if (s.enum) f.enum = [...new Set(s.enum.map((v) => JSON.stringify(v)))].sort();
  if (s.required?.length) f.required = [...s.required].sort();
  if (s.default !== undefined) f.default = s.default;
  const step = s.type === 'integer' ? 1 : 0;
  if (s.minimum !== undefined) f.minimum = s.exclusiveMinimum ? s.minimum + step : s.minimum;
  if (s.maximum !== undefined) f.maximum = s.exclusiveMaximum ? s.maximum - step : s.maximum;
  for (const k of ['minLength', 'maxLength', 'minItems', 'maxItems', 'format'] as const) if (s[k] !== undefined) (f as Obj)[k] = s[k];
  if (s.pattern !== undefined) f.pattern = [s.pattern];
  if (s.nullable) f.nullable = true;
  if (intOrString) f.intOrString = true;
  if (s['x-kubernetes-preserve-unknown-fields']) f.preserveUnknownFields = true;
  if (s.additionalProperties !== undefined) f.additionalProperties = s.additionalProperties !== false;
  if (s['x-kubernetes-list-type'] && s['x-kubernetes-list-type'] !== 'atomic') f.listType = s['x-kubernetes-list-type'];
  for (const r of s['x-kubernetes-validations'] ?? []) {
    if (!foldRule(r.rule, intOrString ? undefined : s.type, f)) f.cel = [...(f.cel ?? []), r.rule.replace(/\s+/g, ' ').trim()];
  }
  if (f.pattern) f.pattern.sort();
  return f;
}

/** Every node of a schema by path (`spec.parameters.maxConnections`, `spec.parameters.groks[]`), with its facets. */
export function flatten(schema: JSONSchemaProps, at = ''): Map<string, Facets> {
  const out = new Map<string, Facets>([[at || '<root>', facetsOf(schema)]]);
  for (const [k, p] of Object.entries(schema.properties ?? {})) {
    for (const [path, f] of flatten(p, at ? `${at}.${k}` : k)) out.set(path, f);
  }
  if (schema.items) for (const [path, f] of flatten(schema.items, `${at}[]`)) out.set(path, f);
  if (typeof schema.additionalProperties === 'object') {
    for (const [path, f] of flatten(schema.additionalProperties, `${at}{}`)) out.set(path, f);
  }
  return out;
}
