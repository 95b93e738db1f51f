/**
 * The XRD → CRD converter, with the cases of Crossplane's own internal/xcrd/crd_test.go (v1.20.11) ported: the same
 * inputs, the same expected CRDs, asserted field by field.
 */
import { describe, expect, it } from 'vitest';
import {
  claimCrd,
  compositeCrd,
  compositeResourceClaimSpecProps,
  compositeResourceSpecProps,
  compositeResourceStatusProps,
  crdsForXrd,
  isEstablished,
  setCrdMetadata,
  toJSONSchemaProps,
  validateClaimNames,
  type Crd,
  type JSONSchemaProps,
  type XrdObject,
} from './xcrd';

const name = 'coolcomposites.example.org';
const labels = { cool: 'very' };
const annotations = { 'example.org/cool': 'very' };
const group = 'example.org';
const names = { plural: 'coolcomposites', singular: 'coolcomposite', kind: 'CoolComposite', listKind: 'CoolCompositeList' };
const claimNames = { plural: 'coolclaims', singular: 'coolclaim', kind: 'CoolClaim', listKind: 'CoolClaimList' };

/** The `schema` of crd_test.go. */
const schema = () => ({
  required: ['spec'],
  properties: {
    spec: {
      description: 'Specification of the resource.',
      required: ['storageGB', 'engineVersion'],
      properties: {
        engineVersion: { enum: ['5.6', '5.7'], type: 'string' },
        storageGB: { type: 'integer', description: 'Pretend this is useful.' },
        someField: { type: 'string', description: 'Pretend this is useful.' },
        someOtherField: { type: 'string', description: 'Pretend this is useful.' },
      },
      'x-kubernetes-validations': [{ message: 'Cannot change engine version', rule: 'self.engineVersion == oldSelf.engineVersion' }],
      type: 'object',
      oneOf: [{ required: ['someField'] }, { required: ['someOtherField'] }],
    },
    status: {
      properties: { phase: { type: 'string' }, something: { type: 'string' } },
      'x-kubernetes-validations': [{ message: 'Phase is required once set', rule: '!has(oldSelf.phase) || has(self.phase)' }],
      oneOf: [{ required: ['phase'] }, { required: ['something'] }],
      type: 'object',
      description: 'Status of the resource.',
    },
  },
  type: 'object',
  description: 'What the resource is for.',
});

function xrd(openAPIV3Schema: unknown | null, spec: Partial<XrdObject['spec']> = {}): XrdObject {
  return {
    apiVersion: 'apiextensions.crossplane.io/v1',
    kind: 'CompositeResourceDefinition',
    metadata: { name, labels, annotations, uid: 'you-you-eye-dee' },
    spec: {
      group,
      names,
      versions: [{ name: 'v1', referenceable: true, served: true, ...(openAPIV3Schema === null ? {} : { schema: { openAPIV3Schema } }) }],
      ...spec,
    },
  };
}

/** crd_test.go converts the Go struct as given: no API server defaulting of the XRD. */
const asGiven = { xrdDefaults: false } as const;

