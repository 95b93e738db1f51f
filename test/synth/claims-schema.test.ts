/**
 * Claims against the XRD schemas, offline: each XRD becomes the claim CRD Crossplane derives from it (harness/
 * xcrd.ts) and every example and case is checked with unknown fields as errors. Structure only; the CEL rules are
 * evaluated by crank (crank.test.ts) and by a real API server (test/cluster/claims.test.ts).
 */
import { describe, expect, it } from 'vitest';
import { loadCases } from '../cases';
import { claimValidator } from '../support/openapi';
import { loadCatalog, synthCatalog } from '../../harness/crossplane/catalog';

const out = await synthCatalog();
const apis = await loadCatalog();
const cases = new Map((await loadCases(apis)).map((c) => [c.api, c]));

describe.each(apis.map((a) => [a.name, a] as const))('%s claims against the XRD schema', (name, api) => {
  const xrd = out.get(`packages/dataservices/apis/${name}/definition.yaml`)?.[0] as Record<string, unknown>;
  const validate = claimValidator(xrd);
  const celMessages = JSON.stringify(xrd);
  const claim = (spec: Record<string, unknown>, backend?: string) => ({
    apiVersion: api.apiVersion,
    kind: api.kind,
    metadata: { name: 'c', namespace: 'default' },
    spec: { ...spec, ...(backend ? { compositionRef: { name: api.compositionName(backend) } } : {}) },
  });

  it('accepts the examples synth writes', () => {
    for (const b of api.backendNames) {
      const [example] = out.get(`packages/dataservices/examples/${name}-${b}.yaml`) ?? [];
      expect(validate(example).errors, b).toEqual([]);
    }
  });

  it('accepts every valid case; every invalid case fails the schema or names a CEL rule of the XRD', () => {
    const c = cases.get(name);
    for (const k of c?.create ?? []) {
      const r = validate(claim(k.spec, k.backend));
      if (k.valid) expect(r.errors, k.name).toEqual([]);
      else
        expect(
          !r.valid || (k.error !== undefined && celMessages.includes(k.error)),
          `${k.name}: schema accepted it and no CEL rule says "${k.error}"`,
        ).toBe(true);
    }
  });

  it('rejects a wrong type, an unknown field and a missing required field', () => {
    const required = (api.spec.toJSON().required ?? [])[0] as string;
    const [example] = out.get(`packages/dataservices/examples/${name}-${api.defaultBackend}.yaml`) ?? [];
    const spec = (example as { spec: Record<string, unknown> }).spec;
    expect(validate(claim({ ...spec, [required]: 42 })).errors.join('\n')).toContain(required);
    expect(validate(claim({ ...spec, notAField: true })).errors.join('\n')).toContain('notAField');
    const { [required]: _, ...missing } = spec;
    expect(validate(claim(missing)).errors.join('\n')).toContain(required);
  });
});
