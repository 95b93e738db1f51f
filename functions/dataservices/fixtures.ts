/** Small builders for the function's tests, the render test and the bench: composites, requests, sample values. */
import { RunFunctionRequest } from '@crossplane-org/function-sdk-typescript';
import type { Api } from '../../apis/api';
import type { JSONSchemaProps } from '../../apis/schema';
import { compositionInput, type A9sPlatform } from '../../compositions/composition';
import type { Backend, Input } from './input';

type Obj = Record<string, unknown>;

export const PLATFORM: A9sPlatform = { organizationGuid: 'org-guid', spaceGuid: 'space-guid' };

/** The composite Crossplane makes of a claim (v1 target): kind X<Kind>, claim labels, spec copied, composition ref. */
export function compositeOf(api: Api, backend: Backend, spec: Obj, claim = { name: 'my-claim', namespace: 'team-a' }): Obj {
  return {
    apiVersion: api.apiVersion,
    kind: `X${api.kind}`,
    metadata: {
      name: `${claim.name}-x7k2p`,
      labels: {
        'crossplane.io/claim-name': claim.name,
        'crossplane.io/claim-namespace': claim.namespace,
        'crossplane.io/composite': `${claim.name}-x7k2p`,
      },
    },
    spec: { ...structuredClone(spec), compositionRef: { name: api.compositionName(backend) } },
  };
}

export function inputOf(api: Api, backend: Backend): Input {
  return compositionInput(api, backend, PLATFORM);
}

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
export function sampleFor(schema: JSONSchemaProps, name = 'x', alt = false): unknown {
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
