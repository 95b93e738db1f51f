/**
 * The JSON Schema (draft-07) of a Kubernetes structural schema node, as the API server validates with it under
 * `fieldValidation=Strict`: unknown fields refused where the API server would prune them, `x-kubernetes-int-or-string`
 * and `nullable` as types, list types as uniqueness, free-form ObjectMeta at resource roots. Synth writes the claims'
 * schemas for editors with it (yaml-language-server, kubeconform), and the offline claim tests validate with it
 * (test/support/openapi.ts), so what an editor flags is what the tests prove the API server refuses. CEL rules are
 * not JSON Schema: they are left to the API server.
 */
import type { JSONSchemaProps } from './schema';

/** The formats the API server checks; a schema's other formats are left out (the API server ignores them). */
export const KUBERNETES_FORMATS = [
  'date-time',
  'datetime',
  'date',
  'byte',
  'uuid',
  'ipv4',
  'ipv6',
  'hostname',
  'email',
  'duration',
] as const;

export interface Ctx {
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
export function toJsonSchema(s: JSONSchemaProps, ctx: Ctx = { root: true, value: false }): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const x = s as JSONSchemaProps & Record<string, unknown>;
  for (const k of [
    'description',
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
  if (s.format && (KUBERNETES_FORMATS as readonly string[]).includes(s.format) && (s.type === 'string' || s.type === undefined))
    out.format = s.format;

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
    for (const [k, p] of Object.entries(s.properties ?? {})) props[k] = toJsonSchema(p, { root: false, value: ctx.value });
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
        : toJsonSchema(s.additionalProperties, { root: false, value: ctx.value });
  } else if (isObject && !ctx.value && s['x-kubernetes-preserve-unknown-fields'] !== true) {
    out.additionalProperties = false;
  }

  if (s.items && !Array.isArray(s.items)) out.items = toJsonSchema(s.items, { root: false, value: ctx.value });
  if (s['x-kubernetes-list-type'] === 'set') out.uniqueItems = true;
  if (s['x-kubernetes-list-type'] === 'map' && s['x-kubernetes-list-map-keys']?.length)
    out['x-list-map-keys'] = [...s['x-kubernetes-list-map-keys']];

  for (const k of ['anyOf', 'oneOf', 'allOf'] as const) {
    if (s[k]?.length) out[k] = s[k]!.map((b) => toJsonSchema(b, { root: false, value: true }));
  }
  if (s.not) out.not = toJsonSchema(s.not, { root: false, value: true });
  return out;
}

/** Free-form ObjectMeta, with what the schema declares about metadata (name and generateName) on top. */
function objectMeta(declared: JSONSchemaProps | undefined): Record<string, unknown> {
  const props: Record<string, unknown> = objectMetaProps();
  for (const [k, p] of Object.entries(declared?.properties ?? {})) {
    props[k] = { ...(props[k] as object), ...toJsonSchema(p, { root: false, value: false }) };
  }
  return { type: 'object', properties: props };
}
