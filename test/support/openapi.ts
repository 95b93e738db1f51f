/**
 * Validation of objects against a CRD's structural schema with ajv, the way the API server's schema validation
 * treats them with `fieldValidation=Strict`:
 *
 * - unknown fields are errors: an object node without `x-kubernetes-preserve-unknown-fields` and without
 *   `additionalProperties` accepts only its declared `properties` (what the API server would prune);
 * - `metadata` (at the root and in `x-kubernetes-embedded-resource` objects) is free-form ObjectMeta, checked only for
 *   what the schema says about it (e.g. Crossplane's `name` maxLength 63) and the ObjectMeta field types;
 * - embedded resources need `apiVersion` and `kind`;
 * - `x-kubernetes-int-or-string` accepts integers and strings, `nullable` accepts null; a null for a non-nullable field
 *   is pruned (or replaced by the field's default) before validation, as the API server does;
 * - defaults are applied before validation (so a defaulted field satisfies `required`);
 * - `x-kubernetes-list-type: set` items must be unique, `map` items unique by their `x-kubernetes-list-map-keys`;
 * - formats the API server checks (date-time, date, byte, uuid, ipv4, ipv6, hostname, email, duration) are checked.
 *
 * CEL rules (`x-kubernetes-validations`) are NOT evaluated here; crank and the real API server do that.
 *
 * Errors read `<path>: <message>` with Kubernetes field paths (`spec.items[0].name`) and messages shaped like the API
 * server's (`Required value`, `Unsupported value: "x": supported values: "a", "b"`, `unknown field "spec.x"`).
 */
import { Ajv, type ErrorObject, type ValidateFunction } from 'ajv';
import type { JSONSchemaProps } from '../../lib/schema';
import { claimCrd, compositeCrd, type XrdObject } from '../../harness/xcrd';

export interface ValidationResult {
  readonly valid: boolean;
  readonly errors: string[];
}

export type Validator = (obj: unknown) => ValidationResult;

/** A CRD as far as the validator reads it (any apiextensions.k8s.io/v1 CRD object qualifies). */
export interface CrdLike {
  readonly spec: {
    readonly versions?: readonly {
      readonly name: string;
      readonly served?: boolean;
      readonly storage?: boolean;
      readonly schema?: { readonly openAPIV3Schema?: unknown };
    }[];
    readonly validation?: { readonly openAPIV3Schema?: unknown };
    readonly version?: string;
  };
}

/** A validator for objects of the CRD's `version` (default: the storage version, else the first served one). */
export function validatorFor(crd: CrdLike | Record<string, unknown>, version?: string): Validator {
  const spec = (crd as CrdLike).spec;
  if (!spec) throw new Error('not a CustomResourceDefinition: no spec');
  const versions = spec.versions ?? [];
  let schema: unknown;
  if (versions.length > 0) {
    const v =
      version !== undefined
        ? versions.find((x) => x.name === version)
        : (versions.find((x) => x.storage) ?? versions.find((x) => x.served) ?? versions[0]);
    if (!v) throw new Error(`CRD has no version ${version}; it has ${versions.map((x) => x.name).join(', ')}`);
    schema = v.schema?.openAPIV3Schema ?? spec.validation?.openAPIV3Schema;
  } else {
    schema = spec.validation?.openAPIV3Schema;
  }
  if (!schema) throw new Error(`CRD version ${version ?? '(default)'} has no openAPIV3Schema`);
  return schemaValidator(schema as JSONSchemaProps, { root: true });
}

export interface SchemaValidatorOptions {
  /** Validate a resource root: `apiVersion`, `kind` and free-form `metadata` are always allowed. @default true */
  readonly root?: boolean;
}

/** A validator for a structural schema (a CRD version's openAPIV3Schema, or any node of one). */
export function schemaValidator(schema: JSONSchemaProps, opts: SchemaValidatorOptions = {}): Validator {
  const root = opts.root ?? true;
  const compiled = ajv().compile(toAjvSchema(schema, { root, value: false }));
  return (obj) => {
    const data = structuredClone(obj);
    pruneNulls(data, schema);
    const valid = compiled(data) as boolean;
    return { valid, errors: valid ? [] : formatErrors(compiled, data) };
  };
}

