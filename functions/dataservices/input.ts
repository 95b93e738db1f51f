/**
 * The input of the dataservices composition function: the contract between the Compositions that `npm run synth`
 * writes (compositions/) and the function that reads them (functions/dataservices/).
 *
 * Everything the function needs to compose one data service travels here, so that a new data service is data and
 * never a new function build. Crossplane does not validate a step's input, so the function validates it against
 * `inputSchema` (shipped as a CRD in the Function package) before use.
 *
 * Field paths use Crossplane's fieldpath syntax: `spec.parameters.maxConnections`,
 * `metadata.labels[crossplane.io/claim-name]`, `spec.items[0].name`.
 */
import { s, type Schema } from '../../apis/schema';

export const INPUT_GROUP = 'dataservices.fn.klutch.anynines.com';
export const INPUT_VERSION = 'v1beta1';
export const INPUT_API_VERSION = `${INPUT_GROUP}/${INPUT_VERSION}` as const;
export const INPUT_KIND = 'Input' as const;

/** The backends a data service can be composed on. */
export const BACKENDS = ['a9s', 'a8s'] as const;
export type Backend = (typeof BACKENDS)[number];

/** A step applied to a value on its way from the composite to the composed resource. */
export type Transform =
  /** `a9s-postgresql13` with prefix `a9s-postgresql` → `13`. */
  | { readonly type: 'trimPrefix'; readonly prefix: string }
  /** A decimal string → an integer (`'13'` → `13`). */
  | { readonly type: 'toInteger' }
  /** `DEBUG1` → `debug1` (a8s expects lower-case PostgreSQL log levels). */
  | { readonly type: 'lowercase' }
  /** `%s` in `format` is replaced by the value (`%s-service-broker`). */
  | { readonly type: 'format'; readonly format: string }
  /** A lookup; a value missing from the map is an error. */
  | { readonly type: 'map'; readonly map: Readonly<Record<string, unknown>> };

export const TRANSFORM_TYPES = ['trimPrefix', 'toInteger', 'lowercase', 'format', 'map'] as const;

/** Sets one field of the composed resource, from a composite field or a constant. */
export interface FieldMapping {
  /** Path in the composed resource (for a8s: in the wrapped a8s object, not the Object). */
  readonly to: string;
  /** Path in the composite resource. Exactly one of `from` and `value` is set. */
  readonly from?: string;
  /** A constant. */
  readonly value?: unknown;
  /** Applied in order to the value read from `from`. */
  readonly transforms?: readonly Transform[];
  /** Used when `from` is not set on the composite; without a default, a missing `from` skips the field. */
  readonly default?: unknown;
  /** A composite without `from` set is an error (Fatal result) rather than a skipped field. */
  readonly required?: boolean;
}

/** Moves one claim parameter to the key the backend expects. */
export interface ParameterMapping {
  /** Path below the composite's `spec.parameters` (`maxConnections`, `setClusterParameter.changeStreamOptions`). */
  readonly from: string;
  /** Path below `Input.parametersTo` in the composed resource (`max_connections`, `tempFileLimitKiloBytes`). */
  readonly to: string;
  readonly transforms?: readonly Transform[];
}

/** Copies one observed field of the composed resource back to the composite. */
export interface StatusMapping {
  /** Path in the observed composed resource (for a8s: in the Object, e.g. `status.atProvider.manifest.status`). */
  readonly from: string;
  /** Path in the composite, below `status` (`status.managed.state`). */
  readonly to: string;
}

/** The composed resource's ProviderConfig: a fixed name, or one formatted from a composite field. */
export interface ProviderConfigSelector {
  readonly name?: string;
  readonly fromFieldPath?: string;
  /** With `fromFieldPath`: `%s` is replaced by the field's value (`%s-service-broker`). */
  readonly format?: string;
}

