import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { exportTemplateManifest, type ExportTemplateManifestProps, type PermissionClaim } from './index';

const credentials: PermissionClaim = { group: '', resource: 'secrets', version: 'v1', selector: { owner: 'Provider' } };
const base: ExportTemplateManifestProps = {
  name: 'postgresqlinstances',
  namespace: 'crossplane-system',
  group: 'anynines.com',
  resource: 'postgresqlinstances',
};

/** The upstream CRD's schema as an ajv validator; the `x-kubernetes-*` keywords are only annotations here. */
function upstreamValidator() {
  const file = join(import.meta.dirname, '../../schemas/klutch-bind/example-backend.klutch.anynines.com_apiserviceexporttemplates.yaml');
  const crd = parse(readFileSync(file, 'utf8')) as { spec: { versions: { schema: { openAPIV3Schema: object } }[] } };
  const ajv = new Ajv({ strict: false });
  return ajv.compile(crd.spec.versions[0]!.schema.openAPIV3Schema);
}

describe('exportTemplateManifest', () => {
  it('writes the whole object, with the capitalised APIServiceSelector key', () => {
    const m = exportTemplateManifest({ ...base, version: 'v1', permissionClaims: [credentials] });
    expect(m).toEqual({
      apiVersion: 'example-backend.klutch.anynines.com/v1alpha1',
      kind: 'APIServiceExportTemplate',
      metadata: { name: 'postgresqlinstances', namespace: 'crossplane-system' },
      spec: {
        APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances', version: 'v1' },
        permissionClaims: [credentials],
      },
    });
    expect(Object.keys(m)).toEqual(['apiVersion', 'kind', 'metadata', 'spec']);
    expect(JSON.stringify(m)).toContain('"APIServiceSelector":');
  });

  it('leaves out version and permissionClaims when not given or empty', () => {
    expect(exportTemplateManifest(base).spec).toEqual({ APIServiceSelector: { group: 'anynines.com', resource: 'postgresqlinstances' } });
    expect(exportTemplateManifest({ ...base, permissionClaims: [] }).spec).not.toHaveProperty('permissionClaims');
  });

  it('copies the claims, so later changes to the input do not leak into the manifest', () => {
    const claims = [structuredClone(credentials)];
    const m = exportTemplateManifest({ ...base, permissionClaims: claims });
    claims[0]!.resource = 'configmaps';
    expect(m.spec.permissionClaims?.[0]?.resource).toBe('secrets');
  });

  it('is valid against the upstream CRD schema', () => {
    const validate = upstreamValidator();
    for (const m of [exportTemplateManifest(base), exportTemplateManifest({ ...base, version: 'v1', permissionClaims: [credentials] })]) {
      expect(validate(m), JSON.stringify(validate.errors)).toBe(true);
    }
    // The check bites: the camel-cased key cdk8s' generated class uses in TypeScript is not the wire key.
    const { APIServiceSelector, ...rest } = exportTemplateManifest(base).spec;
    expect(validate({ ...exportTemplateManifest(base), spec: { ...rest, apiServiceSelector: APIServiceSelector } })).toBe(false);
  });

  it.each([
    { field: 'name', props: { ...base, name: '' }, message: 'name: is empty' },
    { field: 'namespace', props: { ...base, namespace: '' }, message: 'namespace: is empty' },
    { field: 'group', props: { ...base, group: 'Anynines.com' }, message: 'group: "Anynines.com" is not a DNS subdomain' },
    { field: 'resource', props: { ...base, resource: 'PostgresqlInstances' }, message: 'resource: "PostgresqlInstances"' },
    { field: 'version', props: { ...base, version: '' }, message: 'version: is empty' },
    {
      field: 'permissionClaims',
      props: { ...base, permissionClaims: [{ ...credentials, autoAdopt: true, autoDonate: true }] },
      message: 'permissionClaims[0]: autoAdopt and autoDonate are mutually exclusive',
    },
  ])('rejects a bad $field, naming it', ({ props, message }) => {
    expect(() => exportTemplateManifest(props)).toThrow(message);
  });
});
