/**
 * The CRD parts an APIServiceExport carries: the names and the versions of the exported CRD, as the konnector needs
 * them to create the same CRD on the consumer cluster.
 */
import { s } from '../../lib/schema';

export interface CustomResourceDefinitionNames {
  kind: string;
  plural: string;
  singular?: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
}

export interface CustomResourceColumnDefinition {
  name: string;
  type: string;
  jsonPath: string;
  description?: string;
  format?: string;
  priority?: number;
}

export interface CustomResourceSubresources {
  status?: Record<string, never>;
  scale?: { specReplicasPath: string; statusReplicasPath: string; labelSelectorPath?: string };
}

export interface APIServiceExportVersion {
  name: string;
  /** @default true */
  served: boolean;
  storage: boolean;
  deprecated?: boolean;
  deprecationWarning?: string;
  /** Any structural schema, kept as it is (atomic). */
  schema: { openAPIV3Schema: Record<string, unknown> };
  subresources?: CustomResourceSubresources;
  additionalPrinterColumns?: CustomResourceColumnDefinition[];
}

const atomicStrings = (description: string) => s.array(s.string(), { description, listType: 'atomic' });

export const crdNamesSchema = s.object(
  {
    categories: atomicStrings('Groups of resources, e.g. "all".'),
    kind: s.string({ description: 'Kind of the resource.' }),
    listKind: s.string({ description: 'Kind of the list.' }),
    plural: s.string({ description: 'Plural resource name, used in URLs.' }),
    shortNames: atomicStrings('Short names for kubectl.'),
    singular: s.string({ description: 'Singular resource name.' }),
  },
  { description: 'Names of the exported resource.', required: ['kind', 'plural'] },
);

const columnSchema = s.object(
  {
    description: s.string({ description: 'Human-readable description of the column.' }),
    format: s.string({ description: 'OpenAPI format of the column.' }),
    jsonPath: s.string({ description: 'JSONPath of the value, relative to the object.' }),
    name: s.string({ description: 'Column name.' }),
    priority: s.integer({ description: 'Higher priorities show only in wide output.', format: 'int32' }),
    type: s.string({ description: 'OpenAPI type of the column.' }),
  },
  { description: 'A printer column.', required: ['jsonPath', 'name', 'type'] },
);

const subresourcesSchema = s.object(
  {
    scale: s.object(
      {
        labelSelectorPath: s.string({ description: 'JSONPath of the label selector in status.' }),
        specReplicasPath: s.string({ description: 'JSONPath of the desired replicas in spec.' }),
        statusReplicasPath: s.string({ description: 'JSONPath of the observed replicas in status.' }),
      },
      { description: 'The scale subresource.', required: ['specReplicasPath', 'statusReplicasPath'] },
    ),
    status: s.object({}, { description: 'The status subresource.' }),
  },
  { description: 'Subresources of this version.' },
);

const exportVersionSchema = s.object(
  {
    additionalPrinterColumns: s.array(columnSchema, { description: 'Printer columns.', listType: 'map', listMapKeys: ['name'] }),
    deprecated: s.boolean({ description: 'Whether the version is deprecated.' }),
    deprecationWarning: s.string({ description: 'Warning returned to clients of a deprecated version.' }),
    name: s.string({ description: 'Version name, e.g. v1alpha1.', minLength: 1, pattern: '^v[1-9][0-9]*([a-z]+[1-9][0-9]*)?$' }),
    schema: s.object(
      {
        openAPIV3Schema: s.object({}, { description: 'The version schema.', preserveUnknownFields: true, mapType: 'atomic' }),
      },
      { description: 'The version schema.', required: ['openAPIV3Schema'] },
    ),
    served: s.boolean({ description: 'Whether the version is served.', default: true }),
    storage: s.boolean({ description: 'Whether this is the storage version.' }),
    subresources: subresourcesSchema,
  },
  { description: 'One version of the exported CRD.', required: ['name', 'schema', 'served', 'storage'] },
);

export const exportVersionsSchema = s.array(exportVersionSchema, {
  description: 'Versions of the exported CRD.',
  minItems: 1,
  listType: 'map',
  listMapKeys: ['name'],
});
