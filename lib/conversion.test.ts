import { Ajv } from 'ajv';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { toJsonSchema } from './json-schema';
import { s, type JSONSchemaProps, type Schema } from './schema';
import { answerReview, checkConversion, convert, down, KEPT_ANNOTATION, up, type VersionConversion } from './conversion';

// Klutch's own shape change as two versions of one API: `spec.compositionRef` (Klutch 1.x) moves to
// `spec.crossplane.compositionRef` (Klutch on Crossplane v2), a field is retired and one is added with a default.
const ref = s.object({ name: s.string({ enum: ['a8s-postgresql', 'cnpg-postgresql'] }) }, { required: ['name'] });
const parameters = s.object({ replicas: s.integer({ minimum: 1, maximum: 5 }), version: s.string({ enum: ['14', '17'] }) });
const status = s.object({ state: s.string(), managed: s.object({ phase: s.string() }) });
const V1 = s.object({
  spec: s.object({ compositionRef: ref, parameters, legacyTier: s.string() }),
  status,
});
const V2 = s.object({
  spec: s.object({
    crossplane: s.object(
      { compositionRef: ref, compositionUpdatePolicy: s.string({ enum: ['Automatic', 'Manual'] }) },
      { minProperties: 1 },
    ),
    parameters,
    backupRetention: s.string({ default: '7d' }),
  }),
  status,
});
const CONVERSION: VersionConversion = checkConversion({
  older: 'v1',
  newer: 'v2',
  moved: [{ older: 'spec.compositionRef', newer: 'spec.crossplane.compositionRef' }],
  added: [{ newer: 'spec.crossplane.compositionUpdatePolicy' }, { newer: 'spec.backupRetention', default: '7d' }],
  removed: ['spec.legacyTier'],
});
const apiVersionOf = (v: string) => `anynines.com/${v}`;

/** Every valid value of a schema (objects with any subset of their optional fields; no empty object where it needs one). */
function arbitraryOf(p: JSONSchemaProps): fc.Arbitrary<unknown> {
  if (p.enum) return fc.constantFrom(...(p.enum as unknown[]));
  switch (p.type) {
    case 'object': {
      const props = Object.fromEntries(Object.entries(p.properties ?? {}).map(([k, v]) => [k, arbitraryOf(v)]));
      const rec = fc.record(props, { requiredKeys: (p.required ?? []) as string[] });
      return p.minProperties ? rec.filter((o) => Object.keys(o as object).length >= p.minProperties!) : rec;
    }
    case 'integer':
      return fc.integer({ min: p.minimum ?? -1000, max: p.maximum ?? 1000 });
    case 'boolean':
      return fc.boolean();
    default:
      return fc.string({ maxLength: 12 });
  }
}

/** What the API server stores of a v2 object: its defaults applied where their parent exists (structural defaulting). */
const defaulted = (o: Record<string, unknown>) => {
  const spec = o.spec as Record<string, unknown> | undefined;
  return spec && spec.backupRetention === undefined ? { ...o, spec: { ...spec, backupRetention: '7d' } } : o;
};

/** A whole object of a version: its spec and status, and annotations of its own beside any conversion's. */
const objectOf = (version: string, schema: Schema) =>
  fc
    .record(
      {
        body: arbitraryOf(schema.toJSON()),
        annotations: fc.dictionary(fc.constantFrom('team', 'owner', 'example.com/note'), fc.string({ maxLength: 8 }), { maxKeys: 2 }),
      },
      { requiredKeys: ['body', 'annotations'] },
    )
    .map(({ body, annotations }) => ({
      apiVersion: apiVersionOf(version),
      kind: 'PostgresqlInstance',
      metadata: { name: 'orders', namespace: 'team-a', ...(Object.keys(annotations).length ? { annotations } : {}) },
      ...(body as Record<string, unknown>),
    }));

const validator = (schema: Schema) => {
  const validate = new Ajv({ strict: false }).compile(toJsonSchema(schema.toJSON()));
  return (o: Record<string, unknown>) => {
    const { spec, status: st } = o;
    return validate({ ...(spec !== undefined ? { spec } : {}), ...(st !== undefined ? { status: st } : {}) })
      ? ''
      : JSON.stringify(validate.errors);
  };
};

