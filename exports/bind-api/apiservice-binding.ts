/**
 * APIServiceBinding (consumer side, named `<resource>.<group>`): binds one exported API through a provider kubeconfig
 * and records the consumer's answer to each permission claim. Namespaced, as in the upstream file (older Klutch
 * releases had it cluster-scoped); the konnector creates this CRD itself.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import { ageColumn, conditionColumn, kubeconfigSecretRefSchema, objectSchema, type KubeconfigSecretRef, type KubeObject } from './common';
import { conditionsSchema, READY_CONDITION, type Condition } from './conditions';
import { BIND_API_VERSION, BIND_CATEGORY, BIND_GROUP, BIND_VERSION, Kinds } from './constants';
import { acceptablePermissionClaimSchema, type AcceptablePermissionClaim } from './permission-claim';

export interface APIServiceBindingSpec {
  /** Immutable. */
  kubeconfigSecretRef: KubeconfigSecretRef;
  permissionClaims?: AcceptablePermissionClaim[];
}

export interface APIServiceBindingStatus {
  providerPrettyName?: string;
  conditions?: Condition[];
}

export type APIServiceBinding = KubeObject<
  typeof BIND_API_VERSION,
  typeof Kinds.APIServiceBinding,
  APIServiceBindingSpec,
  APIServiceBindingStatus
>;

export const APIServiceBindingConditions = {
  SecretValid: 'SecretValid',
  InformersSynced: 'InformersSynced',
  Heartbeating: 'Heartbeating',
  Connected: 'Connected',
  SchemaInSync: 'SchemaInSync',
  Ready: READY_CONDITION,
} as const;

export const apiServiceBindingSchema = objectSchema({
  description: 'Binds an exported API to this cluster.',
  spec: s.object(
    {
      kubeconfigSecretRef: kubeconfigSecretRefSchema,
      permissionClaims: s.array(acceptablePermissionClaimSchema, { description: "Claims with the consumer's answers." }),
    },
    { description: 'The provider and the answered claims.', required: ['kubeconfigSecretRef'] },
  ),
  status: s.object(
    { conditions: conditionsSchema, providerPrettyName: s.string({ description: 'Display name of the provider.' }) },
    { description: 'Observed state.' },
  ),
  specRequired: false,
});

// Upstream's jsonPath `bind\.klutch.\anynines\.com/resources` (a search-and-replace of kube-bind's) mis-escapes
// the dots, so the column is always empty; ours reads the annotation it names.
const RESOURCES_COLUMN_PATH = String.raw`.metadata.annotations.bind\.klutch\.anynines\.com/resources`;

const apiServiceBindingCrdProps: CrdProps = {
  group: BIND_GROUP,
  kind: Kinds.APIServiceBinding,
  shortNames: ['sb'],
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: BIND_VERSION,
      schema: apiServiceBindingSchema,
      statusSubresource: true,
      printerColumns: [
        { name: 'Provider', type: 'string', jsonPath: '.status.providerPrettyName' },
        { name: 'Resources', type: 'string', jsonPath: RESOURCES_COLUMN_PATH, priority: 1 },
        conditionColumn('Ready', READY_CONDITION),
        conditionColumn('Message', READY_CONDITION, { field: 'message' }),
        ageColumn,
      ],
    },
  ],
};

export function apiServiceBindingCrd(): Record<string, unknown> {
  return crdManifest(apiServiceBindingCrdProps);
}
