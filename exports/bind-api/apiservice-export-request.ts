/**
 * APIServiceExportRequest (provider side, in the consumer's cluster namespace): the CLI asks for resources to be
 * exported; the backend answers with APIServiceExports and a terminal phase.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import { ageColumn, conditionColumn, groupResourceProperties, objectSchema, type GroupResource, type KubeObject } from './common';
import { conditionsSchema, READY_CONDITION, type Condition } from './conditions';
import { BIND_API_VERSION, BIND_CATEGORY, BIND_GROUP, BIND_VERSION, Kinds } from './constants';
import { permissionClaimsSchema, type PermissionClaim } from './permission-claim';

export interface APIServiceExportRequestResource extends GroupResource {
  /**
   * Versions to export (Klutch's field): the first one the provider offers is the app cluster's, alone; empty, the
   * provider's default (ours: the template of the oldest served version).
   */
  versions?: string[];
  permissionClaims?: PermissionClaim[];
}

export interface APIServiceExportRequestSpec {
  /** Free-form, immutable; for the provider to interpret. */
  parameters?: Record<string, unknown>;
  /** At least one; immutable. */
  resources: APIServiceExportRequestResource[];
}

export type APIServiceExportRequestPhase = 'Pending' | 'Failed' | 'Succeeded';

export interface APIServiceExportRequestStatus {
  /** @default Pending */
  phase?: APIServiceExportRequestPhase;
  /** Why the request failed, once phase is Failed. */
  terminalMessage?: string;
  conditions?: Condition[];
}

export type APIServiceExportRequest = KubeObject<
  typeof BIND_API_VERSION,
  typeof Kinds.APIServiceExportRequest,
  APIServiceExportRequestSpec,
  APIServiceExportRequestStatus
>;

export const APIServiceExportRequestConditions = { ExportsReady: 'ExportsReady' } as const;
/** Condition reason while the requested CRD does not exist (the request fails after a minute). */
export const CRD_NOT_FOUND_REASON = 'CRDNotFound';

export const apiServiceExportRequestSchema = objectSchema({
  description: 'A request to export resources to a consumer cluster.',
  spec: s.object(
    {
      parameters: s.freeform({ description: 'Provider-specific parameters.' }).immutable('parameters are immutable'),
      resources: s
        .array(
          s.object(
            {
              ...groupResourceProperties,
              permissionClaims: permissionClaimsSchema,
              versions: s.array(s.string(), { description: 'Versions to export; empty for all served.' }),
            },
            { description: 'A resource to export.', required: ['resource'] },
          ),
          { description: 'Resources to export.', minItems: 1 },
        )
        .immutable('resources are immutable'),
    },
    { description: 'What to export.', required: ['resources'] },
  ),
  status: s.object(
    {
      conditions: conditionsSchema,
      phase: s.string({ description: 'Progress of the request.', enum: ['Pending', 'Failed', 'Succeeded'], default: 'Pending' }),
      terminalMessage: s.string({ description: 'Why the request failed.' }),
    },
    { description: 'Observed state.', default: {} },
  ),
});

const apiServiceExportRequestCrdProps: CrdProps = {
  group: BIND_GROUP,
  kind: Kinds.APIServiceExportRequest,
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: BIND_VERSION,
      schema: apiServiceExportRequestSchema,
      statusSubresource: true,
      printerColumns: [conditionColumn('Ready', READY_CONDITION), ageColumn],
    },
  ],
};

export function apiServiceExportRequestCrd(): Record<string, unknown> {
  return crdManifest(apiServiceExportRequestCrdProps);
}
