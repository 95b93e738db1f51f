/**
 * A small typed builder for Kubernetes structural OpenAPI v3 schemas.
 *
 * Every XRD, CRD and function-input schema in klutch-kit is written with it, so that the shape rules Kubernetes
 * enforces on structural schemas (a type on every node, no unknown keywords) hold by construction, and CEL rules always
 * carry a message.
 */

/** A CEL validation rule (`x-kubernetes-validations`). */
export interface ValidationRule {
  readonly rule: string;
  readonly message: string;
  readonly messageExpression?: string;
  readonly reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  readonly fieldPath?: string;
  readonly optionalOldSelf?: boolean;
}

/** The subset of apiextensions.k8s.io/v1 JSONSchemaProps that structural schemas use. */
export interface JSONSchemaProps {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  description?: string;
  format?: string;
  properties?: Record<string, JSONSchemaProps>;
  additionalProperties?: JSONSchemaProps | boolean;
  items?: JSONSchemaProps;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  minimum?: number;
  maximum?: number;
  exclusiveMinimum?: boolean;
  exclusiveMaximum?: boolean;
  multipleOf?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  uniqueItems?: boolean;
  minProperties?: number;
  maxProperties?: number;
  nullable?: boolean;
  anyOf?: JSONSchemaProps[];
  oneOf?: JSONSchemaProps[];
  allOf?: JSONSchemaProps[];
  not?: JSONSchemaProps;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-embedded-resource'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  'x-kubernetes-validations'?: ValidationRule[];
}

interface CommonOptions {
  /** Human documentation, shown by `kubectl explain`. */
  readonly description?: string;
  /** CEL rules evaluated by the API server on this node. */
  readonly rules?: readonly ValidationRule[];
}

export interface StringOptions extends CommonOptions {
  readonly enum?: readonly string[];
  readonly pattern?: string;
  readonly format?: string;
  readonly minLength?: number;
  readonly maxLength?: number;
  readonly default?: string;
}

export interface NumberOptions extends CommonOptions {
  readonly minimum?: number;
  readonly maximum?: number;
  /** Values must be strictly greater than `minimum`. */
  readonly exclusiveMinimum?: boolean;
  readonly exclusiveMaximum?: boolean;
  readonly enum?: readonly number[];
  readonly default?: number;
  /** The width clients decode into (`int32`, `int64`, `double`), as Kubernetes' own schemas declare it. */
  readonly format?: string;
}

export interface BooleanOptions extends CommonOptions {
  readonly default?: boolean;
}

export interface ArrayOptions extends CommonOptions {
  readonly minItems?: number;
  readonly maxItems?: number;
  /** How server-side apply merges the list. @default atomic (Kubernetes' default, left implicit) */
  readonly listType?: 'atomic' | 'set' | 'map';
  readonly listMapKeys?: readonly string[];
}

export interface ObjectOptions extends CommonOptions {
  /** Names of properties that must be set. Each must be one of the object's properties. */
  readonly required?: readonly string[];
  /** Keep fields the schema does not list (for free-form documents such as status.managed). */
  readonly preserveUnknownFields?: boolean;
  readonly default?: Record<string, unknown>;
  readonly minProperties?: number;
  readonly maxProperties?: number;
  /** How server-side apply merges the object: `atomic` replaces it whole (references, selectors). @default granular */
  readonly mapType?: 'atomic' | 'granular';
  /**
   * Exactly one of these sets of properties is present (`oneOf` of `required` lists): the structural way to say
   * "set exactly one of from and value" where a CEL rule cannot see an untyped property.
   */
  readonly oneOfRequired?: readonly (readonly string[])[];
}

export interface IntOrStringOptions extends CommonOptions {
  /** Checked against the string form only (e.g. the quantity syntax). */
  readonly pattern?: string;
}

/**
 * An immutable schema node. Builders return new nodes, so one node may be shared by several parents.
 */
export class Schema {
  private constructor(private readonly props: JSONSchemaProps) {}

  /** @internal used by the builders below. */
  static of(props: JSONSchemaProps): Schema {
    return new Schema(props);
  }

  /** A copy with another description. */
  describe(description: string): Schema {
    return new Schema({ ...this.props, description });
  }

  /** A copy with one more CEL rule. */
  withRule(rule: string, message: string, extra: Omit<ValidationRule, 'rule' | 'message'> = {}): Schema {
    const rules = [...(this.props['x-kubernetes-validations'] ?? []), { rule, message, ...extra }];
    return new Schema({ ...this.props, 'x-kubernetes-validations': rules });
  }

  /** A copy that may not change once set (a transition rule). */
  immutable(message = 'Value is immutable'): Schema {
    return this.withRule('self == oldSelf', message);
  }

  /** A copy with a default value. */
  withDefault(value: unknown): Schema {
    return new Schema({ ...this.props, default: value });
  }

  get type(): JSONSchemaProps['type'] {
    return this.props.type;
  }

  /** The property schemas of an object node (empty for other nodes). */
  get properties(): Readonly<Record<string, Schema>> {
    return Object.fromEntries(Object.entries(this.props.properties ?? {}).map(([k, v]) => [k, new Schema(v)]));
  }

  /** A deep copy of the OpenAPI document this node stands for. */
  toJSON(): JSONSchemaProps {
    return structuredClone(this.props);
  }
}

function common(o: CommonOptions | undefined): JSONSchemaProps {
  const out: JSONSchemaProps = {};
  if (o?.description !== undefined) out.description = o.description;
  if (o?.rules && o.rules.length > 0) out['x-kubernetes-validations'] = o.rules.map((r) => ({ ...r }));
  return out;
}

