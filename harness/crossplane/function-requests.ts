/**
 * Builders for the tests and benches of the composition function: the composite Crossplane makes of a claim, a
 * Composition's step input, a RunFunction request, sample parameter values. Shared by the function's unit tests,
 * the crank render suite and bench/function.
 */
import { createHash } from 'node:crypto';
import { RunFunctionRequest, Severity, type RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import type { Api } from '../../apis/api';
import { A9S_SETTINGS } from '../../backends';
import type { JSONSchemaProps } from '../../lib/schema';
import { inputFor, type Backend, type Input, type Recipe } from '../../recipe';

type Obj = Record<string, unknown>;

/** Platform settings the tests compose with (recognisable values instead of the defaults). */
export const SETTINGS = { [A9S_SETTINGS.organizationGuid]: 'org-guid', [A9S_SETTINGS.spaceGuid]: 'space-guid' };

export interface ClaimRef {
  readonly name: string;
  readonly namespace: string;
  readonly labels?: Readonly<Record<string, string>>;
}

/** A stable UID for a test object (the same name, the same UID), shaped as the API server writes them. */
export function uidOf(name: string): string {
  const h = createHash('sha256').update(name).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-${h.slice(12, 16)}-${h.slice(16, 20)}-${h.slice(20, 32)}`;
}

/**
 * The composite Crossplane makes of a claim (v1 target): kind X<Kind>, a generated name, the claim's labels plus
 * Crossplane's claim labels, the spec copied with the composition reference and the claim reference.
 */
export function compositeOf(api: Api, backend: Backend, spec: Obj, claim: ClaimRef = { name: 'my-claim', namespace: 'team-a' }): Obj {
  const name = `${claim.name}-x7k2p`;
  return {
    apiVersion: api.apiVersion,
    kind: `X${api.kind}`,
    metadata: {
      name,
      // The API server gives every object one; recipes may read it (the cnpg binding's role is named after it).
      uid: uidOf(name),
      labels: {
        ...(claim.labels ?? {}),
        'crossplane.io/claim-name': claim.name,
        'crossplane.io/claim-namespace': claim.namespace,
        'crossplane.io/composite': name,
      },
    },
    spec: {
      ...structuredClone(spec),
      compositionRef: { name: api.compositionName(backend) },
      claimRef: { apiVersion: api.apiVersion, kind: api.kind, name: claim.name, namespace: claim.namespace },
    },
  };
}

/** The step input synth writes into the Composition of one backend of an API. */
export function inputOf(api: Api, backend: Backend): Input {
  return inputFor(api.backends[backend] as Recipe, { backend, service: api.name, settings: SETTINGS });
}

/**
 * The step input of a made-up backend `demo` for one feature of the recipe vocabulary (a related list, a kept value):
 * `resource` wrapped in a provider-kubernetes Object at `spec.forProvider.manifest` (`objectApiVersion`: the legacy
 * `kubernetes.crossplane.io/v1alpha2` or v2's namespaced `kubernetes.m.crossplane.io/v1alpha1`), no fields, the
 * default ProviderConfig (a ClusterProviderConfig for the namespaced Object, as the v2 package selects it).
 */
export function demoInput(
  service: string,
  resource: Recipe['resource'],
  objectApiVersion: 'kubernetes.crossplane.io/v1alpha2' | 'kubernetes.m.crossplane.io/v1alpha1',
  recipe: Partial<Recipe> = {},
): Input {
  const namespaced = objectApiVersion.startsWith('kubernetes.m.');
  return inputFor(
    {
      resource,
      wrapper: { apiVersion: objectApiVersion, kind: 'Object', manifestAt: 'spec.forProvider.manifest' },
      providerConfig: namespaced ? { name: 'default', kind: 'ClusterProviderConfig' } : { name: 'default' },
      fields: [],
      ...recipe,
    },
    { backend: 'demo', service },
  );
}

/** Crossplane's labels on a v1 composite naming its claim. */
export const claimLabels = (name: string, namespace: string): Record<string, string> => ({
  'crossplane.io/claim-name': name,
  'crossplane.io/claim-namespace': namespace,
});

/**
 * The composites of a demo backend's claim `shop` in namespace team-a (kind `X<kind>` in group example.org):
 * cluster-scoped with Crossplane's claim labels (v1), and namespaced (v2) carrying `tenantLabels`, labels a tenant
 * wrote on it, which must not widen what the function sees.
 */
export function demoComposites(kind: string, tenantLabels: Record<string, string>): { v1: Obj; v2: Obj } {
  return {
    v1: { apiVersion: 'example.org/v1', kind: `X${kind}`, metadata: { name: 'shop-abcde', labels: claimLabels('shop', 'team-a') } },
    v2: { apiVersion: 'example.org/v1', kind, metadata: { name: 'shop', namespace: 'team-a', labels: tenantLabels } },
  };
}

/**
 * Crossplane's answer to the function's requirement `name`: the objects it found (none: it found nothing), as extra
 * resources (`requirements.extraResources`) or, for `requirements.resources`, as required resources.
 */
export function answer(
  req: RunFunctionRequest,
  name: string,
  found: readonly Obj[],
  as: 'extraResources' | 'requiredResources' = 'extraResources',
): RunFunctionRequest {
  req[as] = { ...req[as], [name]: { items: found.map((resource) => ({ resource, connectionDetails: {}, ready: 0 })) } };
  return req;
}

/** The messages of a response's Fatal results. */
export const fatalMessages = (r: RunFunctionResponse): string[] =>
  r.results.filter((x) => x.severity === Severity.SEVERITY_FATAL).map((x) => x.message);

/** A request as Crossplane sends it: observed composite (and resources), the step input, a tag. */
export function requestOf(
  input: unknown,
  composite: Obj | undefined,
  observed: Record<string, Obj> = {},
  desired?: RunFunctionRequest['desired'],
): RunFunctionRequest {
  return RunFunctionRequest.fromPartial({
    meta: { tag: 'tag-1', capabilities: [] },
    observed: {
      composite: composite ? { resource: composite, connectionDetails: {}, ready: 0 } : undefined,
      resources: Object.fromEntries(Object.entries(observed).map(([k, v]) => [k, { resource: v, connectionDetails: {}, ready: 0 }])),
    },
    ...(desired ? { desired } : {}),
    input: input as Obj,
  });
}

/**
 * A valid value for a schema, different from its default where it can be: the first enum value (or the last, when
 * `alt`), the minimum of a number, every property of an object, one item of an array.
 */
function sampleFor(schema: JSONSchemaProps, name = 'x', alt = false): unknown {
  const sch = schema as JSONSchemaProps & Obj;
  const en = sch.enum as unknown[] | undefined;
  if (en?.length) return alt ? en[en.length - 1] : en[0];
  switch (sch.type) {
    case 'boolean':
      return !(sch.default ?? false);
    case 'integer':
    case 'number': {
      const min = typeof sch.minimum === 'number' ? sch.minimum : 0;
      const max = typeof sch.maximum === 'number' ? sch.maximum : min + 1000;
      return Math.min(max, Math.max(min, 1) + (alt ? 1 : 0) + 1);
    }
    case 'string': {
      const pattern = sch.pattern as string | undefined;
      if (pattern?.includes('kB|MB|GB|TB')) return '64MB';
      return `${name}-value`;
    }
    case 'array':
      return [sampleFor(sch.items as JSONSchemaProps, name, alt)];
    case 'object': {
      const props = (sch.properties ?? {}) as Record<string, JSONSchemaProps>;
      return Object.fromEntries(Object.entries(props).map(([k, v]) => [k, sampleFor(v, k, alt)]));
    }
    default:
      return `${name}-value`;
  }
}

/** Every parameter of an API's XRD (`spec.parameters.properties`), with a sample value. */
export function allParameters(api: Api): Obj {
  const params = (api.spec.toJSON().properties?.parameters?.properties ?? {}) as Record<string, JSONSchemaProps>;
  return Object.fromEntries(Object.entries(params).map(([k, v]) => [k, sampleFor(v, k)]));
}
