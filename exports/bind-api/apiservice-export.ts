/**
 * APIServiceExport (provider side, in the consumer's cluster namespace, named `<plural>.<group>`): one CRD offered to
 * one consumer cluster. The backend derives it from the CRD; the konnector recreates the CRD from it.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import { ageColumn, conditionColumn, objectSchema, type KubeObject } from './common';
import { conditionsSchema, type Condition } from './conditions';
import { BIND_API_VERSION, BIND_CATEGORY, BIND_GROUP, BIND_VERSION, Kinds } from './constants';
import { crdNamesSchema, exportVersionsSchema, type APIServiceExportVersion, type CustomResourceDefinitionNames } from './crd-version';
import { permissionClaimsSchema, type PermissionClaim } from './permission-claim';

export type ResourceScope = 'Cluster' | 'Namespaced';
/** Where the konnector watches consumer objects; fixed once set. */
export type InformerScope = 'Cluster' | 'Namespaced';
/** How cluster-scoped objects are kept apart on the provider. Only Prefixed (`<providerNs>-<name>`) is implemented. */
export type ClusterScopedIsolation = 'Prefixed' | 'Namespaced' | 'None';

export interface APIServiceExportSpec {
  group: string;
  names: CustomResourceDefinitionNames;
  scope: ResourceScope;
  versions: APIServiceExportVersion[];
  permissionClaims?: PermissionClaim[];
  informerScope: InformerScope;
  /** Required when scope is Cluster, forbidden otherwise. */
  clusterScopedIsolation?: ClusterScopedIsolation;
}

export interface APIServiceExportStatus {
  acceptedNames?: CustomResourceDefinitionNames;
  storedVersions?: string[];
  conditions?: Condition[];
}

export type APIServiceExport = KubeObject<
  typeof BIND_API_VERSION,
  typeof Kinds.APIServiceExport,
  APIServiceExportSpec,
  APIServiceExportStatus
>;

const scopeEnum = ['Cluster', 'Namespaced'];

export const apiServiceExportSchema = objectSchema({
  description: 'A CRD offered to one consumer cluster.',
  spec: s.object(
    {
      clusterScopedIsolation: s.string({ description: 'Isolation of cluster-scoped objects.', enum: ['Prefixed', 'Namespaced', 'None'] }),
      group: s.string({ description: 'API group of the exported CRD.' }),
      informerScope: s
        .string({ description: 'Scope the konnector watches consumer objects in.', enum: scopeEnum })
        .immutable('informerScope is immutable'),
      names: crdNamesSchema,
      permissionClaims: permissionClaimsSchema,
      scope: s.string({ description: 'Scope of the exported resource.', enum: scopeEnum }),
      versions: exportVersionsSchema,
    },
    {
      description: 'The exported CRD.',
      required: ['group', 'informerScope', 'names', 'scope', 'versions'],
      rules: [
        {
          rule: 'self.scope == "Namespaced" || self.informerScope == "Cluster"',
          message: 'informerScope must be Cluster for cluster-scoped resources',
        },
        {
          rule: 'self.scope == "Namespaced" || has(self.clusterScopedIsolation)',
          message: 'clusterScopedIsolation must be defined for cluster-scoped resources',
        },
        {
          rule: 'self.scope == "Cluster" || !has(self.clusterScopedIsolation)',
          message: 'clusterScopedIsolation is not relevant for namespaced resources',
        },
      ],
    },
  ),
  status: s.object(
    {
      acceptedNames: crdNamesSchema,
      conditions: conditionsSchema,
      storedVersions: s.array(s.string(), { description: 'Versions ever stored on the consumer.' }),
    },
    { description: 'Observed state.' },
  ),
  // Upstream pairs this rule with the message "informerScope is immutable" (a copy-paste slip); ours says what it checks.
  rules: [
    {
      rule: 'self.metadata.name == self.spec.names.plural+"."+self.spec.group',
      message: 'name must be <plural>.<group> of the exported resource',
    },
  ],
});

const apiServiceExportCrdProps: CrdProps = {
  group: BIND_GROUP,
  kind: Kinds.APIServiceExport,
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: BIND_VERSION,
      schema: apiServiceExportSchema,
      statusSubresource: true,
      printerColumns: [conditionColumn('Established', 'Established', { priority: 5 }), ageColumn],
    },
  ],
};

export function apiServiceExportCrd(): Record<string, unknown> {
  return crdManifest(apiServiceExportCrdProps);
}
