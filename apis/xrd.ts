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
import type { ApiVersion } from './versions';
import { conversionPath } from '../lib/conversion';

/** Crossplane's `compositionRef` of a claim (internal/xcrd CompositeResourceClaimSpecProps). */
const COMPOSITION_REF: JSONSchemaProps = {
  type: 'object',
  description: 'The composition of the backend that composes this resource (a8s-postgresql, a9s-postgresql, ...), as on a Klutch claim.',
  required: ['name'],
  properties: { name: { type: 'string' } },
};

/**
 * Where the API server sends the ConversionReviews of an API with more than one version: the conversion server
 * (conversion/), at `conversionPath(<XRD name>)`. Crossplane copies it into the composite's and the claim's CRD.
 */
export interface ConversionWebhook {
  /** The conversion server's Service, in a cluster. */
  readonly service?: { readonly namespace: string; readonly name: string; readonly port?: number };
  /** Its https URL without the path, where it runs beside the API server (the tests). */
  readonly url?: string;
  /** The PEM CA of its serving certificate. */
  readonly caBundle: string;
}

export interface XrdProps {
  readonly api: Api;
  /** @default v1 */
  readonly target?: CrossplaneTarget;
  /** Required where the API has more than one version. */
  readonly conversion?: ConversionWebhook;
}

/** The `openAPIV3Schema` of a version of an API's composite: spec (with its target-specific CEL rules) and status. */
function compositeSchema(api: Api, target: CrossplaneTarget, version: ApiVersion): JSONSchemaProps {
  const spec = version.spec.toJSON();
  // v2: Klutch's `spec.compositionRef` (which Crossplane adds to a v1 claim) is a field of the API itself, the same
  // schema as the claim's, so a claim written for Klutch is a valid namespaced composite; it names the backend.
  if (target === 'v2') spec.properties = { ...spec.properties, compositionRef: COMPOSITION_REF };
  const rules = [...(spec['x-kubernetes-validations'] ?? []), ...api.rules(target, version.name)];
  if (rules.length > 0) spec['x-kubernetes-validations'] = rules;
  return {
    type: 'object',
    description: api.description,
    properties: { spec, status: version.status.toJSON() },
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
    // The newest is referenceable (Crossplane reads composites and claims in it; etcd stores it); the printer
    // columns name its fields.
    const versions = api.versions.map((v) => ({
      name: v.name,
      served: true,
      referenceable: v.storage,
      ...(v.deprecated !== undefined ? { deprecated: true, deprecationWarning: v.deprecated } : {}),
      schema: { openApiv3Schema: compositeSchema(api, target, v) },
      ...(v.storage && api.printerColumns.length > 0 ? { additionalPrinterColumns: api.printerColumns.map((c) => ({ ...c })) } : {}),
    }));
    const conversion = api.versions.length > 1 ? webhook(metadata.name, api, props.conversion) : undefined;
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
          ...(conversion ? { conversion } : {}),
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
          ...(conversion ? { conversion } : {}),
        },
      });
    }
  }
}

/** The XRD's `conversion`: a Webhook to the conversion server, which both Crossplane lines copy into the CRDs. */
function webhook(xrd: string, api: Api, w: ConversionWebhook | undefined) {
  const versions = api.versions.map((v) => v.name).join(', ');
  if (!w || !w.caBundle || !w.service === !w.url)
    throw new Error(
      `data service "${api.name}" has versions ${versions}, so its XRD needs the conversion server: give synth its CA (--conversion-ca <PEM file>) and either its Service (the default) or its URL`,
    );
  const path = conversionPath(xrd);
  return {
    strategy: 'Webhook',
    webhook: {
      conversionReviewVersions: ['v1'],
      clientConfig: {
        caBundle: Buffer.from(w.caBundle).toString('base64'),
        ...(w.service ? { service: { ...w.service, port: w.service.port ?? 443, path } } : { url: `${w.url!.replace(/\/$/, '')}${path}` }),
      },
    },
  };
}
