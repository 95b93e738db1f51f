/**
 * The vocabulary of a composition recipe: how the fields of a data-service API reach one backend's resource.
 *
 * A data service's definition (apis/) states its recipe per backend in these terms; compositions/ writes the recipe
 * into a Composition step's input; the function (functions/dataservices/) reads it and composes. The function's
 * `Input` is a `Recipe` plus the backend and service it is for, so this file and `functions/dataservices/input.ts`
 * are the one contract between the three parts.
 *
 * Field paths use Crossplane's fieldpath syntax: `spec.parameters.maxConnections`,
 * `metadata.labels[crossplane.io/claim-name]`, `spec.items[0].name`.
 */

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

/** Everything the function needs to compose one resource of one backend for one API. */
export interface Recipe {
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
  readonly labels?: readonly LabelMapping[];
  /** Write the composed resource's connection details to `<claim-name><suffix>` in the claim's namespace. */
  readonly connectionSecret?: { readonly nameSuffix: string };
  readonly status?: readonly StatusMapping[];
}

/** Sets one label of the composed resource from a composite field. */
export interface LabelMapping {
  readonly key: string;
  readonly from: string;
  readonly transforms?: readonly Transform[];
}
