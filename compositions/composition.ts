/**
 * A data service's Composition for one backend: always `mode: Pipeline`, one step that calls our function with the
 * backend's recipe as typed input. The composition holds no logic; the recipe is data.
 */
import { Construct } from 'constructs';
import type { Api, CrossplaneTarget } from '../apis/api';
import { inputFor, type Backend, type Recipe } from '../recipe';
import { Composition, CompositionSpecMode } from '../imports/apiextensions.crossplane.io';
import type { FunctionPackage } from './function-ref';

export interface DataServiceCompositionProps {
  readonly api: Api;
  readonly backend: Backend;
  readonly fn: FunctionPackage;
  /** @default v1 */
  readonly target?: CrossplaneTarget;
  /** Platform settings the backend's recipe reads (`a9s.organizationGuid` → ...); missing ones take their defaults. */
  readonly settings?: Readonly<Record<string, unknown>>;
  /** Namespace for composite connection secrets (v1 only; v2 has none). @default crossplane-system */
  readonly connectionSecretsNamespace?: string;
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
        pipeline: [
          {
            step: 'compose',
            functionRef: { name: props.fn.name },
            input: inputFor(api.backends[backend] as Recipe, { backend, service: api.name, settings: props.settings, target }),
          },
        ],
        ...(target === 'v1' ? { writeConnectionSecretsToNamespace: props.connectionSecretsNamespace ?? 'crossplane-system' } : {}),
      },
    });
  }
}
