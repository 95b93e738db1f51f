/**
 * APIServiceExport → the app cluster's CRD: applied from the export under the binding's name and owned by the
 * binding (schema/schema.ts decides), then awaited until served. Says `SchemaInSync` and, once served, which
 * resource the syncer moves.
 */
import type { ReconcileContext } from '../../controller';
import {
  APIServiceBindingConditions as C,
  type APIServiceBinding,
  type APIServiceExport,
  type ConditionInput,
} from '../../exports/bind-api';
import type { BindingReason } from '../../lib/binding-reasons';
import type { BindingCondition } from './binding.conditions';
import type { ResourceRef } from '../kube/objects';
import { crdEstablished, schemaDecision } from '../schema/schema';
import type { BindingDeps } from './binding.deps';

export interface CrdStep {
  readonly condition: BindingCondition;
  /** The resource to sync, once the CRD is served. */
  readonly resource?: ResourceRef;
  readonly statusSubresource: boolean;
  /** Whether its status has conditions (a claim's): the konnector then names what holds it in its Ready condition. */
  readonly statusConditions: boolean;
}

/** The version the konnector syncs: the served storage version, else the first served one. */
const servedVersion = (exp: APIServiceExport) =>
  exp.spec.versions.find((v) => v.served && v.storage) ?? exp.spec.versions.find((v) => v.served);

/** The resource an export describes, in the version the konnector syncs. */
export function resourceOf(exp: APIServiceExport): ResourceRef | undefined {
  const v = servedVersion(exp);
  return v && { group: exp.spec.group, version: v.name, resource: exp.spec.names.plural, kind: exp.spec.names.kind, namespaced: true };
}

const schema = (status: ConditionInput['status'], reason: BindingReason, message?: string): CrdStep => ({
  condition: { type: C.SchemaInSync, status, reason, ...(message ? { message } : {}) },
  statusSubresource: false,
  statusConditions: false,
});

/**
 * While the binding is being deleted (`removing`) the CRD is never applied: the cache may still miss a CRD the
 * deletion just removed, and applying it would make it again and strand it once the binding is gone.
 */
export async function syncCrd(
  d: Pick<BindingDeps, 'getCrd' | 'applyCrd'>,
  b: APIServiceBinding,
  exp: APIServiceExport | undefined,
  providerNamespace: string,
  removing: boolean,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<CrdStep> {
  const name = b.metadata.name!;
  if (!exp)
    return schema(
      'False',
      'ExportNotFound',
      `no APIServiceExport ${name} in provider namespace ${providerNamespace}: the provider has not exported this API to this cluster (run kubectl bind for it)`,
    );
  const decision = schemaDecision(exp, b, d.getCrd(name));
  if (decision.action === 'refuse') return schema('False', decision.reason, decision.message);
  if (decision.action === 'apply') {
    if (removing) return schema('Unknown', 'CustomResourceDefinitionDeleting', 'the binding is being deleted: its CRD is not made again');
    await d.applyCrd(decision.crd);
    ctx.log.info({ crd: decision.crd.metadata.name }, 'applied the CRD from the APIServiceExport');
    return schema('Unknown', 'Establishing', 'waiting for the CRD to be established');
  }
  if (!crdEstablished(d.getCrd(name))) return schema('Unknown', 'Establishing', 'waiting for the CRD to be established');
  const version = servedVersion(exp);
  if (!version) return schema('False', 'NoServedVersion', `APIServiceExport ${exp.metadata.name} serves no version`);
  return {
    condition: { type: C.SchemaInSync, status: 'True', reason: 'SchemaInSync' },
    resource: resourceOf(exp),
    statusSubresource: version.subresources?.status !== undefined,
    statusConditions: hasStatusConditions(version.schema.openAPIV3Schema),
  };
}

/** Whether a version's schema gives its status a list of conditions (a claim's, as Crossplane writes the XRD). */
function hasStatusConditions(schema: unknown): boolean {
  type Node = { properties?: Record<string, Node>; type?: string } | undefined;
  return (schema as Node)?.properties?.status?.properties?.conditions?.type === 'array';
}
