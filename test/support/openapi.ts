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
import { claimCrd, type XrdObject } from '../../lib/xcrd';
import { KUBERNETES_FORMATS, toJsonSchema } from '../../lib/json-schema';

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
  const compiled = ajv().compile(toJsonSchema(schema, { root, value: false }));
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

// ---------------------------------------------------------------------------------------------------------------------

let shared: Ajv | undefined;

/** How each format the API server checks (KUBERNETES_FORMATS) is checked. */
const FORMATS: Record<(typeof KUBERNETES_FORMATS)[number], RegExp | ((s: string) => boolean)> = {
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
