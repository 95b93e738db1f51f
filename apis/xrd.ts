/**
 * The CompositeResourceDefinition of an API: v1 with claims (the default, Klutch-compatible, served as LegacyCluster
 * by Crossplane v2) or a v2 namespaced XRD without claims.
 */
import { Construct } from 'constructs';
import {
  CompositeResourceDefinition,
  CompositeResourceDefinitionSpecDefaultCompositeDeletePolicy,
  CompositeResourceDefinitionV2,
  CompositeResourceDefinitionV2SpecScope,
} from '../imports/apiextensions.crossplane.io';
import type { Api, CrossplaneTarget } from './api';
import type { JSONSchemaProps } from '../lib/schema';

/** Crossplane's `compositionRef` of a claim (internal/xcrd CompositeResourceClaimSpecProps). */
const COMPOSITION_REF: JSONSchemaProps = {
  type: 'object',
  description: 'The composition of the backend that composes this resource (a8s-postgresql, a9s-postgresql, ...), as on a Klutch claim.',
  required: ['name'],
  properties: { name: { type: 'string' } },
};

export interface XrdProps {
  readonly api: Api;
  /** @default v1 */
  readonly target?: CrossplaneTarget;
}

/** The `openAPIV3Schema` of an API's composite: spec (with its target-specific CEL rules) and status. */
function compositeSchema(api: Api, target: CrossplaneTarget): JSONSchemaProps {
  const spec = api.spec.toJSON();
  // v2: Klutch's `spec.compositionRef` (which Crossplane adds to a v1 claim) is a field of the API itself, the same
  // schema as the claim's, so a claim written for Klutch is a valid namespaced composite; it names the backend.
  if (target === 'v2') spec.properties = { ...spec.properties, compositionRef: COMPOSITION_REF };
  const rules = [...(spec['x-kubernetes-validations'] ?? []), ...api.rules(target)];
  if (rules.length > 0) spec['x-kubernetes-validations'] = rules;
  return {
    type: 'object',
    description: api.description,
    properties: { spec, status: api.status.toJSON() },
    required: ['spec'],
  };
}

export class Xrd extends Construct {
  constructor(scope: Construct, id: string, props: XrdProps) {
    super(scope, id);
    const { api } = props;
    const target = props.target ?? 'v1';
    const kind = api.compositeKind(target);
    const plural = api.compositePlural(target);
    const metadata = { name: `${plural}.${api.group}` };
    const names = { kind, plural };
    const versions = [
      {
        name: api.version,
        served: true,
        referenceable: true,
        schema: { openApiv3Schema: compositeSchema(api, target) },
        ...(api.printerColumns.length > 0 ? { additionalPrinterColumns: api.printerColumns.map((c) => ({ ...c })) } : {}),
      },
    ];
    const defaultCompositionRef = {
      name: target === 'v1' ? api.compositionName(api.defaultBackend) : api.selectionCompositionName,
    };
    if (target === 'v1') {
      new CompositeResourceDefinition(this, 'Resource', {
        metadata,
        spec: {
          group: api.group,
          names,
          claimNames: { kind: api.kind, plural: api.plural },
          defaultCompositionRef,
          defaultCompositeDeletePolicy:
            api.defaultCompositeDeletePolicy === 'Foreground'
              ? CompositeResourceDefinitionSpecDefaultCompositeDeletePolicy.FOREGROUND
              : CompositeResourceDefinitionSpecDefaultCompositeDeletePolicy.BACKGROUND,
          versions,
        },
      });
    } else {
      new CompositeResourceDefinitionV2(this, 'Resource', {
        metadata,
        spec: {
          group: api.group,
          names,
          scope: CompositeResourceDefinitionV2SpecScope.NAMESPACED,
          defaultCompositionRef,
          versions,
        },
      });
    }
  }
}