/** Copies the defined keys of `from` (named by `keys`) into `to`. */
function pick<T extends object>(to: JSONSchemaProps, from: T | undefined, keys: readonly (keyof T & string)[]): void {
  if (!from) return;
  for (const k of keys) {
    const v = from[k];
    if (v !== undefined) (to as Record<string, unknown>)[k] = Array.isArray(v) ? [...v] : v;
  }
}

function checkRange(kind: string, o: { minimum?: number; maximum?: number } | undefined): void {
  if (o?.minimum !== undefined && o.maximum !== undefined && o.minimum > o.maximum) {
    throw new Error(`${kind} schema: minimum (${o.minimum}) is greater than maximum (${o.maximum}); swap them`);
  }
}

function checkPattern(kind: string, pattern: string | undefined): void {
  if (pattern === undefined) return;
  try {
    new RegExp(pattern, 'u');
  } catch (e) {
    throw new Error(`${kind} schema: pattern ${JSON.stringify(pattern)} is not a valid regular expression: ${(e as Error).message}`, {
      cause: e,
    });
  }
}

function checkDefault(kind: string, def: unknown, allowed: readonly unknown[] | undefined): void {
  if (def !== undefined && allowed && !allowed.includes(def)) {
    throw new Error(`${kind} schema: default ${JSON.stringify(def)} is not one of its enum values ${JSON.stringify(allowed)}`);
  }
}

/** Builders for schema nodes, named after the OpenAPI types they produce. */
export const s = {
  string(o?: StringOptions): Schema {
    checkPattern('string', o?.pattern);
    checkDefault('string', o?.default, o?.enum);
    const p: JSONSchemaProps = { ...common(o), type: 'string' };
    pick(p, o, ['enum', 'pattern', 'format', 'minLength', 'maxLength', 'default']);
    return Schema.of(p);
  },

  integer(o?: NumberOptions): Schema {
    checkRange('integer', o);
    checkDefault('integer', o?.default, o?.enum);
    const p: JSONSchemaProps = { ...common(o), type: 'integer' };
    pick(p, o, ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'enum', 'default', 'format']);
    return Schema.of(p);
  },

  number(o?: NumberOptions): Schema {
    checkRange('number', o);
    checkDefault('number', o?.default, o?.enum);
    const p: JSONSchemaProps = { ...common(o), type: 'number' };
    pick(p, o, ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'enum', 'default', 'format']);
    return Schema.of(p);
  },

  boolean(o?: BooleanOptions): Schema {
    const p: JSONSchemaProps = { ...common(o), type: 'boolean' };
    pick(p, o, ['default']);
    return Schema.of(p);
  },

  array(items: Schema, o?: ArrayOptions): Schema {
    const p: JSONSchemaProps = { ...common(o), type: 'array', items: items.toJSON() };
    pick(p, o, ['minItems', 'maxItems']);
    if (o?.listType) p['x-kubernetes-list-type'] = o.listType;
    if (o?.listMapKeys) p['x-kubernetes-list-map-keys'] = [...o.listMapKeys];
    if (o?.listType === 'map' && !o.listMapKeys?.length) {
      throw new Error('array schema: listType "map" needs listMapKeys naming the key fields of its items');
    }
    return Schema.of(p);
  },

  object(properties: Record<string, Schema>, o?: ObjectOptions): Schema {
    for (const r of o?.required ?? []) {
      if (!(r in properties)) {
        throw new Error(`object schema: required property "${r}" is not among its properties [${Object.keys(properties).join(', ')}]`);
      }
    }
    const p: JSONSchemaProps = { ...common(o), type: 'object' };
    if (Object.keys(properties).length > 0) {
      p.properties = Object.fromEntries(Object.entries(properties).map(([k, v]) => [k, v.toJSON()]));
    }
    if (o?.required && o.required.length > 0) p.required = [...o.required];
    for (const set of o?.oneOfRequired ?? []) {
      for (const r of set) {
        if (!(r in properties))
          throw new Error(
            `object schema: oneOfRequired property "${r}" is not among its properties [${Object.keys(properties).join(', ')}]`,
          );
      }
    }
    if (o?.oneOfRequired?.length) p.oneOf = o.oneOfRequired.map((set) => ({ required: [...set] }));
    if (o?.preserveUnknownFields) p['x-kubernetes-preserve-unknown-fields'] = true;
    if (o?.mapType) p['x-kubernetes-map-type'] = o.mapType;
    pick(p, o, ['default', 'minProperties', 'maxProperties']);
    return Schema.of(p);
  },

  /** An object whose keys are free and whose values all follow `values`. */
  map(values: Schema, o?: CommonOptions): Schema {
    return Schema.of({ ...common(o), type: 'object', additionalProperties: values.toJSON() });
  },

  /** A value that is an integer or a string (ports, quantities); `anyOf` spells out both types, as controller-gen does. */
  intOrString(o?: IntOrStringOptions): Schema {
    checkPattern('int-or-string', o?.pattern);
    const p: JSONSchemaProps = { ...common(o), anyOf: [{ type: 'integer' }, { type: 'string' }], 'x-kubernetes-int-or-string': true };
    pick(p, o, ['pattern']);
    return Schema.of(p);
  },

  /** A free-form object whose content the API server keeps as it is. */
  freeform(o?: CommonOptions): Schema {
    return Schema.of({ ...common(o), type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
  },

  /** Wraps a literal schema document (used for upstream schemas copied verbatim). */
  raw(props: JSONSchemaProps): Schema {
    return Schema.of(structuredClone(props));
  },
};
