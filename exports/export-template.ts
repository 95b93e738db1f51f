/**
 * The APIServiceExportTemplate of an API: tells the bind backend which claim CRD app clusters may bind to, and which
 * other resources (credentials Secrets, ConfigMaps) travel with it.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type { Api, CrossplaneTarget } from '../apis/api';
import { exportTemplateManifest } from './bind-api';

export interface ExportTemplateProps {
  readonly api: Api;
  /** Where the bind backend looks for templates. @default crossplane-system */
  readonly namespace?: string;
  /** @default v1 */
  readonly target?: CrossplaneTarget;
}

export class ExportTemplate extends Construct {
  constructor(scope: Construct, id: string, props: ExportTemplateProps) {
    super(scope, id);
    const { api } = props;
    // With claims (v1) app clusters bind to the claim; without (v2) to the namespaced composite, which has the same plural.
    const { apiVersion, kind, metadata, spec } = exportTemplateManifest({
      name: api.plural,
      namespace: props.namespace ?? 'crossplane-system',
      group: api.group,
      resource: api.plural,
      version: api.version,
      permissionClaims: api.permissionClaims.map((c) => ({
        group: c.group,
        resource: c.resource,
        version: c.version,
        selector: { owner: c.owner },
      })),
    });
    new ApiObject(this, 'Resource', { apiVersion, kind, metadata, spec });
  }
}
