/**
 * A data service's Composition for one backend: always `mode: Pipeline`, one step that calls our function with the
 * backend's recipe as typed input. The composition holds no logic; the recipe is data.
 */
import { Construct } from 'constructs';
import type { Api, CrossplaneTarget } from '../apis/api';
import type { Backend, FieldMapping, Recipe } from '../apis/mapping';
import { INPUT_API_VERSION, INPUT_KIND, type Input } from '../functions/dataservices/input';
import { Composition, CompositionSpecMode } from '../imports/apiextensions.crossplane.io';
import type { FunctionPackage } from './function-ref';

/** Platform-wide settings of the a9s backend (one Cloud Foundry org/space for all instances, as in Klutch). */
export interface A9sPlatform {
  readonly organizationGuid: string;
  readonly spaceGuid: string;
}

export interface DataServiceCompositionProps {
  readonly api: Api;
  readonly backend: Backend;
  readonly fn: FunctionPackage;
  /** @default v1 */
  readonly target?: CrossplaneTarget;
  readonly a9s: A9sPlatform;
  /** Namespace for composite connection secrets (v1 only; v2 has none). @default crossplane-system */
  readonly connectionSecretsNamespace?: string;
}

/** The function input for one backend of an API: its recipe plus the platform settings it needs. */
export function compositionInput(api: Api, backend: Backend, a9s: A9sPlatform): Input {
  const recipe = api.backends[backend] as Recipe;
  const platform: FieldMapping[] =
    backend === 'a9s' && recipe.resource.kind === 'ServiceInstance'
      ? [
          { to: 'spec.forProvider.organizationGuid', value: a9s.organizationGuid },
          { to: 'spec.forProvider.spaceGuid', value: a9s.spaceGuid },
        ]
      : [];
  return {
    apiVersion: INPUT_API_VERSION,
    kind: INPUT_KIND,
    backend,
    service: api.name,
    ...recipe,
    fields: [...recipe.fields, ...platform],
  };
}

export class DataServiceComposition extends Construct {
  readonly name: string;

  constructor(scope: Construct, id: string, props: DataServiceCompositionProps) {
    super(scope, id);
    const { api, backend } = props;
    if (!api.backends[backend]) {
      throw new Error(`data service "${api.name}": backends.${backend}: has no recipe; add one or do not compose ${backend}`);
    }
    const target = props.target ?? 'v1';
    this.name = api.compositionName(backend);
    new Composition(this, 'Resource', {
      metadata: {
        name: this.name,
        labels: { 'klutch.anynines.com/backend': backend, 'klutch.anynines.com/service': api.name },
      },
      spec: {
        compositeTypeRef: { apiVersion: api.apiVersion, kind: api.compositeKind(target) },
        mode: CompositionSpecMode.PIPELINE,
        pipeline: [{ step: 'compose', functionRef: { name: props.fn.name }, input: compositionInput(api, backend, props.a9s) }],
        ...(target === 'v1' ? { writeConnectionSecretsToNamespace: props.connectionSecretsNamespace ?? 'crossplane-system' } : {}),
      },
    });
  }
}
