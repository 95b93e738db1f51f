/**
 * An APIServiceExport from the (namespaced) claim CRD and the template that offers it: the CRD's names and served
 * versions (schema, subresources, printer columns) as the konnector needs them to make the same CRD on the app
 * cluster, and the template's permission claims. The source hash (annotation `klutch.anynines.com/source-spec-hash`)
 * covers both, so a changed CRD or template re-derives the export. A cluster-scoped CRD is refused (exportable.ts).
 */
import { createHash } from 'node:crypto';
import type { V1CustomResourceDefinition } from '@kubernetes/client-node';
import {
  Annotations,
  BIND_API_VERSION,
  EXPORT_CONVERSION_ANNOTATION,
  Kinds,
  type APIServiceExport,
  type APIServiceExportTemplate,
  type APIServiceExportVersion,
} from '../exports/bind-api';
import { wireClaim } from '../exports/bind-api';
import type { ConsumerScope } from './consumer-access';
import { BackendAnnotations } from './labels';

/** The CRD as wire JSON (the informers cache wire JSON, with its `x-kubernetes-*` keys). */
type WireVersion = Record<string, unknown> & { name: string; served: boolean; storage: boolean };

function sourceHash(crd: V1CustomResourceDefinition, template: APIServiceExportTemplate): string {
  return createHash('sha256')
    .update(JSON.stringify([crd.spec, template.spec.permissionClaims ?? [], conversionOf(template) ?? null]))
    .digest('hex')
    .slice(0, 32);
}

const conversionOf = (template: APIServiceExportTemplate): string | undefined =>
  template.metadata.annotations?.[EXPORT_CONVERSION_ANNOTATION];

export class DeriveError extends Error {}

/**
 * The export (to apply) named `<plural>.<group>` in `namespace`: the version the template pins, else `version` (an
 * export request's, recorded on the export so that it is kept), else every served version.
 */
export function deriveExport(
  crd: V1CustomResourceDefinition,
  template: APIServiceExportTemplate,
  namespace: string,
  scope: ConsumerScope,
  version?: string,
): APIServiceExport {
  const spec = crd.spec;
  const wanted = template.spec.APIServiceSelector.version ?? version;
  let versions = (spec.versions as unknown as WireVersion[]).filter((v) => v.served && (!wanted || v.name === wanted));
  if (versions.length === 0) {
    throw new DeriveError(
      `CRD ${crd.metadata?.name} serves no version${wanted ? ` named ${wanted}` : ''}; fix APIServiceExportTemplate ${template.metadata.namespace}/${template.metadata.name} or the CRD`,
    );
  }
  // Exactly one stored version on the consumer: the CRD's storage version if exported, else the first.
  const storage = versions.some((v) => v.storage) ? undefined : versions[0]!.name;
  // A version the control plane does not store: how our konnector converts to the one it does (the template's).
  const conversion = storage !== undefined ? conversionOf(template) : undefined;
  versions = versions.map((v) => ({ ...v, storage: v.storage || v.name === storage }));
  if (spec.scope !== 'Namespaced') {
    throw new DeriveError(
      `CRD ${crd.metadata?.name} is cluster-scoped; only namespaced resources are exported (a consumer's writes to a cluster-scoped resource could not be held to its own objects); export a namespaced CRD, or drop APIServiceExportTemplate ${template.metadata.namespace}/${template.metadata.name}`,
    );
  }
  const exported: APIServiceExportVersion[] = versions.map((v) => {
    const out: Record<string, unknown> = {
      name: v.name,
      served: true,
      storage: v.storage,
      schema: v.schema ?? { openAPIV3Schema: { type: 'object' } },
    };
    for (const k of ['deprecated', 'deprecationWarning', 'subresources', 'additionalPrinterColumns']) if (v[k] !== undefined) out[k] = v[k];
    return out as unknown as APIServiceExportVersion;
  });
  const n = spec.names;
  const names = {
    kind: n.kind,
    plural: n.plural,
    ...(n.singular ? { singular: n.singular } : {}),
    ...(n.listKind ? { listKind: n.listKind } : {}),
    ...(n.shortNames?.length ? { shortNames: n.shortNames } : {}),
    ...(n.categories?.length ? { categories: n.categories } : {}),
  };
  const claims = (template.spec.permissionClaims ?? []).map(wireClaim);
  return {
    apiVersion: BIND_API_VERSION,
    kind: Kinds.APIServiceExport,
    metadata: {
      name: `${n.plural}.${spec.group}`,
      namespace,
      annotations: {
        [Annotations.sourceSpecHash]: sourceHash(crd, template),
        ...(version !== undefined ? { [BackendAnnotations.exportVersion]: version } : {}),
        ...(conversion !== undefined ? { [EXPORT_CONVERSION_ANNOTATION]: conversion } : {}),
      },
    },
    spec: {
      group: spec.group,
      names,
      scope: 'Namespaced',
      versions: exported,
      ...(claims.length ? { permissionClaims: claims } : {}),
      informerScope: scope,
    },
  };
}
