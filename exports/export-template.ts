/**
 * The APIServiceExportTemplate of an API: tells the bind backend which claim CRD app clusters may bind to, and which
 * other resources (credentials Secrets, ConfigMaps) travel with it.
 */
import { Construct } from 'constructs';
import type { Api, CrossplaneTarget } from '../apis/api';
import {
  ApiServiceExportTemplate,
  ApiServiceExportTemplateSpecPermissionClaimsSelectorOwner as Owner,
} from '../imports/example-backend.klutch.anynines.com';

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
    const resource = api.plural;
    new ApiServiceExportTemplate(this, 'Resource', {
      metadata: { name: resource, namespace: props.namespace ?? 'crossplane-system' },
      spec: {
        apiServiceSelector: { group: api.group, resource, version: api.version },
        ...(api.permissionClaims.length > 0
          ? {
              permissionClaims: api.permissionClaims.map((c) => ({
                group: c.group,
                resource: c.resource,
                version: c.version,
                selector: { owner: c.owner === 'Provider' ? Owner.PROVIDER : Owner.CONSUMER },
              })),
            }
          : {}),
      },
    });
  }
}
