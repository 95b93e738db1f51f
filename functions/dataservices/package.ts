/**
 * The Function package's objects: `crossplane.yaml` (meta.pkg.crossplane.io/v1 Function) and the input CRD built
 * from `inputSchema`, so the schema the function validates against is the one Crossplane and editors see.
 */
import { Function as FunctionMeta } from '../../imports/meta.pkg.crossplane.io';
import { crdManifest } from '../../lib/crd-manifest';
import { s, type JSONSchemaProps } from '../../lib/schema';
import { packageAnnotations } from '../../lib/version';
import { INPUT_GROUP, INPUT_KIND, INPUT_VERSION, inputSchema, SELECTION_KIND, selectionSchema } from '../../recipe';

export interface FunctionPackageOptions {
  /** @default function-dataservices */
  readonly name?: string;
  /** Crossplane version constraint. @default >=v1.17.1 (the function protocol fields it uses are stable since) */
  readonly crossplaneVersion?: string;
}

type Json = JSONSchemaProps & { 'x-kubernetes-validations'?: { rule: string; message?: string }[] };

/**
 * Drops CEL rules that read an untyped (preserve-unknown-fields) property: Kubernetes' CEL cannot see such a field
 * ("undefined field 'value'"), so the API server would refuse the whole CRD. `inputSchema`'s
 * `has(self.from) != has(self.value)` on fields[] is one; the function still enforces it (validate-input.ts).
 */
function celCompatible(schema: Json): Json {
  const out: Json = { ...schema };
  if (schema.properties)
    out.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, celCompatible(v as Json)]));
  if (schema.items) out.items = celCompatible(schema.items as Json);
  if (typeof schema.additionalProperties === 'object') out.additionalProperties = celCompatible(schema.additionalProperties as Json);
  const rules = schema['x-kubernetes-validations'];
  if (rules) {
    const untyped = new Set(
      Object.entries(schema.properties ?? {})
        .filter(([, v]) => !v.type)
        .map(([k]) => k),
    );
    const kept = rules.filter((r) => ![...r.rule.matchAll(/self\.(\w+)/g)].some((m) => untyped.has(m[1] as string)));
    if (kept.length) out['x-kubernetes-validations'] = kept;
    else delete out['x-kubernetes-validations'];
  }
  return out;
}

/**
 * An input CRD: `inputs.dataservices.fn.klutch.anynines.com` (kind Input, from `inputSchema`), or with `selection`
 * `selections.…` (kind Selection, the v2 target's step input), v1beta1.
 */
function inputCrd(o: { selection?: boolean } = {}): Record<string, unknown> {
  const json = celCompatible((o.selection ? selectionSchema : inputSchema).toJSON() as Json);
  // A CRD's root schema also lists metadata (which may not be constrained beyond its type).
  const root = s.raw({ ...json, properties: { ...(json.properties ?? {}), metadata: { type: 'object' } } });
  return crdManifest({
    group: INPUT_GROUP,
    kind: o.selection ? SELECTION_KIND : INPUT_KIND,
    scope: 'Namespaced',
    categories: ['crossplane'],
    versions: [{ name: INPUT_VERSION, schema: root }],
  });
}

/** `crossplane.yaml` then the input CRDs (Input, Selection): the package's objects, in package order. */
export function functionPackageObjects(o: FunctionPackageOptions = {}): Record<string, unknown>[] {
  return [
    FunctionMeta.manifest({
      metadata: {
        name: o.name ?? 'function-dataservices',
        annotations: packageAnnotations(
          'Composes Klutch data services (a9s, a8s and CloudNativePG backends) from a recipe in the step input.',
        ),
      },
      // No spec.capabilities: the pinned meta schema (Crossplane v1.20, schemas/crossplane-meta) has no such field
      // and a strict validator refuses it; Crossplane v2 takes a Function without capabilities as [composition].
      spec: { crossplane: { version: o.crossplaneVersion ?? '>=v1.17.1' } },
    }) as Record<string, unknown>,
    inputCrd(),
    inputCrd({ selection: true }),
  ];
}