const compositeColumns = [
  { name: 'SYNCED', type: 'string', jsonPath: ".status.conditions[?(@.type=='Synced')].status" },
  { name: 'READY', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
  { name: 'COMPOSITION', type: 'string', jsonPath: '.spec.compositionRef.name' },
  { name: 'COMPOSITIONREVISION', type: 'string', jsonPath: '.spec.compositionRevisionRef.name', priority: 1 },
  { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];
const claimColumns = [
  { name: 'SYNCED', type: 'string', jsonPath: ".status.conditions[?(@.type=='Synced')].status" },
  { name: 'READY', type: 'string', jsonPath: ".status.conditions[?(@.type=='Ready')].status" },
  { name: 'CONNECTION-SECRET', type: 'string', jsonPath: '.spec.writeConnectionSecretToRef.name' },
  { name: 'AGE', type: 'date', jsonPath: '.metadata.creationTimestamp' },
];

/** The spec props of crd_test.go's expected composite CRD, literally (not from the functions under test). */
const expectedCompositeSpecProps: Record<string, JSONSchemaProps> = {
  compositionRef: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  compositionSelector: {
    type: 'object',
    required: ['matchLabels'],
    properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  compositionRevisionRef: { type: 'object', required: ['name'], properties: { name: { type: 'string' } } },
  compositionRevisionSelector: {
    type: 'object',
    required: ['matchLabels'],
    properties: { matchLabels: { type: 'object', additionalProperties: { type: 'string' } } },
  },
  compositionUpdatePolicy: { type: 'string', enum: ['Automatic', 'Manual'] },
  claimRef: {
    type: 'object',
    required: ['apiVersion', 'kind', 'namespace', 'name'],
    properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, namespace: { type: 'string' }, name: { type: 'string' } },
  },
  resourceRefs: {
    type: 'array',
    items: {
      type: 'object',
      properties: { apiVersion: { type: 'string' }, name: { type: 'string' }, kind: { type: 'string' } },
      required: ['apiVersion', 'kind'],
    },
    'x-kubernetes-list-type': 'atomic',
  },
  publishConnectionDetailsTo: {
    type: 'object',
    required: ['name'],
    properties: {
      name: { type: 'string' },
      configRef: { type: 'object', default: { name: 'default' }, properties: { name: { type: 'string' } } },
      metadata: {
        type: 'object',
        properties: {
          labels: { type: 'object', additionalProperties: { type: 'string' } },
          annotations: { type: 'object', additionalProperties: { type: 'string' } },
          type: { type: 'string' },
        },
      },
    },
  },
  writeConnectionSecretToRef: {
    type: 'object',
    required: ['name', 'namespace'],
    properties: { name: { type: 'string' }, namespace: { type: 'string' } },
  },
};

const expectedStatusProps: Record<string, JSONSchemaProps> = {
  conditions: {
    description: 'Conditions of the resource.',
    type: 'array',
    'x-kubernetes-list-type': 'map',
    'x-kubernetes-list-map-keys': ['type'],
    items: {
      type: 'object',
      required: ['lastTransitionTime', 'reason', 'status', 'type'],
      properties: {
        lastTransitionTime: { type: 'string', format: 'date-time' },
        message: { type: 'string' },
        reason: { type: 'string' },
        status: { type: 'string' },
        type: { type: 'string' },
      },
    },
  },
  claimConditionTypes: { type: 'array', 'x-kubernetes-list-type': 'set', items: { type: 'string' } },
  connectionDetails: { type: 'object', properties: { lastPublishedTime: { type: 'string', format: 'date-time' } } },
};

/** crd_test.go "Successful": the whole expected CRD. */
function expectedSuccessful(): Crd {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name, labels },
    spec: {
      group,
      names: { ...names, categories: ['composite'] },
      scope: 'Cluster',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: compositeColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'What the resource is for.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } },
                spec: {
                  type: 'object',
                  required: ['storageGB', 'engineVersion'],
                  description: 'Specification of the resource.',
                  properties: {
                    storageGB: { type: 'integer', description: 'Pretend this is useful.' },
                    engineVersion: { type: 'string', enum: ['5.6', '5.7'] },
                    someField: { type: 'string', description: 'Pretend this is useful.' },
                    someOtherField: { type: 'string', description: 'Pretend this is useful.' },
                    ...expectedCompositeSpecProps,
                  },
                  'x-kubernetes-validations': [
                    { message: 'Cannot change engine version', rule: 'self.engineVersion == oldSelf.engineVersion' },
                  ],
                  oneOf: [{ required: ['someField'] }, { required: ['someOtherField'] }],
                },
                status: {
                  type: 'object',
                  description: 'Status of the resource.',
                  properties: { phase: { type: 'string' }, something: { type: 'string' }, ...expectedStatusProps },
                  'x-kubernetes-validations': [{ message: 'Phase is required once set', rule: '!has(oldSelf.phase) || has(self.phase)' }],
                  oneOf: [{ required: ['phase'] }, { required: ['something'] }],
                },
              },
            },
          },
        },
      ],
    },
  };
}

const root = (crd: Crd) => crd.spec.versions[0]!.schema.openAPIV3Schema;
const props = (crd: Crd, p: 'spec' | 'status' | 'metadata') => root(crd).properties![p]!;

