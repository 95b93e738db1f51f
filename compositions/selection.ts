/**
 * The one Composition of an API on the Crossplane v2 target: a Pipeline step that calls our function with a
 * `Selection` (recipe/selection.ts) — per backend composition name (`a8s-postgresql`) the input that composition
 * carries on v1 — so a namespaced composite written as a Klutch claim (`spec.compositionRef.name: a8s-postgresql`) is
 * composed on that backend. Crossplane v2 picks Compositions only by `spec.crossplane.compositionRef`, which a Klutch
 * claim does not have; this is where the translation lives (docs/decisions/crossplane-v2.md).
 */
import { Construct } from 'constructs';
import type { Api } from '../apis/api';
import { Composition, CompositionSpecMode } from '../imports/apiextensions.crossplane.io';
import { inputFor, INPUT_API_VERSION, SELECTION_KIND, type Input, type Recipe, type Selection } from '../recipe';
import type { FunctionPackage } from './function-ref';

/** Where a Klutch claim names its backend's composition. */
const SELECTED_BY = 'spec.compositionRef.name';

export interface SelectionCompositionProps {
  readonly api: Api;
  readonly fn: FunctionPackage;
  /** Platform settings the backends' recipes read; missing ones take their defaults. */
  readonly settings?: Readonly<Record<string, unknown>>;
}

/** The step input: every backend's v2 input under its composition name. */
export function selectionFor(api: Api, settings?: Readonly<Record<string, unknown>>): Selection {
  const inputs: Record<string, Input> = {};
  for (const backend of api.backendNames) {
    inputs[api.compositionName(backend)] = inputFor(api.backends[backend] as Recipe, {
      backend,
      service: api.name,
      settings,
      target: 'v2',
    });
  }
  return {
    apiVersion: INPUT_API_VERSION,
    kind: SELECTION_KIND,
    service: api.name,
    from: SELECTED_BY,
    default: api.compositionName(api.defaultBackend),
    inputs,
  };
}

export class SelectionComposition extends Construct {
  readonly name: string;

  constructor(scope: Construct, id: string, props: SelectionCompositionProps) {
    super(scope, id);
    const { api } = props;
    this.name = api.selectionCompositionName;
    new Composition(this, 'Resource', {
      metadata: { name: this.name, labels: { 'klutch.anynines.com/service': api.name } },
      spec: {
        compositeTypeRef: { apiVersion: api.apiVersion, kind: api.compositeKind('v2') },
        mode: CompositionSpecMode.PIPELINE,
        pipeline: [{ step: 'compose', functionRef: { name: props.fn.name }, input: selectionFor(api, props.settings) }],
      },
    });
  }
}
