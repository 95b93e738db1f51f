/**
 * Crossplane's XRD → CRD conversion, ported field for field from `internal/xcrd` (crd.go, schemas.go) of
 * github.com/crossplane/crossplane v1.20.11, the version this project pins.
 *
 * `compositeCrd(xrd)` is `ForCompositeResource`, `claimCrd(xrd)` is `ForCompositeResourceClaim`; both take the XRD as a
 * plain object (as parsed from YAML) and return the plain apiextensions.k8s.io/v1 CRD object Crossplane would apply,
 * serialized the way Go serializes it: the XRD schema goes through a JSONSchemaProps round trip (unknown keywords
 * dropped, empty `omitempty` fields dropped), so the CRD is what the API server receives.
 *
 * Differences from Crossplane, on purpose:
 * - `metadata.ownerReferences` (the XRD as controller) is omitted: the XRD is not a stored object here, it has no UID.
 * - By default the XRD is first defaulted the way the API server defaults a stored XRD (the XRD CRD's
 *   `defaultCompositeDeletePolicy: Background` and `defaultCompositionUpdatePolicy: Automatic`), because Crossplane only
 *   ever converts stored XRDs. Pass `{ xrdDefaults: false }` to convert the object exactly as given (as crd_test.go does).
 * - Go's encoding/json matches JSON keys case-insensitively; this port matches them exactly.
 */
import type { JSONSchemaProps, ValidationRule } from './schema';

export type { JSONSchemaProps } from './schema';

const CATEGORY_CLAIM = 'claim';
const CATEGORY_COMPOSITE = 'composite';

/** The composite name is used as a label value, so it may not be longer; the same holds for claim names. */
const MAX_COMPOSITE_NAME_LENGTH = 63;
const MAX_CLAIM_NAME_LENGTH = 63;

const errFmtGenCrd = (what: string, name: string) => `cannot generate CRD for ${q(what)} ${q(name)}`;
const errParseValidation = 'cannot parse validation schema';
const errInvalidClaimNames = 'invalid resource claim names';
const errMissingClaimNames = 'missing names';
const errFmtConflictingClaimName = (n: string) => `${q(n)} conflicts with composite resource name`;
const errCustomResourceValidationNil = 'custom resource validation cannot be nil';

/** Go's %q for the strings we quote. */
function q(s: string): string {
  return JSON.stringify(s);
}

// ---------------------------------------------------------------------------------------------------------------------
// Types (plain objects, the JSON shape of the Go types)

export interface CrdSpecNames {
  plural: string;
  singular?: string;
  shortNames?: string[];
  kind: string;
  listKind?: string;
  categories?: string[];
}

export interface CrdColumn {
  name: string;
  type: string;
  format?: string;
  description?: string;
  priority?: number;
  jsonPath: string;
}

export interface XrdVersion {
  name: string;
  served: boolean;
  referenceable: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema?: { openAPIV3Schema?: unknown };
  additionalPrinterColumns?: CrdColumn[];
}

/** apiextensions.crossplane.io/v1 CompositeResourceDefinition, as far as the conversion reads it. */
export interface XrdObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string>; [k: string]: unknown };
  spec: {
    group: string;
    names: CrdSpecNames;
    claimNames?: CrdSpecNames;
    versions: XrdVersion[];
    conversion?: Record<string, unknown>;
    metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
    defaultCompositeDeletePolicy?: 'Background' | 'Foreground';
    defaultCompositionUpdatePolicy?: 'Automatic' | 'Manual';
    [k: string]: unknown;
  };
}

export interface CrdVersionObject {
  name: string;
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  schema: { openAPIV3Schema: JSONSchemaProps };
  subresources: { status: Record<string, never> };
  additionalPrinterColumns?: CrdColumn[];
}