describe('compositeCrd (ForCompositeResource), crd_test.go TestForCompositeResource', () => {
  it('Successful: a CRD is generated from a CompositeResourceDefinitionVersion', () => {
    expect(compositeCrd(xrd(schema()), asGiven)).toEqual(expectedSuccessful());
  });

  it('DefaultCompositionUpdatePolicyIsSet: the XRD default becomes the default of spec.compositionUpdatePolicy', () => {
    const got = compositeCrd(xrd(schema(), { defaultCompositionUpdatePolicy: 'Automatic' }), asGiven);
    const want = expectedSuccessful();
    props(want, 'spec').properties!.compositionUpdatePolicy = { type: 'string', enum: ['Automatic', 'Manual'], default: 'Automatic' };
    expect(got).toEqual(want);
    expect(props(got, 'spec').properties!.compositionUpdatePolicy!.default).toBe('Automatic');
  });

  it('EmptyOpenAPIV3Schema: a CRD is generated when the schema is empty', () => {
    const got = compositeCrd(xrd({}), asGiven);
    expect(root(got).description).toBeUndefined();
    expect(root(got).required).toEqual(['spec']);
    expect(props(got, 'metadata')).toEqual({ type: 'object', properties: { name: { type: 'string', maxLength: 63 } } });
    expect(props(got, 'spec')).toEqual({ type: 'object', properties: expectedCompositeSpecProps });
    expect(props(got, 'status')).toEqual({ type: 'object', properties: expectedStatusProps });
    expect(got.spec.versions[0]!.additionalPrinterColumns).toEqual(compositeColumns);
  });

  it('RestrictingNameLength: a smaller metadata.name maxLength of the XRD wins', () => {
    const s = schema() as Record<string, any>;
    s.properties = { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } }, ...s.properties };
    const got = compositeCrd(xrd(s), asGiven);
    const want = expectedSuccessful();
    props(want, 'metadata').properties!.name!.maxLength = 10;
    expect(got).toEqual(want);
  });

  it('WeaklyRestrictingNameLength: a larger metadata.name maxLength is capped at 63', () => {
    const s = schema() as Record<string, any>;
    s.properties = { metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 100 } } }, ...s.properties };
    expect(compositeCrd(xrd(s), asGiven)).toEqual(expectedSuccessful());
  });

  it('NilCompositeResourceValidation: an error when the version has no schema', () => {
    expect(() => compositeCrd(xrd(null), asGiven)).toThrow(
      'cannot generate CRD for "Composite Resource" "coolcomposites.example.org": custom resource validation cannot be nil',
    );
  });

  it('PreserveUnknownFieldsInSpec: x-kubernetes-preserve-unknown-fields of spec is carried over', () => {
    const s = schema() as Record<string, any>;
    s.properties.spec['x-kubernetes-preserve-unknown-fields'] = true;
    const got = compositeCrd(xrd(s), asGiven);
    const want = expectedSuccessful();
    props(want, 'spec')['x-kubernetes-preserve-unknown-fields'] = true;
    expect(got).toEqual(want);
  });

  it('applies the API server default of a stored XRD (Automatic) unless asked not to', () => {
    expect(props(compositeCrd(xrd(schema())), 'spec').properties!.compositionUpdatePolicy!.default).toBe('Automatic');
    expect(
      props(compositeCrd(xrd(schema(), { defaultCompositionUpdatePolicy: 'Manual' })), 'spec').properties!.compositionUpdatePolicy!.default,
    ).toBe('Manual');
    expect(props(compositeCrd(xrd(schema()), asGiven), 'spec').properties!.compositionUpdatePolicy!.default).toBeUndefined();
  });

  it('has exactly the composite spec props of schemas.go v1.20.11 (no environmentConfigRefs)', () => {
    expect(Object.keys(compositeResourceSpecProps()).sort()).toEqual(Object.keys(expectedCompositeSpecProps).sort());
    expect(compositeResourceSpecProps()).toEqual(expectedCompositeSpecProps);
    expect(compositeResourceStatusProps()).toEqual(expectedStatusProps);
  });

  it('keeps the XRD categories, printer columns, deprecation, conversion and serves every version; storage = referenceable', () => {
    const x = xrd(schema(), {
      names: { ...names, categories: ['crossplane'] },
      conversion: { strategy: 'None' },
    });
    x.spec.versions = [
      {
        name: 'v1alpha1',
        served: true,
        referenceable: false,
        deprecated: true,
        deprecationWarning: 'use v1',
        schema: { openAPIV3Schema: schema() },
      },
      { ...x.spec.versions[0]!, additionalPrinterColumns: [{ name: 'ENGINE', type: 'string', jsonPath: '.spec.engineVersion' }] },
    ];
    const got = compositeCrd(x);
    expect(got.spec.names.categories).toEqual(['crossplane', 'composite']);
    expect(got.spec.conversion).toEqual({ strategy: 'None' });
    expect(got.spec.versions.map((v) => [v.name, v.served, v.storage, v.deprecated, v.deprecationWarning])).toEqual([
      ['v1alpha1', true, false, true, 'use v1'],
      ['v1', true, true, undefined, undefined],
    ]);
    expect(got.spec.versions[1]!.additionalPrinterColumns!.map((c) => c.name)).toEqual(['ENGINE', ...compositeColumns.map((c) => c.name)]);
    expect(got.spec.versions[1]!.subresources).toEqual({ status: {} });
  });

  it('lets Crossplane props win over XRD props of the same name, and drops what JSONSchemaProps cannot hold', () => {
    const s = schema() as Record<string, any>;
    s.properties.spec.properties.compositionRef = { type: 'string' };
    s.properties.spec.properties.storageGB['x-unknown'] = 1;
    s.properties.spec.properties.storageGB.nullable = false;
    s.properties.spec.anyOf = [{ required: ['storageGB'] }]; // not copied by genCrdVersion
    s.properties.status['x-kubernetes-preserve-unknown-fields'] = true; // not copied either
    const got = compositeCrd(s && xrd(s));
    expect(props(got, 'spec').properties!.compositionRef).toEqual(expectedCompositeSpecProps.compositionRef);
    expect(props(got, 'spec').properties!.storageGB).toEqual({ type: 'integer', description: 'Pretend this is useful.' });
    expect(props(got, 'spec').anyOf).toBeUndefined();
    expect(props(got, 'status')['x-kubernetes-preserve-unknown-fields']).toBeUndefined();
  });

  it('fails like Go on a schema it cannot unmarshal', () => {
    const s = schema() as Record<string, any>;
    s.properties.spec.properties.storageGB.maxLength = 'ten';
    expect(() => compositeCrd(xrd(s))).toThrow(
      /cannot generate CRD for "Composite Resource" "coolcomposites.example.org": cannot parse validation schema/,
    );
  });
});

