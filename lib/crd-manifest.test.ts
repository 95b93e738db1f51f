import { describe, expect, it } from 'vitest';
import { crdManifest, type CrdProps } from './crd-manifest';
import { s } from './schema';

const props = (kind: string, plural?: string): CrdProps => ({
  group: 'example.org',
  kind,
  ...(plural ? { plural } : {}),
  scope: 'Namespaced',
  versions: [{ name: 'v1', schema: s.object({ spec: s.freeform() }) }],
});
const names = (p: CrdProps) => {
  const crd = crdManifest(p) as { metadata: { name: string }; spec: { names: { plural: string; singular: string } } };
  return [crd.metadata.name, crd.spec.names.plural, crd.spec.names.singular];
};

describe('crdManifest names', () => {
  it("takes the kind's plural from Names.plural when none is given", () => {
    expect(names(props('Widget'))).toEqual(['widgets.example.org', 'widgets', 'widget']);
    expect(names(props('Policy'))).toEqual(['policies.example.org', 'policies', 'policy']);
  });

  it('refuses a kind ending in s without a plural, naming the CRD and the field; takes one that is given', () => {
    expect(() => crdManifest(props('Postgres'))).toThrow('CRD Postgres.example.org: plural: kind "Postgres" ends in "s"');
    expect(names(props('Postgres', 'postgres'))).toEqual(['postgres.example.org', 'postgres', 'postgres']);
  });
});
