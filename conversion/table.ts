/**
 * What the conversion server converts: per multi-version API, the path the XRD's webhook names, the kinds (composite
 * and claim), each version's schema and the neighbour conversions. Synth writes it (`conversion/conversions.json`
 * of its output) from the catalog, the one source; the server reads it, so the server's image does not change with
 * the catalog.
 */
import { Ajv, type ValidateFunction } from 'ajv';
import type { Api, CrossplaneTarget } from '../apis/api';
import { conversionPath, type VersionConversion } from '../lib/conversion';
import { toJsonSchema } from '../lib/json-schema';
import type { JSONSchemaProps } from '../lib/schema';

const CONVERSION_TABLE_VERSION = 'klutch-kit.anynines.com/v1alpha1';

export interface ConvertedApi {
  /** `/convert/<XRD name>`. */
  readonly path: string;
  readonly group: string;
  /** The composite's kind and, with claims, the claim's: Crossplane gives both CRDs the XRD's webhook. */
  readonly kinds: readonly string[];
  /** Each version's `spec` and `status` schemas, oldest first. */
  readonly versions: readonly { readonly name: string; readonly spec: JSONSchemaProps; readonly status: JSONSchemaProps }[];
  readonly conversions: readonly VersionConversion[];
}

export interface ConversionTable {
  readonly apiVersion: typeof CONVERSION_TABLE_VERSION;
  readonly apis: readonly ConvertedApi[];
}

/** The table of the catalog's multi-version APIs (none: an empty table). */
export function conversionTable(apis: readonly Api[], target: CrossplaneTarget): ConversionTable {
  return {
    apiVersion: CONVERSION_TABLE_VERSION,
    apis: apis
      .filter((a) => a.versions.length > 1)
      .map((a) => ({
        path: conversionPath(`${a.compositePlural(target)}.${a.group}`),
        group: a.group,
        kinds: target === 'v1' ? [a.compositeKind(target), a.kind] : [a.kind],
        versions: a.versions.map((v) => ({ name: v.name, spec: v.spec.toJSON(), status: v.status.toJSON() })),
        conversions: a.conversions,
      })),
  };
}

/** Reads a table: a file that is not one names what is wrong. */
export function parseConversionTable(text: string, source: string): ConversionTable {
  let t: unknown;
  try {
    t = JSON.parse(text);
  } catch (e) {
    throw new Error(`${source}: not JSON (${(e as Error).message}); give the conversion/conversions.json synth wrote`);
  }
  const table = t as Partial<ConversionTable>;
  if (table?.apiVersion !== CONVERSION_TABLE_VERSION || !Array.isArray(table.apis))
    throw new Error(`${source}: not a conversion table of ${CONVERSION_TABLE_VERSION}; give the conversion/conversions.json synth wrote`);
  return table as ConversionTable;
}

/**
 * Checks a converted object's `spec` and `status` against its version's schemas, value by value: the fields the
 * schema declares must be valid; fields it does not know (Crossplane's own, on composites and claims) are left alone.
 * Needed because the API server validates a request in the version it is written in, and the conversion carries
 * values from an annotation the claim's author writes. Returns the first problem, or undefined.
 */
export function versionValidator(v: ConvertedApi['versions'][number]): (obj: Record<string, unknown>) => string | undefined {
  const ajv = new Ajv({ strict: false, allErrors: false, validateFormats: false });
  const compile = (s: JSONSchemaProps): ValidateFunction => ajv.compile(toJsonSchema(s, { root: false, value: true }));
  const parts = [
    ['spec', compile(v.spec)],
    ['status', compile(v.status)],
  ] as const;
  return (obj) => {
    for (const [field, validate] of parts) {
      if (obj[field] === undefined || validate(obj[field])) continue;
      const e = validate.errors?.[0];
      const at = `${field}${(e?.instancePath ?? '').replaceAll('/', '.')}`;
      return `${at} ${e?.message ?? 'is not valid'} in ${v.name}`;
    }
    return undefined;
  };
}
