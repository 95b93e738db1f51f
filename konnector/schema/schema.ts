/**
 * Schema sync: an APIServiceExport becomes a CRD in the app cluster, owned by the APIServiceBinding that bound it
 * (controller owner reference, as Klutch's konnector marks it). A CRD of that name that the binding does not own —
 * installed by hand, or by another binding — is never overwritten: the decision says why, and the binding shows it.
 */
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import type { APIServiceBinding, APIServiceExport } from '../../exports/bind-api';
import type { BindingHoldReason } from '../../lib/binding-reasons';
import { controllerOf, jsonSubset, ownerReference, type Obj } from '../kube/objects';

const CRD_API_VERSION = 'apiextensions.k8s.io/v1';

/**
 * Why the export cannot be applied under the binding's name, if it cannot: names come from the binding, never from a
 * field the provider chose. The binding `<plural>.<group>` names the export and the CRD; the export's own
 * `spec.group` and `spec.names.plural` must say the same, or the provider could make the konnector write (or take
 * over) another CRD than the one the binding looks after.
 */
export function exportMismatch(exp: APIServiceExport, binding: APIServiceBinding): string | undefined {
  const name = binding.metadata.name;
  const described = `${exp.spec.names?.plural}.${exp.spec.group}`;
  if (exp.metadata.name === name && described === name) return undefined;
  return `APIServiceExport ${exp.metadata.namespace}/${exp.metadata.name} describes ${described} (spec.names.plural "${exp.spec.names?.plural}", spec.group "${exp.spec.group}"), but APIServiceBinding ${binding.metadata.namespace}/${name} binds ${name}; the konnector applies nothing for it. The provider must export ${name} as <plural>.<group> of its own spec (ask its operator), or bind the API by the name the export describes`;
}

/** The CRD the export describes, named by and owned by `binding` (check `exportMismatch` first). */
export function crdOf(exp: APIServiceExport, binding: APIServiceBinding): Obj {
  const { group, names, scope, versions } = exp.spec;
  return {
    apiVersion: CRD_API_VERSION,
    kind: 'CustomResourceDefinition',
    metadata: {
      name: binding.metadata.name!,
      ownerReferences: [{ ...ownerReference(binding, { controller: true }) }],
    },
    spec: {
      group,
      names: structuredClone(names),
      scope,
      versions: versions.map((v) => ({
        name: v.name,
        served: v.served,
        storage: v.storage,
        ...(v.deprecated !== undefined ? { deprecated: v.deprecated } : {}),
        ...(v.deprecationWarning !== undefined ? { deprecationWarning: v.deprecationWarning } : {}),
        schema: structuredClone(v.schema),
        ...(v.subresources !== undefined ? { subresources: structuredClone(v.subresources) } : {}),
        ...(v.additionalPrinterColumns !== undefined ? { additionalPrinterColumns: structuredClone(v.additionalPrinterColumns) } : {}),
      })),
    },
  };
}

export type SchemaDecision =
  | { readonly action: 'apply'; readonly crd: Obj }
  | { readonly action: 'none' }
  | { readonly action: 'refuse'; readonly reason: BindingHoldReason; readonly message: string };

/** What to do with the app cluster's CRD (`existing`, if any) so it matches the export. */
export function schemaDecision(
  exp: APIServiceExport,
  binding: APIServiceBinding,
  existing: V1CustomResourceDefinition | undefined,
): SchemaDecision {
  const bindingName = `${binding.metadata.namespace}/${binding.metadata.name}`;
  const mismatch = exportMismatch(exp, binding);
  if (mismatch) return { action: 'refuse', reason: 'ExportNameMismatch', message: mismatch };
  const desired = crdOf(exp, binding);
  const name = desired.metadata.name;
  if (exp.spec.scope !== 'Namespaced') {
    return {
      action: 'refuse',
      reason: 'ClusterScopedNotSupported',
      message: `APIServiceExport ${exp.metadata.name} exports a cluster-scoped resource; this konnector syncs namespaced resources only (all Klutch data-service APIs are namespaced)`,
    };
  }
  if (existing) {
    const owner = controllerOf(existing);
    if (!owner || owner.uid !== binding.metadata.uid) {
      const by = owner ? `${owner.kind} ${owner.name} (uid ${owner.uid})` : 'nobody the konnector knows (no controller owner reference)';
      return {
        action: 'refuse',
        reason: 'ForeignCustomResourceDefinition',
        message: `CustomResourceDefinition ${name} exists and is owned by ${by}, not by APIServiceBinding ${bindingName}; the konnector does not overwrite it. Delete that CRD (and its objects) or bind the API in another cluster`,
      };
    }
    if (existing.metadata?.deletionTimestamp) {
      return {
        action: 'refuse',
        reason: 'CustomResourceDefinitionDeleting',
        message: `CustomResourceDefinition ${name} is being deleted; it is recreated once it is gone`,
      };
    }
    if (jsonSubset(desired.spec, existing.spec)) return { action: 'none' };
  }
  return { action: 'apply', crd: desired };
}

/** Whether the API server serves the CRD (Established) with the names we asked for (NamesAccepted). */
export function crdEstablished(crd: V1CustomResourceDefinition | undefined): boolean {
  const c = crd?.status?.conditions ?? [];
  return ['Established', 'NamesAccepted'].every((t) => c.some((x) => x.type === t && x.status === 'True'));
}