/** apiextensions.k8s.io/v1 CustomResourceDefinition. */
export interface Crd {
  apiVersion: 'apiextensions.k8s.io/v1';
  kind: 'CustomResourceDefinition';
  metadata: { name: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec: {
    group: string;
    names: CrdSpecNames;
    scope: 'Cluster' | 'Namespaced';
    versions: CrdVersionObject[];
    conversion?: Record<string, unknown>;
  };
}

export interface ConvertOptions {
  /**
   * Default the XRD the way the API server does when it stores one (defaultCompositeDeletePolicy: Background,
   * defaultCompositionUpdatePolicy: Automatic) before converting it.
   * @default true
   */
  readonly xrdDefaults?: boolean;
}

// ---------------------------------------------------------------------------------------------------------------------
// schemas.go

/** The partial OpenAPIV3Schema every CRD Crossplane creates starts from. */
function baseProps(): JSONSchemaProps {
  return {
    type: 'object',
    required: ['spec'],
    properties: {
      apiVersion: { type: 'string' },
      kind: { type: 'string' },
      // api-server takes care of validating metadata.
      metadata: { type: 'object' },
      spec: { type: 'object', properties: {} },
      status: { type: 'object', properties: {} },
    },
  };
}

const stringMap = (): JSONSchemaProps => ({ type: 'object', additionalProperties: { type: 'string' } });
const nameRef = (): JSONSchemaProps => ({ type: 'object', required: ['name'], properties: { name: { type: 'string' } } });
const labelSelector = (): JSONSchemaProps => ({ type: 'object', required: ['matchLabels'], properties: { matchLabels: stringMap() } });

function publishConnectionDetailsTo(): JSONSchemaProps {
  return {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string' },
      configRef: { type: 'object', default: { name: 'default' }, properties: { name: { type: 'string' } } },
      metadata: { type: 'object', properties: { labels: stringMap(), annotations: stringMap(), type: { type: 'string' } } },
    },
  };
}

/** The spec fields Crossplane adds to every composite resource. */
export function compositeResourceSpecProps(): Record<string, JSONSchemaProps> {
  return {
    compositionRef: nameRef(),
    compositionSelector: labelSelector(),
    compositionRevisionRef: nameRef(),
    compositionRevisionSelector: labelSelector(),
    compositionUpdatePolicy: { type: 'string', enum: ['Automatic', 'Manual'] },
    claimRef: {
      type: 'object',
      required: ['apiVersion', 'kind', 'namespace', 'name'],
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, namespace: { type: 'string' }, name: { type: 'string' } },
    },
    resourceRefs: {
      type: 'array',
      items: {
        type: 'object',
        properties: { apiVersion: { type: 'string' }, name: { type: 'string' }, kind: { type: 'string' } },
        required: ['apiVersion', 'kind'],
      },
      // Controllers should replace the entire resourceRefs array.
      'x-kubernetes-list-type': 'atomic',
    },
    publishConnectionDetailsTo: publishConnectionDetailsTo(),
    writeConnectionSecretToRef: {
      type: 'object',
      required: ['name', 'namespace'],
      properties: { name: { type: 'string' }, namespace: { type: 'string' } },
    },
  };
}

/** The spec fields Crossplane adds to every composite resource claim. */
export function compositeResourceClaimSpecProps(): Record<string, JSONSchemaProps> {
  return {
    compositionRef: nameRef(),
    compositionSelector: labelSelector(),
    compositionRevisionRef: nameRef(),
    compositionRevisionSelector: labelSelector(),
    compositionUpdatePolicy: { type: 'string', enum: ['Automatic', 'Manual'] },
    compositeDeletePolicy: { type: 'string', enum: ['Background', 'Foreground'] },
    resourceRef: {
      type: 'object',
      required: ['apiVersion', 'kind', 'name'],
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } },
    },
    publishConnectionDetailsTo: publishConnectionDetailsTo(),
    writeConnectionSecretToRef: nameRef(),
  };
}

/** The status fields Crossplane adds to composites and claims. */
export function compositeResourceStatusProps(): Record<string, JSONSchemaProps> {
  return {
    conditions: {
      description: 'Conditions of the resource.',
      type: 'array',
      'x-kubernetes-list-map-keys': ['type'],
      'x-kubernetes-list-type': 'map',
      items: {
        type: 'object',
        required: ['lastTransitionTime', 'reason', 'status', 'type'],
        properties: {
          lastTransitionTime: { type: 'string', format: 'date-time' },
          message: { type: 'string' },
          reason: { type: 'string' },
          status: { type: 'string' },
          type: { type: 'string' },
        },
      },
    },
    connectionDetails: { type: 'object', properties: { lastPublishedTime: { type: 'string', format: 'date-time' } } },
    claimConditionTypes: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
  };
}

