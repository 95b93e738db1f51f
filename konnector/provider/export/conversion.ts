/**
 * An app cluster bound to a version the control plane does not store (issue 36): the export names the storage
 * version and the API's neighbour conversions (EXPORT_CONVERSION_ANNOTATION), and the syncer reads and writes the
 * control plane in the storage version, converting spec up and status down itself with the conversions synth wrote
 * once for the control plane's webhook too. Each write then costs the control plane no webhook call, and its API
 * server validates what the konnector writes against the schema it stores.
 */
import { checkConversion, convert, type VersionConversion } from '../../../lib/conversion';
import { EXPORT_CONVERSION_ANNOTATION, type APIServiceExport } from '../../../exports/bind-api';
import { Names } from '../../../lib/names';
import { apiVersionOf, type Obj, type ResourceRef } from '../../kube/objects';

/** The control plane's side of a binding whose app cluster is on another version. */
export interface Upstream {
  /** The version the control plane stores. */
  readonly version: string;
  /** The API's neighbour conversions, oldest first. */
  readonly conversions: readonly VersionConversion[];
}

/**
 * The upstream side `exp` names for an app cluster on `version`: undefined when the export carries no conversion or
 * the control plane stores `version` itself. Throws, naming the export and the problem, on an annotation it cannot use.
 */
export function upstreamVersionOf(exp: APIServiceExport, version: string): Upstream | undefined {
  const text = exp.metadata.annotations?.[EXPORT_CONVERSION_ANNOTATION];
  if (text === undefined) return undefined;
  const fail = (problem: string, cause?: unknown): never => {
    throw new Error(
      `APIServiceExport ${exp.metadata.namespace}/${exp.metadata.name}: annotation ${EXPORT_CONVERSION_ANNOTATION} ${problem}`,
      { cause },
    );
  };
  let parsed: { storageVersion?: unknown; conversions?: unknown };
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch (e) {
    return fail(`is not JSON: ${(e as Error).message}`, e);
  }
  const storage = parsed?.storageVersion;
  if (typeof storage !== 'string' || !Names.isApiVersion(storage)) return fail('names no storageVersion');
  if (!Array.isArray(parsed.conversions)) return fail('has no list of conversions');
  let conversions: VersionConversion[];
  try {
    conversions = (parsed.conversions as VersionConversion[]).map(checkConversion);
  } catch (e) {
    return fail(`holds a conversion that cannot be used: ${(e as Error).message}`, e);
  }
  const chain = conversions.length ? [conversions[0]!.older, ...conversions.map((c) => c.newer)] : [];
  if (conversions.some((c, i) => i > 0 && c.older !== conversions[i - 1]!.newer))
    return fail(`holds conversions that do not follow each other (${conversions.map((c) => `${c.older}→${c.newer}`).join(', ')})`);
  for (const v of [version, storage])
    if (!chain.includes(v)) return fail(`does not convert ${v} (its versions: ${chain.join(', ') || 'none'})`);
  return storage === version ? undefined : { version: storage, conversions };
}

/** The syncer's two sides of a resource: what it reads and writes upstream, and how objects cross. */
export interface Sides {
  /** The resource on the control plane: the app cluster's, in the storage version when that differs. */
  readonly provider: ResourceRef;
  /** An app-cluster object as the control plane stores it. */
  toProvider(o: Obj): Obj;
  /** A control-plane object as the app cluster's version has it. */
  toConsumer(o: Obj): Obj;
}

export function sidesOf(resource: ResourceRef, upstream: Upstream | undefined): Sides {
  if (!upstream) return { provider: resource, toProvider: (o) => o, toConsumer: (o) => o };
  const apiVersion = (v: string) => apiVersionOf({ group: resource.group, version: v });
  // A conversion moves fields of spec and status and keeps kind and metadata: the object stays an Obj.
  const to = (version: string) => (o: Obj) => convert(o, version, upstream.conversions, apiVersion) as Obj;
  return { provider: { ...resource, version: upstream.version }, toProvider: to(upstream.version), toConsumer: to(resource.version) };
}