/** Per-plan field values, for backends whose resources are sized by the composition (a8s). */
export interface PlanTable {
  /** Path in the composite that holds the plan name. */
  readonly fromFieldPath: string;
  /** plan name → (path in the composed resource → value). A plan missing here is an error. */
  readonly plans: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

export interface Input {
  readonly apiVersion: typeof INPUT_API_VERSION;
  readonly kind: typeof INPUT_KIND;
  /** Which backend composes the resource: `a9s` (provider-anynines MR) or `a8s` (provider-kubernetes Object). */
  readonly backend: Backend;
  /** The data service, for messages and labels (`postgresql`). */
  readonly service: string;
  /** apiVersion and kind of the composed resource: the MR (a9s) or the a8s object the Object wraps (a8s). */
  readonly resource: { readonly apiVersion: string; readonly kind: string };
  readonly providerConfig: ProviderConfigSelector;
  /** Fields set on the composed resource. */
  readonly fields: readonly FieldMapping[];
  /** Where parameters go in the composed resource (`spec.forProvider.parameters`, `spec`). */
  readonly parametersTo?: string;
  readonly parameters?: readonly ParameterMapping[];
  /** Parameters the XRD accepts that this backend does not offer: reported as a warning, never silently dropped. */
  readonly ignoredParameters?: readonly string[];
  readonly planTable?: PlanTable;
  /** Labels set on the composed resource from composite fields (`klutch.io/instance-type`). */
  readonly labels?: readonly { readonly key: string; readonly from: string; readonly transforms?: readonly Transform[] }[];
  /** Write the composed resource's connection details to `<claim-name><suffix>` in the claim's namespace. */
  readonly connectionSecret?: { readonly nameSuffix: string };
  readonly status?: readonly StatusMapping[];
}

const transform: Schema = s.object(
  {
    type: s.string({ enum: TRANSFORM_TYPES }),
    prefix: s.string(),
    format: s.string(),
    map: s.freeform(),
  },
  {
    required: ['type'],
    rules: [
      { rule: "self.type != 'trimPrefix' || has(self.prefix)", message: 'a trimPrefix transform needs prefix' },
      { rule: "self.type != 'format' || has(self.format)", message: 'a format transform needs format' },
      { rule: "self.type != 'map' || has(self.map)", message: 'a map transform needs map' },
    ],
  },
);
const transforms = s.array(transform);
const fieldPath = s.string({ minLength: 1 });
const anyValue = s.raw({ 'x-kubernetes-preserve-unknown-fields': true });

/** The OpenAPI schema of `Input`, shipped as a CRD in the Function package and used by the function to validate. */
export const inputSchema: Schema = s.object(
  {
    apiVersion: s.string({ enum: [INPUT_API_VERSION] }),
    kind: s.string({ enum: [INPUT_KIND] }),
    backend: s.string({ enum: BACKENDS }),
    service: s.string({ minLength: 1 }),
    resource: s.object({ apiVersion: fieldPath, kind: s.string({ minLength: 1 }) }, { required: ['apiVersion', 'kind'] }),
    providerConfig: s.object(
      { name: s.string({ minLength: 1 }), fromFieldPath: fieldPath, format: s.string() },
      { rules: [{ rule: 'has(self.name) != has(self.fromFieldPath)', message: 'set exactly one of name and fromFieldPath' }] },
    ),
    fields: s.array(
      s.object(
        { to: fieldPath, from: fieldPath, value: anyValue, transforms, default: anyValue, required: s.boolean() },
        { required: ['to'], rules: [{ rule: 'has(self.from) != has(self.value)', message: 'set exactly one of from and value' }] },
      ),
    ),
    parametersTo: fieldPath,
    parameters: s.array(s.object({ from: fieldPath, to: fieldPath, transforms }, { required: ['from', 'to'] })),
    ignoredParameters: s.array(s.string()),
    planTable: s.object(
      { fromFieldPath: fieldPath, plans: s.map(s.map(anyValue)) },
      { required: ['fromFieldPath', 'plans'] },
    ),
    labels: s.array(s.object({ key: s.string({ minLength: 1 }), from: fieldPath, transforms }, { required: ['key', 'from'] })),
    connectionSecret: s.object({ nameSuffix: s.string({ minLength: 1 }) }, { required: ['nameSuffix'] }),
    status: s.array(s.object({ from: fieldPath, to: fieldPath }, { required: ['from', 'to'] })),
  },
  { required: ['apiVersion', 'kind', 'backend', 'service', 'resource', 'providerConfig', 'fields'] },
);
