/**
 * ServiceBinding: credentials for an instance. The a9s binding writes `<claim>-creds` into the claim's namespace;
 * the export template claims the provider's Secrets and ConfigMaps so they reach the app cluster.
 */
import { a8sObject, a9sResource, Api, CLAIM_NAMESPACE, INSTANCE_TYPES, MANAGED_STATE_COLUMN, postgresqlRef, s } from '..';

export default new Api({
  name: 'servicebinding',
  kind: 'ServiceBinding',
  description: 'Credentials for a data-service instance.',
  spec: s.object(
    {
      acceptsIncomplete: s.boolean({ default: true, description: 'Let the backend bind asynchronously.' }),
      instanceRef: s
        .string({ minLength: 1, description: 'Name of the instance claim in the same namespace.' })
        .immutable('instanceRef cannot be changed'),
      serviceInstanceType: s
        .string({ enum: INSTANCE_TYPES, description: 'The data service of the instance.' })
        .immutable('serviceInstanceType cannot be changed'),
      region: s.string({ description: 'Region of the instance, where the platform has several.' }),
      policy: s.string({ description: 'Binding policy, as the backend defines it.' }),
    },
    { required: ['instanceRef', 'serviceInstanceType'] },
  ),
  defaultBackend: 'a8s',
  backends: {
    a9s: a9sResource({
      kind: 'ServiceBinding',
      providerConfig: { fromFieldPath: 'spec.serviceInstanceType', format: '%s-service-broker' },
      fields: [
        { from: 'spec.instanceRef', to: 'spec.forProvider.instanceName', required: true },
        { from: 'spec.acceptsIncomplete', to: 'spec.forProvider.acceptsIncomplete', default: true },
      ],
      labels: [{ key: 'klutch.io/instance-type', from: 'spec.serviceInstanceType' }],
      connectionSecretSuffix: '-creds',
      status: ['state', 'serviceBindingID', 'instanceId', 'connectionDetails'],
    }),
    a8s: a8sObject({
      resource: { apiVersion: 'servicebindings.anynines.com/v1beta3', kind: 'ServiceBinding' },
      fields: [...postgresqlRef('spec.instance'), { from: CLAIM_NAMESPACE, to: 'spec.instance.namespace', required: true }],
      connectionSecretSuffix: '-creds',
    }),
  },
  examples: {
    a9s: { instanceRef: 'example-postgresql-a9s', serviceInstanceType: 'postgresql' },
    a8s: { instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' },
  },
  printerColumns: [MANAGED_STATE_COLUMN],
  permissionClaims: [
    { group: '', resource: 'secrets', version: 'v1', owner: 'Provider' },
    { group: '', resource: 'configmaps', version: 'v1', owner: 'Provider' },
  ],
});
