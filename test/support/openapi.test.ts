import { describe, expect, it } from 'vitest';
import { claimValidator, fieldPath, schemaValidator, validatorFor } from './openapi';
import { claimCrd } from '../../lib/xcrd';

/** A small CRD with the features the validator has to get right. */
const crd = {
  apiVersion: 'apiextensions.k8s.io/v1',
  kind: 'CustomResourceDefinition',
  metadata: { name: 'widgets.example.org' },
  spec: {
    group: 'example.org',
    names: { kind: 'Widget', plural: 'widgets' },
    scope: 'Namespaced',
    versions: [
      {
        name: 'v1alpha1',
        served: true,
        storage: false,
        schema: { openAPIV3Schema: { type: 'object', properties: { spec: { type: 'object', properties: { old: { type: 'string' } } } } } },
      },
      {
        name: 'v1',
        served: true,
        storage: true,
        schema: {
          openAPIV3Schema: {
            type: 'object',
            required: ['spec'],
            properties: {
              apiVersion: { type: 'string' },
              kind: { type: 'string' },
              metadata: { type: 'object', properties: { name: { type: 'string', maxLength: 10 } } },
              spec: {
                type: 'object',
                required: ['size'],
                'x-kubernetes-validations': [{ rule: 'self.size != "huge"', message: 'never evaluated here' }],
                properties: {
                  size: { type: 'string', enum: ['small', 'big'] },
                  replicas: { type: 'integer', minimum: 1, maximum: 5 },
                  port: { 'x-kubernetes-int-or-string': true },
                  note: { type: 'string', nullable: true },
                  mode: { type: 'string', default: 'fast' },
                  tags: { type: 'array', items: { type: 'string' }, 'x-kubernetes-list-type': 'set' },
                  env: {
                    type: 'array',
                    'x-kubernetes-list-type': 'map',
                    'x-kubernetes-list-map-keys': ['name'],
                    items: { type: 'object', required: ['name'], properties: { name: { type: 'string' }, value: { type: 'string' } } },
                  },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                  values: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
                  template: { type: 'object', 'x-kubernetes-embedded-resource': true, 'x-kubernetes-preserve-unknown-fields': true },
                  nested: { type: 'object', properties: { a: { type: 'boolean' } }, anyOf: [{ required: ['a'] }] },
                  empty: { type: 'object' },
                  created: { type: 'string', format: 'date-time' },
                },
              },
              status: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true },
            },
          },
        },
      },
    ],
  },
};

const validate = validatorFor(crd);
const widget = (spec: Record<string, unknown>, metadata: Record<string, unknown> = { name: 'w', namespace: 'default' }) => ({
  apiVersion: 'example.org/v1',
  kind: 'Widget',
  metadata,
  spec,
});

