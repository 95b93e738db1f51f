/**
 * APIServiceNamespace (provider side, in the consumer's cluster namespace, named like the consumer namespace): the
 * konnector asks for it; the backend creates `<clusterns>-<name>` and reports it in status.namespace.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import { ageColumn, objectSchema, type KubeObject } from './common';
import { BIND_API_VERSION, BIND_CATEGORY, BIND_GROUP, BIND_VERSION, Kinds } from './constants';

/** Empty: the name says everything. */
export type APIServiceNamespaceSpec = Record<string, never>;

export interface APIServiceNamespaceStatus {
  /** The provider namespace bound to the consumer namespace of the same name as this object. */
  namespace?: string;
}

export type APIServiceNamespace = KubeObject<
  typeof BIND_API_VERSION,
  typeof Kinds.APIServiceNamespace,
  APIServiceNamespaceSpec,
  APIServiceNamespaceStatus
>;

export const apiServiceNamespaceSchema = objectSchema({
  description: 'Maps a consumer namespace to a provider namespace.',
  spec: s.object({}, { description: 'Empty; the name is the consumer namespace.' }),
  status: s.object({ namespace: s.string({ description: 'The provider namespace assigned.' }) }, { description: 'Observed state.' }),
  specRequired: false,
});

const apiServiceNamespaceCrdProps: CrdProps = {
  group: BIND_GROUP,
  kind: Kinds.APIServiceNamespace,
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: BIND_VERSION,
      schema: apiServiceNamespaceSchema,
      statusSubresource: true,
      printerColumns: [{ name: 'Namespace', type: 'string', jsonPath: '.status.namespace' }, ageColumn],
    },
  ],
};

export function apiServiceNamespaceCrd(): Record<string, unknown> {
  return crdManifest(apiServiceNamespaceCrdProps);
}