/** The validator of the claim CRD Crossplane derives from the XRD (see xcrd.ts). */
export function claimValidator(xrd: XrdObject | Record<string, unknown>, version?: string): Validator {
  return validatorFor(claimCrd(xrd), version);
}

/** The validator of the composite CRD Crossplane derives from the XRD (see xcrd.ts). */
export function compositeValidator(xrd: XrdObject | Record<string, unknown>, version?: string): Validator {
  return validatorFor(compositeCrd(xrd), version);
}

// ---------------------------------------------------------------------------------------------------------------------

let shared: Ajv | undefined;

const FORMATS: Record<string, RegExp | ((s: string) => boolean)> = {
  'date-time': (s) =>
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s) && !Number.isNaN(Date.parse(s.replace(' ', 'T'))),
  datetime: (s) => /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(s),
  date: (s) => /^\d{4}-\d{2}-\d{2}$/.test(s) && !Number.isNaN(Date.parse(s)),
  byte: /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/,
  uuid: /^[0-9a-fA-F]{8}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{4}-?[0-9a-fA-F]{12}$/,
  ipv4: /^(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)(\.(25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)){3}$/,
  ipv6: (s) => s.includes(':') && /^[0-9a-fA-F:.]+$/.test(s),
  hostname: /^(?=.{1,253}$)[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?(\.[a-zA-Z0-9]([-a-zA-Z0-9]{0,61}[a-zA-Z0-9])?)*$/,
  email: /^[^\s@]+@[^\s@]+$/,
  duration: /^([+-]?(\d+(\.\d+)?(ns|us|µs|ms|s|m|h|d|w))+|0)$/,
};

function ajv(): Ajv {
  if (shared) return shared;
  const a = new Ajv({ allErrors: true, strict: false, useDefaults: true, validateFormats: true, verbose: true });
  for (const [name, f] of Object.entries(FORMATS)) a.addFormat(name, f instanceof RegExp ? f : { validate: f });
  a.addKeyword({
    keyword: 'x-list-map-keys',
    type: 'array',
    schemaType: 'array',
    errors: true,
    validate: function listMapKeys(keys: string[], data: unknown[]): boolean {
      const seen = new Set<string>();
      for (const item of data) {
        if (typeof item !== 'object' || item === null) continue;
        const k = JSON.stringify(keys.map((key) => (item as Record<string, unknown>)[key]));
        if (seen.has(k)) {
          (listMapKeys as unknown as { errors: Partial<ErrorObject>[] }).errors = [
            { keyword: 'x-list-map-keys', message: `Duplicate value: ${k}`, params: { keys } },
          ];
          return false;
        }
        seen.add(k);
      }
      return true;
    },
  });
  shared = a;
  return a;
}

interface Ctx {
  /** The node is a resource root (or an embedded resource): apiVersion, kind, metadata are implied. */
  readonly root: boolean;
  /** Inside anyOf/oneOf/allOf/not: value validation only, no pruning (Kubernetes prunes by the skeleton alone). */
  readonly value: boolean;
}

const objectMetaProps = (): Record<string, object> => ({
  name: { type: 'string' },
  generateName: { type: 'string' },
  namespace: { type: 'string' },
  labels: { type: 'object', additionalProperties: { type: 'string' } },
  annotations: { type: 'object', additionalProperties: { type: 'string' } },
  finalizers: { type: 'array', items: { type: 'string' } },
  ownerReferences: { type: 'array', items: { type: 'object' } },
});

