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
import { BACKENDS, TRANSFORM_TYPES, type Recipe } from '../../apis/mapping';
import { s, type Schema } from '../../apis/schema';

import type { Backend } from '../../apis/mapping';
export type {
  Backend,
  FieldMapping,
  ParameterMapping,
  PlanTable,
  ProviderConfigSelector,
  Recipe,
  StatusMapping,
  Transform,
} from '../../apis/mapping';

export const INPUT_GROUP = 'dataservices.fn.klutch.anynines.com';
export const INPUT_VERSION = 'v1beta1';
export const INPUT_API_VERSION = `${INPUT_GROUP}/${INPUT_VERSION}` as const;
export const INPUT_KIND = 'Input' as const;

/** A Composition step's input: a recipe, and the backend and service it composes. */
export interface Input extends Recipe {
  readonly apiVersion: typeof INPUT_API_VERSION;
  readonly kind: typeof INPUT_KIND;
  /** Which backend composes the resource: `a9s` (provider-anynines MR) or `a8s` (provider-kubernetes Object). */
  readonly backend: Backend;
  /** The data service, for messages and names (`postgresql`). */
  readonly service: string;
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
    planTable: s.object({ fromFieldPath: fieldPath, plans: s.map(s.map(anyValue)) }, { required: ['fromFieldPath', 'plans'] }),
    labels: s.array(s.object({ key: s.string({ minLength: 1 }), from: fieldPath, transforms }, { required: ['key', 'from'] })),
    connectionSecret: s.object({ nameSuffix: s.string({ minLength: 1 }) }, { required: ['nameSuffix'] }),
    status: s.array(s.object({ from: fieldPath, to: fieldPath }, { required: ['from', 'to'] })),
  },
  { required: ['apiVersion', 'kind', 'backend', 'service', 'resource', 'providerConfig', 'fields'] },
);
