/**
 * APIServiceExportTemplate (example-backend group, on the control plane): names a CRD the backend may export and the
 * permission claims that travel with it. Note the capitalised JSON key `APIServiceSelector`, as upstream has it.
 */
import { crdManifest, type CrdProps } from '../../lib/crd-manifest';
import { s } from '../../lib/schema';
import {
  ageColumn,
  conditionColumn,
  GROUP_PATTERN,
  groupResourceProperties,
  objectSchema,
  RESOURCE_PATTERN,
  type KubeObject,
} from './common';
import { BIND_CATEGORY, Kinds, TEMPLATE_API_VERSION, TEMPLATE_GROUP, TEMPLATE_VERSION } from './constants';
import { permissionClaimsSchema, type PermissionClaim } from './permission-claim';

export interface APIServiceSelector {
  /** @default "" (the core group) */
  group?: string;
  resource: string;
  /** Unset: every served version. */
  version?: string;
}

export interface APIServiceExportTemplateSpec {
  APIServiceSelector: APIServiceSelector;
  permissionClaims?: PermissionClaim[];
}

/** Empty upstream; nothing writes it. */
export type APIServiceExportTemplateStatus = Record<string, never>;

export type APIServiceExportTemplate = KubeObject<
  typeof TEMPLATE_API_VERSION,
  typeof Kinds.APIServiceExportTemplate,
  APIServiceExportTemplateSpec,
  APIServiceExportTemplateStatus
>;

export const apiServiceExportTemplateSchema = objectSchema({
  description: 'A CRD the backend may export, with its permission claims.',
  spec: s.object(
    {
      APIServiceSelector: s.object(
        { ...groupResourceProperties, version: s.string({ description: 'Version to export; unset for all.', minLength: 1 }) },
        { description: 'The group, resource and version offered.', required: ['resource'] },
      ),
      permissionClaims: permissionClaimsSchema,
    },
    { description: 'The exported resource.', required: ['APIServiceSelector'] },
  ),
  status: s.object({}, { description: 'Unused.' }),
});

const apiServiceExportTemplateCrdProps: CrdProps = {
  group: TEMPLATE_GROUP,
  kind: Kinds.APIServiceExportTemplate,
  categories: [BIND_CATEGORY],
  scope: 'Namespaced',
  versions: [
    {
      name: TEMPLATE_VERSION,
      schema: apiServiceExportTemplateSchema,
      statusSubresource: true,
      printerColumns: [conditionColumn('Established', 'Established', { priority: 5 }), ageColumn],
    },
  ],
};

export function apiServiceExportTemplateCrd(): Record<string, unknown> {
  return crdManifest(apiServiceExportTemplateCrdProps);
}

export interface ExportTemplateManifestProps {
  readonly name: string;
  readonly namespace: string;
  /** API group of the CRD; "" for the core group. */
  readonly group: string;
  /** Plural resource name of the CRD. */
  readonly resource: string;
  /** @default unset: every served version */
  readonly version?: string;
  /** @default none (the key is left out) */
  readonly permissionClaims?: readonly PermissionClaim[];
  /** @default none */
  readonly annotations?: Readonly<Record<string, string>>;
}

/**
 * The plain APIServiceExportTemplate object, keys in apiVersion/kind/metadata/spec order. Throws at once on values
 * the CRD would reject, naming the field.
 */
export function exportTemplateManifest(props: ExportTemplateManifestProps): APIServiceExportTemplate {
  const fail = (field: string, problem: string): never => {
    throw new Error(`APIServiceExportTemplate ${props.namespace}/${props.name}: ${field}: ${problem}`);
  };
  if (!props.name) fail('name', 'is empty');
  if (!props.namespace) fail('namespace', 'is empty');
  if (!new RegExp(GROUP_PATTERN).test(props.group)) fail('group', `"${props.group}" is not a DNS subdomain or "" (core)`);
  if (!new RegExp(RESOURCE_PATTERN).test(props.resource)) fail('resource', `"${props.resource}" is not a lower-case plural resource name`);
  if (props.version === '') fail('version', 'is empty; leave it out to export every served version');
  props.permissionClaims?.forEach((c, i) => {
    if (c.autoAdopt && c.autoDonate) fail(`permissionClaims[${i}]`, 'autoAdopt and autoDonate are mutually exclusive');
  });

  const selector: APIServiceSelector = { group: props.group, resource: props.resource };
  if (props.version !== undefined) selector.version = props.version;
  const spec: APIServiceExportTemplateSpec = { APIServiceSelector: selector };
  if (props.permissionClaims?.length) spec.permissionClaims = structuredClone([...props.permissionClaims]);
  return {
    apiVersion: TEMPLATE_API_VERSION,
    kind: Kinds.APIServiceExportTemplate,
    metadata: {
      name: props.name,
      namespace: props.namespace,
      ...(props.annotations && Object.keys(props.annotations).length ? { annotations: { ...props.annotations } } : {}),
    },
    spec,
  };
}