describe('validatorFor', () => {
  it('accepts a valid object, with free-form metadata, preserved unknown fields and an embedded resource', () => {
    const r = validate(
      widget(
        {
          size: 'small',
          replicas: 3,
          port: 'http',
          note: null,
          tags: ['a', 'b'],
          env: [{ name: 'A', value: '1' }, { name: 'B' }],
          labels: { x: 'y' },
          values: { anything: { goes: [1, 2] } },
          template: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'x', labels: { a: 'b' } }, data: { k: 'v' } },
          nested: { a: true },
          empty: {},
          created: '2024-01-02T03:04:05Z',
        },
        { name: 'w', namespace: 'default', labels: { app: 'x' }, annotations: { a: 'b' }, uid: 'u', resourceVersion: '1' },
      ),
    );
    expect(r).toEqual({ valid: true, errors: [] });
  });

  it('reports an unknown field, also in nested objects and objects without properties, but not under preserve-unknown', () => {
    const r = validate(widget({ size: 'small', colour: 'red', nested: { a: true, b: 1 }, empty: { x: 1 }, values: { fine: 1 } }));
    expect(r.valid).toBe(false);
    expect(r.errors).toEqual([
      'spec.colour: unknown field "spec.colour"',
      'spec.nested.b: unknown field "spec.nested.b"',
      'spec.empty.x: unknown field "spec.empty.x"',
    ]);
    expect(validate({ ...widget({ size: 'small' }), extra: 1 }).errors).toEqual(['extra: unknown field "extra"']);
  });

  it('reports a wrong type', () => {
    expect(validate(widget({ size: 'small', replicas: 'three' })).errors).toEqual([
      'spec.replicas: Invalid value: "string": spec.replicas in body must be of type integer: "string"',
    ]);
    expect(validate(widget({ size: 'small', replicas: 1.5 })).errors[0]).toContain('must be of type integer');
    expect(validate(widget({ size: 'small', labels: { a: 1 } })).errors).toEqual([
      'spec.labels.a: Invalid value: "integer": spec.labels.a in body must be of type string: "integer"',
    ]);
  });

  it('reports a bad enum value', () => {
    expect(validate(widget({ size: 'huge' })).errors).toEqual(['spec.size: Unsupported value: "huge": supported values: "small", "big"']);
  });

  it('reports a missing required field', () => {
    expect(validate(widget({})).errors).toEqual(['spec.size: Required value']);
    expect(validate({ apiVersion: 'example.org/v1', kind: 'Widget', metadata: { name: 'w' } }).errors).toEqual(['spec: Required value']);
    expect(validate(widget({ size: 'small', env: [{ value: 'x' }] })).errors).toEqual(['spec.env[0].name: Required value']);
  });

  it('accepts integers and strings for x-kubernetes-int-or-string, nothing else', () => {
    expect(validate(widget({ size: 'small', port: 8080 })).valid).toBe(true);
    expect(validate(widget({ size: 'small', port: '8080' })).valid).toBe(true);
    expect(validate(widget({ size: 'small', port: true })).errors).toEqual([
      'spec.port: Invalid value: "boolean": spec.port in body must be of type integer,string: "boolean"',
    ]);
    expect(validate(widget({ size: 'small', port: 1.5 })).valid).toBe(false);
  });

  it('checks bounds, list types, embedded resources, formats, metadata of the schema and anyOf', () => {
    expect(validate(widget({ size: 'small', replicas: 0 })).errors).toEqual([
      'spec.replicas: Invalid value: 0: spec.replicas in body should be greater than or equal to 1',
    ]);
    expect(validate(widget({ size: 'small', tags: ['a', 'a'] })).errors[0]).toMatch(/^spec\.tags\[\d\]: Duplicate value: "a"$/);
    expect(validate(widget({ size: 'small', env: [{ name: 'A' }, { name: 'A', value: 'x' }] })).errors).toEqual([
      'spec.env: Duplicate value: ["A"]',
    ]);
    expect(validate(widget({ size: 'small', template: { metadata: {} } })).errors).toEqual([
      'spec.template.apiVersion: Required value',
      'spec.template.kind: Required value',
    ]);
    expect(validate(widget({ size: 'small', created: 'yesterday' })).errors[0]).toContain('spec.created: Invalid value: "yesterday"');
    expect(validate(widget({ size: 'small' }, { name: 'much-too-long-a-name' })).errors).toEqual([
      'metadata.name: Too long: may not be more than 10 bytes',
    ]);
    expect(validate(widget({ size: 'small' }, { name: 'w', labels: { a: 1 } })).valid).toBe(false);
    expect(validate(widget({ size: 'small', nested: {} })).errors).toEqual([
      'spec.nested: Invalid value: {}: spec.nested in body must validate at least one schema (anyOf)',
    ]);
  });

  it('prunes a null for a non-nullable field (or applies its default), keeps null where nullable; applies defaults', () => {
    expect(validate(widget({ size: 'small', replicas: null, mode: null })).valid).toBe(true);
    expect(validate(widget({ size: 'small', tags: [null] })).valid).toBe(false);
    const obj = widget({ size: 'small' });
    validate(obj);
    expect(obj.spec).toEqual({ size: 'small' }); // the input is not changed
  });

  it('does not evaluate CEL rules', () => {
    expect(validate(widget({ size: 'small' })).valid).toBe(true);
  });

  it('picks the storage version by default, or the one asked for', () => {
    expect(validatorFor(crd, 'v1alpha1')(widget({ old: 'x' })).valid).toBe(true);
    expect(validate(widget({ old: 'x' })).valid).toBe(false);
    expect(() => validatorFor(crd, 'v2')).toThrow('CRD has no version v2; it has v1alpha1, v1');
  });

  it('validates a schema node without a resource root', () => {
    const v = schemaValidator({ type: 'object', properties: { a: { type: 'string' } } }, { root: false });
    expect(v({ a: 'x' }).valid).toBe(true);
    expect(v({ apiVersion: 'x' }).errors).toEqual(['apiVersion: unknown field "apiVersion"']);
  });

  it('formats field paths like Kubernetes', () => {
    expect(fieldPath('')).toBe('<root>');
    expect(fieldPath('/spec/items/0/name')).toBe('spec.items[0].name');
    expect(fieldPath('/metadata/labels', 'app.kubernetes.io/name')).toBe('metadata.labels["app.kubernetes.io/name"]');
  });
});

describe('with the converter: claims of an XRD', () => {
  const xrd = {
    apiVersion: 'apiextensions.crossplane.io/v1',
    kind: 'CompositeResourceDefinition',
    metadata: { name: 'xwidgets.example.org' },
    spec: {
      group: 'example.org',
      names: { kind: 'XWidget', plural: 'xwidgets' },
      claimNames: { kind: 'Widget', plural: 'widgets' },
      versions: [
        {
          name: 'v1',
          served: true,
          referenceable: true,
          schema: {
            openAPIV3Schema: {
              type: 'object',
              properties: { spec: { type: 'object', required: ['size'], properties: { size: { type: 'string', enum: ['small'] } } } },
            },
          },
        },
      ],
    },
  };

  it('accepts what Crossplane adds to the claim spec and rejects what it does not', () => {
    const v = claimValidator(xrd);
    const claim = (spec: object, name = 'w') => ({
      apiVersion: 'example.org/v1',
      kind: 'Widget',
      metadata: { name, namespace: 'd' },
      spec,
    });
    expect(
      v(
        claim({
          size: 'small',
          compositionRef: { name: 'x' },
          compositeDeletePolicy: 'Foreground',
          writeConnectionSecretToRef: { name: 's' },
        }),
      ).errors,
    ).toEqual([]);
    expect(v(claim({ size: 'small', claimRef: {} })).errors).toEqual(['spec.claimRef: unknown field "spec.claimRef"']);
    expect(v(claim({ size: 'small', compositeDeletePolicy: 'Later' })).errors).toEqual([
      'spec.compositeDeletePolicy: Unsupported value: "Later": supported values: "Background", "Foreground"',
    ]);
    expect(v(claim({ size: 'small' }, 'x'.repeat(64))).errors).toEqual(['metadata.name: Too long: may not be more than 63 bytes']);
    expect(validatorFor(claimCrd(xrd))(claim({ size: 'small', status: 1 })).valid).toBe(false);
  });
});
