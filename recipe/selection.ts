/**
 * The Selection input: one Composition step that composes an API on whichever backend the composite names, for the
 * Crossplane v2 target. A v2 namespaced composite has no claim, and Crossplane picks its Composition only from
 * `spec.crossplane.compositionRef`; a Klutch claim names its backend in `spec.compositionRef.name`
 * (`a8s-postgresql`). So the v2 target has one Composition per API whose step input is this table: the composite
 * field that names the backend's composition (`from`), the composition used when it is not set (`default`), and per
 * composition name the `Input` that composition would carry. The function picks the entry and composes it as usual;
 * it learns no backend name (docs/decisions/crossplane-v2.md).
 */
import { s, type Schema } from '../lib/schema';
import { INPUT_API_VERSION, inputSchema, type Input } from './input';

export const SELECTION_KIND = 'Selection' as const;

export interface Selection {
  readonly apiVersion: typeof INPUT_API_VERSION;
  readonly kind: typeof SELECTION_KIND;
  /** The data service, for names and messages (`postgresql`). */
  readonly service: string;
  /** Path in the composite of the composition name (`spec.compositionRef.name`). */
  readonly from: string;
  /** The composition name used when `from` is not set (the API's default backend). */
  readonly default: string;
  /** Composition name (`a8s-postgresql`) → the input that composes it. */
  readonly inputs: Readonly<Record<string, Input>>;
}

/** The OpenAPI schema of `Selection`, shipped as a CRD in the Function package beside the Input's. */
export const selectionSchema: Schema = s.object(
  {
    apiVersion: s.string({ enum: [INPUT_API_VERSION] }),
    kind: s.string({ enum: [SELECTION_KIND] }),
    service: s.string({ minLength: 1 }),
    from: s.string({ minLength: 1 }),
    default: s.string({ minLength: 1 }),
    inputs: s.map(inputSchema),
  },
  { required: ['apiVersion', 'kind', 'service', 'from', 'default', 'inputs'] },
);