describe('validateClaimNames, crd_test.go TestValidateClaimNames', () => {
  const spec = (c: object, n: object) =>
    ({ metadata: { name: 'x' }, spec: { group, versions: [], claimNames: c, names: n } }) as unknown as XrdObject;
  const a = { kind: 'a', listKind: 'a', singular: 'a', plural: 'a' };
  it.each([
    ['MissingClaimNames', { metadata: { name: 'x' }, spec: { group, names, versions: [] } } as XrdObject, 'missing names'],
    ['KindConflict', spec(a, { kind: 'a', listKind: 'b', singular: 'b', plural: 'b' }), '"a" conflicts with composite resource name'],
    ['ListKindConflict', spec(a, { kind: 'b', listKind: 'a', singular: 'b', plural: 'b' }), '"a" conflicts with composite resource name'],
    ['SingularConflict', spec(a, { kind: 'b', listKind: 'b', singular: 'a', plural: 'b' }), '"a" conflicts with composite resource name'],
    [
      'PluralConflict',
      spec(a, { kind: 'b', listKind: 'b', singular: 'b', plural: 'a', categories: ['claim'] }),
      '"a" conflicts with composite resource name',
    ],
  ])('%s', (_, d, want) => {
    expect(validateClaimNames(d)).toBe(want);
  });

  it('claimCrd fails with the wrapped error', () => {
    expect(() => claimCrd(xrd(schema()))).toThrow('invalid resource claim names: missing names');
    expect(() => claimCrd(xrd(schema(), { claimNames: { ...claimNames, kind: names.kind } }))).toThrow(
      'invalid resource claim names: "CoolComposite" conflicts with composite resource name',
    );
    expect(() => claimCrd(xrd(schema(), { claimNames: { kind: 'Other', plural: 'coolcomposites' } }))).toThrow(
      'invalid resource claim names: "coolcomposites" conflicts with composite resource name',
    );
  });

  it('ignores empty singular and listKind', () => {
    const x = xrd(schema(), { names: { kind: 'A', plural: 'as' }, claimNames: { kind: 'B', plural: 'bs' } });
    expect(validateClaimNames(x)).toBeUndefined();
  });
});