/** The ajv (draft-07) schema of a Kubernetes structural schema node. */
export function toAjvSchema(s: JSONSchemaProps, ctx: Ctx = { root: true, value: false }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const x = s as JSONSchemaProps & Record<string, unknown>;
  for (const k of [
    'enum',
    'pattern',
    'minLength',
    'maxLength',
    'minItems',
    'maxItems',
    'minProperties',
    'maxProperties',
    'multipleOf',
    'uniqueItems',
    'default',
  ] as const) {
    if (x[k] !== undefined) out[k] = structuredClone(x[k]);
  }
  if (s.required?.length) out.required = [...s.required];
  if (s.minimum !== undefined) out[s.exclusiveMinimum ? 'exclusiveMinimum' : 'minimum'] = s.minimum;
  if (s.maximum !== undefined) out[s.exclusiveMaximum ? 'exclusiveMaximum' : 'maximum'] = s.maximum;
  if (s.format && s.format in FORMATS && (s.type === 'string' || s.type === undefined)) out.format = s.format;

  const types: string[] = [];
  if (s['x-kubernetes-int-or-string']) types.push('integer', 'string');
  else if (s.type) types.push(s.type);
  if (s.nullable && types.length > 0) types.push('null');
  if (s.nullable && Array.isArray(out.enum)) out.enum = [...(out.enum as unknown[]), null];
  if (types.length > 0) out.type = types.length === 1 ? types[0] : types;

  const embedded = s['x-kubernetes-embedded-resource'] === true;
  const resource = (ctx.root && !ctx.value) || embedded;
  const isObject = s.type === 'object' || s.properties !== undefined || (resource && !ctx.value);

  if (s.properties || resource) {
    const props: Record<string, unknown> = {};
    for (const [k, p] of Object.entries(s.properties ?? {})) props[k] = toAjvSchema(p, { root: false, value: ctx.value });
    if (resource) {
      props.apiVersion = { ...((props.apiVersion as object) ?? {}), type: 'string' };
      props.kind = { ...((props.kind as object) ?? {}), type: 'string' };
      props.metadata = objectMeta(s.properties?.metadata);
    }
    out.properties = props;
  }
  if (embedded) {
    out.required = [...new Set([...((out.required as string[]) ?? []), 'apiVersion', 'kind'])];
    (out.properties as Record<string, Record<string, unknown>>).apiVersion!.minLength = 1;
    (out.properties as Record<string, Record<string, unknown>>).kind!.minLength = 1;
  }

  if (s.additionalProperties !== undefined) {
    out.additionalProperties =
      typeof s.additionalProperties === 'boolean'
        ? s.additionalProperties
        : toAjvSchema(s.additionalProperties, { root: false, value: ctx.value });
  } else if (isObject && !ctx.value && s['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }

  if (s.items && !Array.isArray(s.items)) out.items = toAjvSchema(s.items, { root: false, value: ctx.value });
  if (s['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (s['x-kubernetes-list-type'] === 'map' && s['x-kubernetes-list-map-keys']?.length)
    out['x-list-map-keys'] = [...s['x-kubernetes-list-map-keys']];

  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (s[k]?.length) out[k] = s[k]!.map((b) => toAjvSchema(b, { root: false, value: true }));
  }
  if (s.not) out.not = toAjvSchema(s.not, { root: false, value: true });
  return out;
}

/** Free-form ObjectMeta, with what the schema declares about metadata (name and generateName) on top. */
function objectMeta(declared: JSONSchemaProps | undefined): Record<string, unknown> {
  const props: Record<string, unknown> = objectMetaProps();
  for (const [k, p] of Object.entries(declared?.properties ?? {})) {
    props[k] = { ...(props[k] as object), ...toAjvSchema(p, { root: false, value: false }) };
  }
  return { type: 'object', properties: props };
}

/** PruneNonNullableNullsWithoutDefaults, and the defaulting of non-nullable nulls that have a default. */
function pruneNulls(x: unknown, s: JSONSchemaProps | undefined): void {
  if (!s || typeof x !== 'object' || x === null) return;
  if (Array.isArray(x)) {
    for (const item of x) pruneNulls(item, s.items);
    return;
  }
  const obj = x as Record<string, unknown>;
  for (const [k, v] of Object.entries(obj)) {
    const sub = s.properties?.[k] ?? (typeof s.additionalProperties === 'object' ? s.additionalProperties : undefined);
    if (v === null && sub && !sub.nullable) {
      if (sub.default !== undefined) obj[k] = structuredClone(sub.default);
      else delete obj[k];
    } else {
      pruneNulls(v, sub);
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------------
// Errors, Kubernetes style

/** `/spec/items/0/name` → `spec.items[0].name`. */
export function fieldPath(pointer: string, child?: string): string {
  const parts =
    pointer === ''
      ? []
      : pointer
          .slice(1)
          .split('/')
          .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  if (child !== undefined) parts.push(child);
  let out = '';
  for (const p of parts) {
    if (/^\d+$/.test(p)) out += `[${p}]`;
    else if (/^[A-Za-z_][A-Za-z0-9_-]*$/.test(p)) out += out === '' ? p : `.${p}`;
    else out += `[${JSON.stringify(p)}]`;
  }
  return out === '' ? '<root>' : out;
}

function show(v: unknown): string {
  return typeof v === 'string' ? JSON.stringify(v) : (JSON.stringify(v) ?? String(v));
}

function formatErrors(fn: ValidateFunction, _data: unknown): string[] {
  const errs = (fn.errors ?? []).filter((e) => !/\/(anyOf|oneOf)\/\d+\//.test(e.schemaPath) && !/\/not\//.test(e.schemaPath));
  const out: string[] = [];
  for (const e of errs) {
    const at = fieldPath(e.instancePath);
    const p = e.params as Record<string, unknown>;
    switch (e.keyword) {
      case 'required': {
        out.push(`${fieldPath(e.instancePath, String(p.missingProperty))}: Required value`);
        break;
      }
      case 'additionalProperties': {
        const f = fieldPath(e.instancePath, String(p.additionalProperty));
        out.push(`${f}: unknown field ${JSON.stringify(f)}`);
        break;
      }
      case 'enum': {
        const allowed = (p.allowedValues as unknown[]).map(show).join(', ');
        out.push(`${at}: Unsupported value: ${show(e.data)}: supported values: ${allowed}`);
        break;
      }
      case 'type': {
        const t = Array.isArray(p.type) ? (p.type as string[]).join(',') : String(p.type);
        out.push(`${at}: Invalid value: ${show(typeName(e.data))}: ${at} in body must be of type ${t}: ${show(typeName(e.data))}`);
        break;
      }
      case 'minimum':
      case 'exclusiveMinimum':
        out.push(
          `${at}: Invalid value: ${show(e.data)}: ${at} in body should be greater than ${e.keyword === 'minimum' ? 'or equal to ' : ''}${String(p.limit)}`,
        );
        break;
      case 'maximum':
      case 'exclusiveMaximum':
        out.push(
          `${at}: Invalid value: ${show(e.data)}: ${at} in body should be less than ${e.keyword === 'maximum' ? 'or equal to ' : ''}${String(p.limit)}`,
        );
        break;
      case 'maxLength':
        out.push(`${at}: Too long: may not be more than ${String(p.limit)} bytes`);
        break;
      case 'minLength':
        out.push(`${at}: Invalid value: ${show(e.data)}: ${at} in body should be at least ${String(p.limit)} chars long`);
        break;
      case 'pattern':
        out.push(`${at}: Invalid value: ${show(e.data)}: ${at} in body should match '${String(p.pattern)}'`);
        break;
      case 'maxItems':
        out.push(`${at}: Too many: ${(e.data as unknown[]).length}: must have at most ${String(p.limit)} items`);
        break;
      case 'minItems':
        out.push(`${at}: Invalid value: ${(e.data as unknown[]).length}: ${at} in body should have at least ${String(p.limit)} items`);
        break;
      case 'uniqueItems':
        out.push(`${at}[${String(p.i)}]: Duplicate value: ${show((e.data as unknown[])[p.i as number])}`);
        break;
      case 'oneOf':
        out.push(`${at}: Invalid value: ${show(e.data)}: ${at} in body must validate one and only one schema (oneOf)`);
        break;
      case 'anyOf':
        out.push(`${at}: Invalid value: ${show(e.data)}: ${at} in body must validate at least one schema (anyOf)`);
        break;
      case 'not':
        out.push(`${at}: Invalid value: ${show(e.data)}: ${at} in body must not validate the schema (not)`);
        break;
      case 'format':
        out.push(`${at}: Invalid value: ${show(e.data)}: ${at} in body must be of type ${String(p.format)}: ${show(e.data)}`);
        break;
      default:
        out.push(`${at}: ${e.message ?? e.keyword}`);
    }
  }
  return [...new Set(out)];
}

function typeName(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  if (typeof v === 'number') return Number.isInteger(v) ? 'integer' : 'number';
  return typeof v;
}