function compositeResourcePrinterColumns(): CrdColumn[] {
  return [
    { name: 'SYNCED', type: 'string', jsonPath: ".status.conditions[?(@.type=='Synced')].status" },
    { name: 'READY', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'COMPOSITION', type: 'string', jsonPath: '.spec.compositionRef.name' },
    { name: 'COMPOSITIONREVISION', type: 'string', jsonPath: '.spec.compositionRevisionRef.name', priority: 1 },
    { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
}

function compositeResourceClaimPrinterColumns(): CrdColumn[] {
  return [
    { name: 'SYNCED', type: 'string', jsonPath: ".status.conditions[?(@.type=='Synced')].status" },
    { name: 'READY', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
    { name: 'CONNECTION-SECRET', type: 'string', jsonPath: '.spec.writeConnectionSecretToRef.name' },
    { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ];
}

// ---------------------------------------------------------------------------------------------------------------------
// crd.go

/** ForCompositeResource: the CRD of the XRD's composite resource. */
export function compositeCrd(xrdIn: XrdObject | Record<string, unknown>, opts: ConvertOptions = {}): Crd {
  const xrd = prepare(xrdIn, opts);
  const names = crdNames(xrd.spec.names);
  const crd = newCrd(xrd.metadata.name, xrd, 'Cluster', names);
  crd.spec.names.categories = [...(crd.spec.names.categories ?? []), CATEGORY_COMPOSITE];

  crd.spec.versions = xrd.spec.versions.map((vr) => {
    const crdv = genCrdVersion(vr, MAX_COMPOSITE_NAME_LENGTH, 'Composite Resource', xrd.metadata.name);
    crdv.additionalPrinterColumns = [...(crdv.additionalPrinterColumns ?? []), ...compositeResourcePrinterColumns()];
    const props = compositeResourceSpecProps();
    if (xrd.spec.defaultCompositionUpdatePolicy !== undefined) {
      props.compositionUpdatePolicy = { ...props.compositionUpdatePolicy, default: xrd.spec.defaultCompositionUpdatePolicy };
    }
    Object.assign(specOf(crdv).properties!, props);
    return crdv;
  });
  return crd;
}

/**
 * ForCompositeResource of Crossplane v2 for a modern XRD (`apiextensions.crossplane.io/v2`, `spec.scope` Namespaced or
 * Cluster), from crossplane-runtime v2.4.0's pkg/xcrd: Crossplane's machinery under `spec.crossplane` (no claimRef, no
 * connection Secret; a Namespaced composite's resourceRefs name no namespace), and only `conditions` in the status
 * (with `observedGeneration`). A LegacyCluster XRD is converted as v1 converts it (compositeCrd).
 */
export function modernCompositeCrd(xrdIn: XrdObject | Record<string, unknown>): Crd {
  const xrd = prepare(xrdIn, { xrdDefaults: false });
  const scope = (xrd.spec.scope as string | undefined) ?? 'LegacyCluster';
  if (scope === 'LegacyCluster') return compositeCrd(xrd);
  const crd = newCrd(xrd.metadata.name, xrd, scope === 'Namespaced' ? 'Namespaced' : 'Cluster', crdNames(xrd.spec.names));
  crd.spec.names.categories = [...(crd.spec.names.categories ?? []), CATEGORY_COMPOSITE];
  crd.spec.versions = xrd.spec.versions.map((vr) => {
    const crdv = genCrdVersion(vr, MAX_COMPOSITE_NAME_LENGTH, 'Composite Resource', xrd.metadata.name);
    const legacy = compositeResourceSpecProps();
    const ref = (legacy.resourceRefs!.items as JSONSchemaProps).properties!;
    const props: Record<string, JSONSchemaProps> = {
      compositionRef: legacy.compositionRef!,
      compositionSelector: legacy.compositionSelector!,
      compositionRevisionRef: legacy.compositionRevisionRef!,
      compositionRevisionSelector: legacy.compositionRevisionSelector!,
      compositionUpdatePolicy: {
        ...legacy.compositionUpdatePolicy!,
        ...(xrd.spec.defaultCompositionUpdatePolicy !== undefined ? { default: xrd.spec.defaultCompositionUpdatePolicy } : {}),
      },
      resourceRefs: {
        ...legacy.resourceRefs!,
        items: {
          ...legacy.resourceRefs!.items!,
          properties: { ...ref, ...(scope === 'Cluster' ? { namespace: { type: 'string' } } : {}) },
        },
      },
    };
    specOf(crdv).properties!.crossplane = {
      type: 'object',
      description: 'Configures how Crossplane will reconcile this composite resource',
      properties: props,
    };
    const conditions = structuredClone(compositeResourceStatusProps().conditions!);
    (conditions.items as JSONSchemaProps).properties!.observedGeneration = { type: 'integer', format: 'int64' };
    crdv.schema.openAPIV3Schema.properties!.status!.properties = {
      ...crdv.schema.openAPIV3Schema.properties!.status!.properties,
      conditions,
    };
    return crdv;
  });
  return crd;
}

/** ForCompositeResourceClaim: the CRD of the XRD's claim; fails when the XRD has no claim names or they conflict. */
export function claimCrd(xrdIn: XrdObject | Record<string, unknown>, opts: ConvertOptions = {}): Crd {
  const xrd = prepare(xrdIn, opts);
  const err = validateClaimNames(xrd);
  if (err) throw new Error(`${errInvalidClaimNames}: ${err}`);
  const claimNames = xrd.spec.claimNames!;
  const crd = newCrd(`${claimNames.plural}.${xrd.spec.group}`, xrd, 'Namespaced', crdNames(claimNames));
  crd.spec.names.categories = [...(crd.spec.names.categories ?? []), CATEGORY_CLAIM];

  crd.spec.versions = xrd.spec.versions.map((vr) => {
    const crdv = genCrdVersion(vr, MAX_CLAIM_NAME_LENGTH, 'Composite Resource Claim', xrd.metadata.name);
    crdv.additionalPrinterColumns = [...(crdv.additionalPrinterColumns ?? []), ...compositeResourceClaimPrinterColumns()];
    const props = compositeResourceClaimSpecProps();
    if (xrd.spec.defaultCompositeDeletePolicy !== undefined) {
      props.compositeDeletePolicy = { ...props.compositeDeletePolicy, default: xrd.spec.defaultCompositeDeletePolicy };
    }
    Object.assign(specOf(crdv).properties!, props);
    return crdv;
  });
  return crd;
}

/** The composite CRD and, when the XRD offers a claim, the claim CRD. */
export function crdsForXrd(xrd: XrdObject | Record<string, unknown>, opts: ConvertOptions = {}): Crd[] {
  const x = xrd as XrdObject;
  return x.spec?.claimNames ? [compositeCrd(xrd, opts), claimCrd(xrd, opts)] : [compositeCrd(xrd, opts)];
}

/** validateClaimNames: the reason the claim names are missing or conflict with the composite's, or undefined. */
export function validateClaimNames(xrd: XrdObject): string | undefined {
  const c = xrd.spec.claimNames;
  const n = xrd.spec.names;
  if (!c) return errMissingClaimNames;
  if (c.kind === n.kind) return errFmtConflictingClaimName(c.kind);
  if (c.plural === n.plural) return errFmtConflictingClaimName(c.plural);
  if (c.singular && c.singular === n.singular) return errFmtConflictingClaimName(c.singular);
  if (c.listKind && c.listKind === n.listKind) return errFmtConflictingClaimName(c.listKind);
  return undefined;
}

/** IsEstablished: whether the API server serves a CRD with this status. */
export function isEstablished(status: { conditions?: readonly { type: string; status: string }[] } | undefined): boolean {
  for (const c of status?.conditions ?? []) if (c.type === 'Established') return c.status === 'True';
  return false;
}

function prepare(xrdIn: XrdObject | Record<string, unknown>, opts: ConvertOptions): XrdObject {
  const xrd = structuredClone(xrdIn) as XrdObject;
  if (!xrd || typeof xrd !== 'object' || !xrd.spec || typeof xrd.spec !== 'object')
    throw new Error('not a CompositeResourceDefinition: no spec');
  if (!xrd.metadata?.name) throw new Error('not a CompositeResourceDefinition: no metadata.name');
  if (opts.xrdDefaults ?? true) {
    xrd.spec.defaultCompositeDeletePolicy ??= 'Background';
    xrd.spec.defaultCompositionUpdatePolicy ??= 'Automatic';
  }
  return xrd;
}

function newCrd(name: string, xrd: XrdObject, scope: 'Cluster' | 'Namespaced', names: CrdSpecNames): Crd {
  const crd: Crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name },
    spec: { group: xrd.spec.group, names, scope, versions: [] },
  };
  if (xrd.spec.conversion !== undefined) crd.spec.conversion = xrd.spec.conversion;
  setCrdMetadata(crd, xrd);
  return crd;
}

/** setCrdMetadata: the XRD's labels plus spec.metadata.labels; annotations only from spec.metadata. */
export function setCrdMetadata(crd: Crd, xrd: XrdObject): Crd {
  let labels = xrd.metadata.labels ? { ...xrd.metadata.labels } : undefined;
  const m = xrd.spec.metadata;
  if (m?.labels) labels = { ...(labels ?? {}), ...m.labels };
  if (labels && Object.keys(labels).length > 0) crd.metadata.labels = labels;
  if (m?.annotations && Object.keys(m.annotations).length > 0) crd.metadata.annotations = { ...m.annotations };
  return crd;
}

function crdNames(n: CrdSpecNames): CrdSpecNames {
  const out: CrdSpecNames = { plural: n.plural, kind: n.kind };
  if (n.singular) out.singular = n.singular;
  if (n.shortNames?.length) out.shortNames = [...n.shortNames];
  if (n.listKind) out.listKind = n.listKind;
  if (n.categories?.length) out.categories = [...n.categories];
  return out;
}

function printerColumn(c: CrdColumn): CrdColumn {
  const out: CrdColumn = { name: c.name, type: c.type, jsonPath: c.jsonPath };
  if (c.format) out.format = c.format;
  if (c.description) out.description = c.description;
  if (c.priority) out.priority = c.priority;
  return out;
}

function specOf(v: CrdVersionObject): JSONSchemaProps {
  return v.schema.openAPIV3Schema.properties!.spec!;
}

function genCrdVersion(vr: XrdVersion, maxNameLength: number, what: string, xrdName: string): CrdVersionObject {
  const fail = (msg: string): never => {
    throw new Error(`${errFmtGenCrd(what, xrdName)}: ${msg}`);
  };
  const crdv: CrdVersionObject = {
    name: vr.name,
    served: Boolean(vr.served),
    storage: Boolean(vr.referenceable),
    schema: { openAPIV3Schema: baseProps() },
    subresources: { status: {} },
  };
  if (vr.deprecated) crdv.deprecated = true;
  if (vr.deprecationWarning !== undefined && vr.deprecationWarning !== null) crdv.deprecationWarning = vr.deprecationWarning;
  if (vr.additionalPrinterColumns?.length) crdv.additionalPrinterColumns = vr.additionalPrinterColumns.map(printerColumn);

  const raw = vr.schema?.openAPIV3Schema;
  if (vr.schema === undefined || vr.schema === null) fail(errCustomResourceValidationNil);
  let s: JSONSchemaProps;
  try {
    s = toJSONSchemaProps(raw ?? {});
  } catch (e) {
    return fail(`${errParseValidation}: ${errParseValidation}: ${(e as Error).message}`);
  }

  const root = crdv.schema.openAPIV3Schema;
  const props = root.properties!;
  if (s.description) root.description = s.description;

  let maxLength = maxNameLength;
  const old = s.properties?.metadata?.properties?.name?.maxLength;
  if (old !== undefined && old < maxLength) maxLength = old;
  props.metadata = { ...props.metadata, properties: { name: { type: 'string', maxLength } } };

  const xSpec = s.properties?.spec ?? {};
  const cSpec = props.spec!;
  if (xSpec.required?.length) cSpec.required = [...(cSpec.required ?? []), ...xSpec.required];
  if (xSpec['x-kubernetes-preserve-unknown-fields'] !== undefined)
    cSpec['x-kubernetes-preserve-unknown-fields'] = xSpec['x-kubernetes-preserve-unknown-fields'];
  if (xSpec['x-kubernetes-validations']?.length)
    cSpec['x-kubernetes-validations'] = [...(cSpec['x-kubernetes-validations'] ?? []), ...xSpec['x-kubernetes-validations']];
  if (xSpec.oneOf?.length) cSpec.oneOf = [...(cSpec.oneOf ?? []), ...xSpec.oneOf];
  if (xSpec.description) cSpec.description = xSpec.description;
  Object.assign(cSpec.properties!, xSpec.properties ?? {});

  const xStatus = s.properties?.status ?? {};
  const cStatus = props.status!;
  if (xStatus.required?.length) cStatus.required = xStatus.required;
  if (xStatus['x-kubernetes-validations']?.length) cStatus['x-kubernetes-validations'] = xStatus['x-kubernetes-validations'];
  if (xStatus.description) cStatus.description = xStatus.description;
  if (xStatus.oneOf?.length) cStatus.oneOf = xStatus.oneOf;
  Object.assign(cStatus.properties!, xStatus.properties ?? {}, compositeResourceStatusProps());
  return crdv;
}

// ---------------------------------------------------------------------------------------------------------------------
// The JSON round trip through Go's extv1.JSONSchemaProps (json.Unmarshal, then json.Marshal).

type Conv = (v: unknown, at: string) => unknown | undefined;

const str: Conv = (v, at) => {
  if (typeof v !== 'string') throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into a string`);
  return v === '' ? undefined : v;
};
const bool: Conv = (v, at) => {
  if (typeof v !== 'boolean') throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into a bool`);
  return v ? true : undefined;
};
/** *bool: false survives. */
const boolPtr: Conv = (v, at) => {
  if (typeof v !== 'boolean') throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into a bool`);
  return v;
};
const num: Conv = (v, at) => {
  if (typeof v !== 'number') throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into a number`);
  return v;
};
const int: Conv = (v, at) => {
  if (typeof v !== 'number' || !Number.isInteger(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into an int64`);
  return v;
};
/** extv1.JSON: any value; a JSON null leaves the pointer nil. */
const json: Conv = (v) => (v === null ? undefined : structuredClone(v));
const strings: Conv = (v, at) => {
  if (!Array.isArray(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into []string`);
  return v.length === 0 ? undefined : v.map((x, i) => str(x, `${at}[${i}]`) ?? '');
};
const jsons: Conv = (v, at) => {
  if (!Array.isArray(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into []JSON`);
  return v.length === 0 ? undefined : v.map((x) => structuredClone(x));
};
const schema: Conv = (v, at) => convertSchema(v, at);
const schemas: Conv = (v, at) => {
  if (!Array.isArray(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into []JSONSchemaProps`);
  return v.length === 0 ? undefined : v.map((x, i) => convertSchema(x, `${at}[${i}]`));
};
const schemaMap: Conv = (v, at) => {
  if (!isObject(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into map[string]JSONSchemaProps`);
  const entries = Object.entries(v);
  return entries.length === 0 ? undefined : Object.fromEntries(entries.map(([k, x]) => [k, convertSchema(x, `${at}.${k}`)]));
};
/** JSONSchemaPropsOrBool: true/false, or a schema (which means allowed). */
const schemaOrBool: Conv = (v, at) => (typeof v === 'boolean' ? v : convertSchema(v, at));
/** JSONSchemaPropsOrArray: a schema or a list of schemas. */
const schemaOrArray: Conv = (v, at) => (Array.isArray(v) ? v.map((x, i) => convertSchema(x, `${at}[${i}]`)) : convertSchema(v, at));
/** JSONSchemaDependencies: map of schema or string list. */
const dependencies: Conv = (v, at) => {
  if (!isObject(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into JSONSchemaDependencies`);
  const entries = Object.entries(v);
  return entries.length === 0
    ? undefined
    : Object.fromEntries(
        entries.map(([k, x]) => [k, Array.isArray(x) ? (strings(x, `${at}.${k}`) ?? []) : convertSchema(x, `${at}.${k}`)]),
      );
};
const externalDocs: Conv = (v, at) => {
  if (!isObject(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into ExternalDocumentation`);
  return fields(v, at, { description: str, url: str }) ?? {};
};
const validationRules: Conv = (v, at) => {
  if (!Array.isArray(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into ValidationRules`);
  if (v.length === 0) return undefined;
  return v.map((r, i): ValidationRule => {
    if (!isObject(r)) throw new Error(`${at}[${i}]: cannot unmarshal ${jsonType(r)} into ValidationRule`);
    const out =
      fields(r, `${at}[${i}]`, {
        rule: str,
        message: str,
        messageExpression: str,
        reason: str,
        fieldPath: str,
        optionalOldSelf: boolPtr,
      }) ?? {};
    // rule has no omitempty.
    return { rule: '', ...out } as unknown as ValidationRule;
  });
};

/** The JSON fields of extv1.JSONSchemaProps, in declaration order, with their round-trip conversion. */
const SCHEMA_FIELDS: Record<string, Conv> = {
  id: str,
  $schema: str,
  $ref: str,
  description: str,
  type: str,
  format: str,
  title: str,
  default: json,
  maximum: num,
  exclusiveMaximum: bool,
  minimum: num,
  exclusiveMinimum: bool,
  maxLength: int,
  minLength: int,
  pattern: str,
  maxItems: int,
  minItems: int,
  uniqueItems: bool,
  multipleOf: num,
  enum: jsons,
  maxProperties: int,
  minProperties: int,
  required: strings,
  items: schemaOrArray,
  allOf: schemas,
  oneOf: schemas,
  anyOf: schemas,
  not: schema,
  properties: schemaMap,
  additionalProperties: schemaOrBool,
  patternProperties: schemaMap,
  dependencies,
  additionalItems: schemaOrBool,
  definitions: schemaMap,
  externalDocs,
  example: json,
  nullable: bool,
  'x-kubernetes-preserve-unknown-fields': boolPtr,
  'x-kubernetes-embedded-resource': bool,
  'x-kubernetes-int-or-string': bool,
  'x-kubernetes-list-map-keys': strings,
  'x-kubernetes-list-type': str,
  'x-kubernetes-map-type': str,
  'x-kubernetes-validations': validationRules,
};

function fields(v: Record<string, unknown>, at: string, spec: Record<string, Conv>): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  for (const [k, conv] of Object.entries(spec)) {
    if (!(k in v) || v[k] === null) continue; // JSON null leaves a Go field at its zero value
    const x = conv(v[k], `${at}.${k}`);
    if (x !== undefined) out[k] = x;
  }
  return out;
}

function convertSchema(v: unknown, at: string): JSONSchemaProps {
  if (!isObject(v)) throw new Error(`${at}: cannot unmarshal ${jsonType(v)} into Go value of type v1.JSONSchemaProps`);
  return (fields(v, at, SCHEMA_FIELDS) ?? {}) as JSONSchemaProps;
}

/**
 * A schema as Crossplane reads it from an XRD: unmarshalled into extv1.JSONSchemaProps and marshalled again (unknown
 * keywords and empty omitempty fields dropped). Throws on values Go cannot unmarshal.
 */
export function toJSONSchemaProps(raw: unknown): JSONSchemaProps {
  return convertSchema(raw, 'openAPIV3Schema');
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function jsonType(v: unknown): string {
  if (v === null) return 'null';
  if (Array.isArray(v)) return 'array';
  return typeof v;
}