describe('claimCrd (ForCompositeResourceClaim), crd_test.go TestForCompositeResourceClaim', () => {
  /** The claim test's schema: the composite one without someField/someOtherField/oneOf and with its own description. */
  const claimSchema = () => {
    const s = schema() as Record<string, any>;
    delete s.required;
    delete s.properties.spec.properties.someField;
    delete s.properties.spec.properties.someOtherField;
    delete s.properties.spec.oneOf;
    s.properties.status = {
      properties: { phase: { type: 'string' } },
      'x-kubernetes-validations': [{ message: 'Phase is required once set', rule: '!has(oldSelf.phase) || has(self.phase)' }],
      type: 'object',
      description: 'Status of the resource.',
    };
    s.description = 'Description of the resource.';
    return s;
  };
  const expectedClaimSpecProps = (): Record<string, JSONSchemaProps> => {
    const p: Record<string, JSONSchemaProps> = { ...expectedCompositeSpecProps };
    delete p.claimRef;
    delete p.resourceRefs;
    p.compositeDeletePolicy = { type: 'string', enum: ['Background', 'Foreground'] };
    p.resourceRef = {
      type: 'object',
      required: ['apiVersion', 'kind', 'name'],
      properties: { apiVersion: { type: 'string' }, kind: { type: 'string' }, name: { type: 'string' } },
    };
    p.writeConnectionSecretToRef = { type: 'object', required: ['name'], properties: { name: { type: 'string' } } };
    return p;
  };
  const expectedClaim = (): Crd => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'coolclaims.example.org', labels },
    spec: {
      group,
      names: { ...claimNames, categories: ['claim'] },
      scope: 'Namespaced',
      versions: [
        {
          name: 'v1',
          served: true,
          storage: true,
          subresources: { status: {} },
          additionalPrinterColumns: claimColumns,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              description: 'Description of the resource.',
              required: ['spec'],
              properties: {
                apiVersion: { type: 'string' },
                kind: { type: 'string' },
                metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 63 } } },
                spec: {
                  type: 'object',
                  required: ['storageGB', 'engineVersion'],
                  description: 'Specification of the resource.',
                  properties: {
                    storageGB: { type: 'integer', description: 'Pretend this is useful.' },
                    engineVersion: { type: 'string', enum: ['5.6', '5.7'] },
                    ...expectedClaimSpecProps(),
                  },
                  'x-kubernetes-validations': [
                    { message: 'Cannot change engine version', rule: 'self.engineVersion == oldSelf.engineVersion' },
                  ],
                },
                status: {
                  type: 'object',
                  description: 'Status of the resource.',
                  properties: { phase: { type: 'string' }, ...expectedStatusProps },
                  'x-kubernetes-validations': [{ message: 'Phase is required once set', rule: '!has(oldSelf.phase) || has(self.phase)' }],
                },
              },
            },
          },
        },
      ],
    },
  });

  it("CompositeDeletionPolicyUnspecified: no default on the claim's spec.compositeDeletePolicy", () => {
    expect(claimCrd(xrd(claimSchema(), { claimNames }), asGiven)).toEqual(expectedClaim());
  });

  it("CompositeDeletionPolicySetToDefault: the XRD default becomes the claim's spec.compositeDeletePolicy default", () => {
    const got = claimCrd(xrd(claimSchema(), { claimNames, defaultCompositeDeletePolicy: 'Background' }), asGiven);
    const want = expectedClaim();
    props(want, 'spec').properties!.compositeDeletePolicy!.default = 'Background';
    expect(got).toEqual(want);
  });

  it('Foreground from the XRD, and Background from API server defaulting when the XRD says nothing', () => {
    expect(
      props(claimCrd(xrd(claimSchema(), { claimNames, defaultCompositeDeletePolicy: 'Foreground' })), 'spec').properties!
        .compositeDeletePolicy!.default,
    ).toBe('Foreground');
    expect(props(claimCrd(xrd(claimSchema(), { claimNames })), 'spec').properties!.compositeDeletePolicy!.default).toBe('Background');
    // The claim does not get the composite's update policy default: Crossplane only defaults it on the composite.
    expect(props(claimCrd(xrd(claimSchema(), { claimNames })), 'spec').properties!.compositionUpdatePolicy!.default).toBeUndefined();
  });

  it('TestForCompositeResourceClaimEmptyXrd: an empty schema still gets every Crossplane prop', () => {
    const got = claimCrd(xrd({}, { claimNames }), asGiven);
    expect(root(got).description).toBeUndefined();
    expect(props(got, 'spec')).toEqual({ type: 'object', properties: expectedClaimSpecProps() });
    expect(props(got, 'status')).toEqual({ type: 'object', properties: expectedStatusProps });
    expect(compositeResourceClaimSpecProps()).toEqual(expectedClaimSpecProps());
  });

  it('the error names the claim', () => {
    expect(() => claimCrd(xrd(null, { claimNames }))).toThrow(
      'cannot generate CRD for "Composite Resource Claim" "coolcomposites.example.org"',
    );
  });
});

