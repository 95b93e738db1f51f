/**
 * APIServiceExports follow their CRD and template: an export whose spec is not what the CRD and the offering template
 * derive (derive-export.ts) — because either changed, or because someone edited the export — is put back; it is
 * deleted when the CRD is deleted. The export's own spec is never an input: its name (`<plural>.<group>`, chosen by
 * the backend) finds the CRD and template, and the version its request asked for (an annotation only the backend
 * writes) the template of that version. Without a template the export is left as it is (the consumer keeps what
 * it bound; new binds stop), and RBAC never follows an export's spec anyway (controllers/grants.ts).
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import { causeOf, type ObjectRef, type ReconcileContext, type ReconcileResult } from '../../controller';
import { Annotations, EXPORT_CONVERSION_ANNOTATION, type APIServiceExport } from '../../exports/bind-api';
import { DeriveError, deriveExport } from '../derive-export';
import type { Exportable } from '../exportable';
import type { ConsumerScope } from '../consumer-access';
import { BackendAnnotations } from '../labels';

export interface ExportDeps {
  readonly consumerScope: ConsumerScope;
  /** The export from the cache. */
  getExport(ref: ObjectRef): APIServiceExport | undefined;
  /** CRD `<plural>.<group>` from the cache. */
  getCrd(name: string): V1CustomResourceDefinition | undefined;
  /**
   * The template and CRD offering an API, in `version` if given (cluster scope: an export made earlier stays whatever
   * the scope).
   */
  exportable(group: string, resource: string, version?: string): Promise<Exportable | undefined>;
  /** Deletes the export (gone already is fine). */
  deleteExport(ref: ObjectRef): Promise<void>;
  /** Replaces the export (its status is its own subresource and stays); a conflict throws and is retried. */
  replaceExport(e: APIServiceExport): Promise<void>;
}

/**
 * Whether the live `have` holds everything of `want`: equal values, arrays of the same length element by element;
 * keys only `have` has are the API server's defaults and pass. (A claim added, removed or changed does not pass.)
 */
export function covers(want: unknown, have: unknown): boolean {
  if (Array.isArray(want)) return Array.isArray(have) && have.length === want.length && want.every((w, i) => covers(w, have[i]));
  if (want && typeof want === 'object') {
    if (!have || typeof have !== 'object' || Array.isArray(have)) return false;
    return Object.entries(want).every(([k, v]) => covers(v, (have as Record<string, unknown>)[k]));
  }
  return want === have;
}

export async function reconcileExport(d: ExportDeps, ref: ObjectRef, ctx: Pick<ReconcileContext, 'log'>): Promise<ReconcileResult> {
  const exp = d.getExport(ref);
  if (!exp || exp.metadata.deletionTimestamp || !ref.namespace) return;
  const crd = d.getCrd(ref.name);
  if (!crd) {
    await d.deleteExport(ref);
    ctx.log.info('deleted the export: its CRD is gone');
    return;
  }
  const dot = ref.name.indexOf('.');
  // The version its request asked for stays: an app cluster on a newer version is not moved back to the default.
  const version = exp.metadata.annotations?.[BackendAnnotations.exportVersion];
  const found = dot > 0 ? await d.exportable(ref.name.slice(dot + 1), ref.name.slice(0, dot), version) : undefined;
  if (!found) return; // no template (for its version): left as it is
  let next: APIServiceExport;
  try {
    next = deriveExport(crd, found.template, ref.namespace, d.consumerScope, found.version);
  } catch (e) {
    if (causeOf(e, DeriveError)) {
      ctx.log.error({ err: e }, 'cannot re-derive the export; it stays as it is');
      return;
    }
    throw e;
  }
  const hash = next.metadata.annotations![Annotations.sourceSpecHash]!;
  if (
    exp.metadata.annotations?.[Annotations.sourceSpecHash] === hash &&
    covers(next.spec, exp.spec) &&
    (exp.spec.permissionClaims?.length ?? 0) === (next.spec.permissionClaims?.length ?? 0)
  )
    return;
  // A replace, not an apply: fields another manager added (a tampered claim) must go too.
  await d.replaceExport({
    apiVersion: exp.apiVersion,
    kind: exp.kind,
    metadata: { ...exp.metadata, annotations: reDerivedAnnotations(exp, next) },
    spec: next.spec,
  });
  ctx.log.info('re-derived the export from its CRD and template');
  return;
}

/** The export's annotations with what derivation decides (its hash, the conversion) taken from `next`. */
function reDerivedAnnotations(exp: APIServiceExport, next: APIServiceExport): Record<string, string> {
  const out = { ...exp.metadata.annotations };
  delete out[EXPORT_CONVERSION_ANNOTATION];
  for (const k of [Annotations.sourceSpecHash, EXPORT_CONVERSION_ANNOTATION]) {
    const v = next.metadata.annotations?.[k];
    if (v !== undefined) out[k] = v;
  }
  return out;
}