describe('conversion between neighbouring versions', () => {
  const RUNS = 10_000;

  it('v1 → v2 → v1 gives every valid v1 object back, and v1 → v2 is a valid v2 object', () => {
    const valid = validator(V2);
    fc.assert(
      fc.property(objectOf('v1', V1), (o) => {
        const there = up(o, CONVERSION, apiVersionOf);
        expect(valid(there)).toBe('');
        expect(down(there, CONVERSION, apiVersionOf)).toEqual(o);
      }),
      { numRuns: RUNS },
    );
  });

  it('v2 → v1 → v2 gives every valid v2 object back, and v2 → v1 is a valid v1 object', () => {
    const valid = validator(V1);
    fc.assert(
      fc.property(objectOf('v2', V2).map(defaulted), (o) => {
        const there = down(o, CONVERSION, apiVersionOf);
        expect(valid(there)).toBe('');
        expect(up(there, CONVERSION, apiVersionOf)).toEqual(o);
      }),
      { numRuns: RUNS },
    );
  });

  it('keeps what the other version cannot hold in an annotation, and fills a new field with its default', () => {
    const v1 = {
      apiVersion: 'anynines.com/v1',
      kind: 'PostgresqlInstance',
      metadata: { name: 'orders' },
      spec: { compositionRef: { name: 'cnpg-postgresql' }, legacyTier: 'gold' },
    };
    const v2 = up(v1, CONVERSION, apiVersionOf);
    expect(v2).toEqual({
      apiVersion: 'anynines.com/v2',
      kind: 'PostgresqlInstance',
      metadata: { name: 'orders', annotations: { [KEPT_ANNOTATION]: '{"spec.legacyTier":"gold"}' } },
      spec: { crossplane: { compositionRef: { name: 'cnpg-postgresql' } }, backupRetention: '7d' },
    });
    // An app on v2 changes the new field; going down keeps it, and it comes back going up.
    const changed = { ...v2, spec: { ...(v2.spec as object), backupRetention: '30d' } };
    const back = down(changed, CONVERSION, apiVersionOf);
    expect(back.spec).toEqual({ compositionRef: { name: 'cnpg-postgresql' }, legacyTier: 'gold' });
    expect(JSON.parse((back.metadata as { annotations: Record<string, string> }).annotations[KEPT_ANNOTATION]!)).toEqual({
      'spec.backupRetention': '30d',
    });
    expect(up(back, CONVERSION, apiVersionOf).spec).toEqual(changed.spec);
  });

  it('chains neighbours: v1 → v3 and back through v2', () => {
    const next: VersionConversion = checkConversion({
      older: 'v2',
      newer: 'v3',
      moved: [{ older: 'spec.parameters', newer: 'spec.config' }],
    });
    const v1 = {
      apiVersion: 'anynines.com/v1',
      kind: 'K',
      metadata: { name: 'x' },
      spec: { parameters: { replicas: 3 }, legacyTier: 't' },
    };
    const v3 = convert(v1, 'v3', [CONVERSION, next], apiVersionOf);
    expect(v3.apiVersion).toBe('anynines.com/v3');
    expect(v3.spec).toEqual({ config: { replicas: 3 }, backupRetention: '7d' });
    expect(convert(v3, 'v1', [CONVERSION, next], apiVersionOf)).toEqual(v1);
    expect(() => convert(v1, 'v9', [CONVERSION, next], apiVersionOf)).toThrow(
      'cannot convert anynines.com/v1 to v9: the versions are v1, v2, v3',
    );
  });

  it('answers a ConversionReview as the API server asks it, and names the object it cannot convert', () => {
    const object = { apiVersion: 'anynines.com/v1', kind: 'PostgresqlInstance', metadata: { name: 'a', namespace: 'n' }, spec: {} };
    const ok = answerReview(
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u1', desiredAPIVersion: 'anynines.com/v2', objects: [object] },
      },
      'anynines.com',
      [CONVERSION],
    );
    expect(ok).toMatchObject({
      response: {
        uid: 'u1',
        result: { status: 'Success' },
        convertedObjects: [{ apiVersion: 'anynines.com/v2', spec: { backupRetention: '7d' } }],
      },
    });
    const bad = answerReview(
      {
        apiVersion: 'apiextensions.k8s.io/v1',
        kind: 'ConversionReview',
        request: { uid: 'u2', desiredAPIVersion: 'anynines.com/v2', objects: [{ ...object, apiVersion: 'anynines.com/v0' }] },
      },
      'anynines.com',
      [CONVERSION],
    );
    expect(bad).toMatchObject({
      response: {
        uid: 'u2',
        result: { status: 'Failure', message: expect.stringContaining('PostgresqlInstance n/a: cannot convert anynines.com/v0') },
      },
    });
  });

  it('refuses a conversion that names a field outside spec and status, a list index, or a field twice', () => {
    expect(() => checkConversion({ older: 'v1', newer: 'v2', removed: ['metadata.labels'] })).toThrow(
      'conversion v1 ⇄ v2: removed "metadata.labels" is not a field below spec or status',
    );
    expect(() => checkConversion({ older: 'v1', newer: 'v2', removed: ['spec.items[0]'] })).toThrow('without list indexes');
    expect(() => checkConversion({ older: 'v1', newer: 'v2', removed: ['spec.a', 'spec.a'] })).toThrow('"spec.a" is named twice');
  });
});