describe('setCrdMetadata, crd_test.go TestSetCrdMetadata', () => {
  const crd = (): Crd => ({
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'test' },
    spec: { group, names, scope: 'Cluster', versions: [] },
  });
  const x = (meta: Partial<XrdObject['metadata']>, specMeta?: XrdObject['spec']['metadata']): XrdObject => ({
    metadata: { name: 'test', ...meta },
    spec: { group, names, versions: [], ...(specMeta ? { metadata: specMeta } : {}) },
  });
  it.each([
    [
      'SetAnnotations',
      x(
        { annotations: { 'example.com/some-xrd-annotation': 'not-propagated' } },
        { annotations: { 'cert-manager.io/inject-ca-from': 'example1-ns/webhook1-certificate' } },
      ),
      { name: 'test', annotations: { 'cert-manager.io/inject-ca-from': 'example1-ns/webhook1-certificate' } },
    ],
    ['SetLabelsFromXRDSpec', x({}, { labels: { a: 'value1', b: 'value2' } }), { name: 'test', labels: { a: 'value1', b: 'value2' } }],
    [
      'AppendLabelsFromXRDSpec',
      x({ labels: { x1: 'value1', x2: 'value2' } }, { labels: { c1: 'value3', c2: 'value4' } }),
      { name: 'test', labels: { x1: 'value1', x2: 'value2', c1: 'value3', c2: 'value4' } },
    ],
    [
      'SetLabelsAndAnnotations',
      x({ annotations: { n: 'not-propagated' }, labels: { x1: 'value1' } }, { annotations: { a1: 'value1' }, labels: { c1: 'value3' } }),
      { name: 'test', annotations: { a1: 'value1' }, labels: { x1: 'value1', c1: 'value3' } },
    ],
    ['NoLabelsAndAnnotations', x({}), { name: 'test' }],
  ])('%s', (_, xr, want) => {
    expect(setCrdMetadata(crd(), xr).metadata).toEqual(want);
  });
});

describe('crdsForXrd, isEstablished, toJSONSchemaProps', () => {
  it('returns the composite, and the claim only when the XRD has claim names', () => {
    expect(crdsForXrd(xrd(schema())).map((c) => c.metadata.name)).toEqual(['coolcomposites.example.org']);
    expect(crdsForXrd(xrd(schema(), { claimNames })).map((c) => [c.metadata.name, c.spec.scope])).toEqual([
      ['coolcomposites.example.org', 'Cluster'],
      ['coolclaims.example.org', 'Namespaced'],
    ]);
  });

  it('does not change its input', () => {
    const x = xrd(schema(), { claimNames });
    const before = structuredClone(x);
    crdsForXrd(x);
    expect(x).toEqual(before);
  });

  it('IsEstablished', () => {
    expect(isEstablished({ conditions: [{ type: 'Established', status: 'True' }] })).toBe(true);
    expect(isEstablished({})).toBe(false);
  });

  it('keeps *bool false and every structural keyword, drops empty omitempty fields', () => {
    expect(
      toJSONSchemaProps({
        type: 'object',
        description: '',
        required: [],
        properties: { a: { type: 'string', 'x-kubernetes-int-or-string': false, nullable: true, pattern: '^a' } },
        additionalProperties: false,
        'x-kubernetes-preserve-unknown-fields': false,
        'x-kubernetes-validations': [{ rule: 'true', message: 'm', optionalOldSelf: false }],
        madeUp: 1,
      }),
    ).toEqual({
      type: 'object',
      properties: { a: { type: 'string', nullable: true, pattern: '^a' } },
      additionalProperties: false,
      'x-kubernetes-preserve-unknown-fields': false,
      'x-kubernetes-validations': [{ rule: 'true', message: 'm', optionalOldSelf: false }],
    });
  });
});
