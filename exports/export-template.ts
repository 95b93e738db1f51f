/**
 * The APIServiceExportTemplate of an API: tells the bind backend which claim CRD app clusters may bind to, and which
 * other resources (credentials Secrets, ConfigMaps) travel with it.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { Api, CrossplaneTarget } from '../apis/api';
import { EXPORT_CONVERSION_ANNOTATION, exportTemplateManifest } from './bind-api';

export interface ExportTemplateProps {
  readonly api: Api;
  /** Where the bind backend looks for templates. @default crossplane-system */
  readonly namespace?: string;
  /** @default v1 */
  readonly target?: CrossplaneTarget;
  /** The version app clusters binding this template get. @default the API's oldest served version */
  readonly version?: string;
}

/**
 * The template of each served version: `<plural>` for the oldest, so an app cluster bound before a newer version came
 * keeps the version its claims are written in, and `<plural>-<version>` for each newer one (docs/decisions/api-versions.md).
 */
export function exportTemplateName(api: Api, version: string): string {
  return version === api.versions[0]!.name ? api.plural : `${api.plural}-${version}`;
}

export class ExportTemplate extends Construct {
  constructor(scope: Construct, id: string, props: ExportTemplateProps) {
    super(scope, id);
    const { api } = props;
    const version = props.version ?? api.versions[0]!.name;
    // With claims (v1) app clusters bind to the claim; without (v2) to the namespaced composite, which has the same plural.
    const { apiVersion, kind, metadata, spec } = exportTemplateManifest({
      name: exportTemplateName(api, version),
      namespace: props.namespace ?? 'crossplane-system',
      group: api.group,
      resource: api.plural,
      version,
      permissionClaims: api.permissionClaims.map((c) => ({
        group: c.group,
        resource: c.resource,
        version: c.version,
        selector: { owner: c.owner },
      })),
      // How a konnector converts between this version and the one the control plane stores (see the annotation).
      ...(api.versions.length > 1
        ? {
            annotations: {
              [EXPORT_CONVERSION_ANNOTATION]: JSON.stringify({ storageVersion: api.version, conversions: api.conversions }),
            },
          }
        : {}),
    });
    new ApiObject(this, 'Resource', { apiVersion, kind, metadata, spec });
  }
}
