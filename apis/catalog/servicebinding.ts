/**
 * ServiceBinding: credentials for an instance. The a9s binding writes `<claim>-creds` into the claim's namespace;
 * the export template claims the provider's Secrets and ConfigMaps so they reach the app cluster.
 */
import {
  a8sObject,
  a9sResource,
  Api,
  CLAIM_NAMESPACE,
  INSTANCE_TYPES,
  MANAGED_STATE_COLUMN,
  postgresqlRef,
  s,
  A8S_BINDING_READY,
  cnpgBinding,
} from '..';
import { DURATION_PATTERN } from '../../recipe';

export default new Api({
  name: 'servicebinding',
  kind: 'ServiceBinding',
  description: 'Credentials for a data-service instance.',
  spec: s.object(
    {
      acceptsIncomplete: s.boolean({ description: 'Let the backend bind asynchronously (default true).' }),
      instanceRef: s.string({ description: 'Name of the instance claim in the same namespace.' }),
      serviceInstanceType: s.string({ enum: INSTANCE_TYPES, description: 'The data service of the instance.' }),
      // Klutch's regions, as its XRD lists them.
      region: s.string({ enum: ['eu-central-1', 'us-east-1'], description: 'Region of the instance, where the platform has several.' }),
      policy: s.string({ description: 'Binding policy, as the backend defines it.' }),
      expiresAt: s.string({
        description:
          'When the credentials expire (RFC 3339, e.g. 2026-12-31T00:00:00Z): then the user is revoked, its sessions ended and <binding>-creds removed; a later time brings new credentials. Default: never.',
        format: 'date-time',
      }),
      rotation: s.object(
        {
          requested: s.string({
            description:
              'Set to a new value (a time, a counter) to rotate the password now: a second user gets a new password, <binding>-creds switch to it once it works, and the old user keeps working for the overlap, then is revoked.',
            maxLength: 63,
          }),
          every: s.string({
            description:
              'Rotate the password on this schedule (e.g. 30d, 12h, 90m), counted from the last rotation. Default: only on request.',
            pattern: DURATION_PATTERN,
          }),
          overlap: s.string({
            description:
              'How long the old password keeps working after the new one reached <binding>-creds in the app cluster (the konnector says so upstream; where no konnector does, from its publication on the control plane), e.g. 5m, 1h: longer than the app needs to read the new Secret. Default: 5m.',
            pattern: DURATION_PATTERN,
          }),
        },
        { description: 'Rotation of the password with an overlap, on request or on a schedule.' },
      ),
    },
    { required: ['instanceRef', 'serviceInstanceType'] },
  ),
  // The a8s binding controller binds PostgreSQL only (Klutch's rule).
  // Composition names are DNS labels, so they go into CEL quoted as they are.
  rules: ({ composedBy, compositionName }) => [
    {
      rule: `!${composedBy('a8s')} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('a8s')} composition binds postgresql instances only: set serviceInstanceType: postgresql or use ${compositionName('a9s')}`,
    },
    {
      rule: `!${composedBy('cnpg')} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('cnpg')} composition binds postgresql instances only: set serviceInstanceType: postgresql or use ${compositionName('a9s')}`,
    },
    {
      rule: `!has(self.rotation) || ${composedBy('cnpg')}`,
      message: `rotation is only offered by the ${compositionName('cnpg')} composition: remove it, or bind with ${compositionName('cnpg')}`,
    },
    {
      rule: `!has(self.expiresAt) || ${composedBy('cnpg')}`,
      message: `expiresAt is only offered by the ${compositionName('cnpg')} composition: remove it, or bind with ${compositionName('cnpg')}`,
    },
  ],
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
      fields: [
        ...postgresqlRef('spec.instance'),
        // The instance is in the claim's namespace: the composite's claim label (v1); on the v2 target the composite is
        // namespaced itself and has no claim, so its own namespace, which the label overrides where there is one.
        { from: 'metadata.namespace', to: 'spec.instance.namespace' },
        { from: CLAIM_NAMESPACE, to: 'spec.instance.namespace' },
      ],
      connectionSecretSuffix: '-creds',
      readiness: A8S_BINDING_READY,
    }),
    // The instance's application user, its credentials in the a8s keys (backends/cnpg.ts).
    cnpg: cnpgBinding(),
  },
  examples: {
    a9s: { instanceRef: 'example-postgresql-a9s', serviceInstanceType: 'postgresql' },
    a8s: { instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' },
    cnpg: { instanceRef: 'example-postgresql-cnpg', serviceInstanceType: 'postgresql' },
  },
  printerColumns: [MANAGED_STATE_COLUMN],
  permissionClaims: [
    { group: '', resource: 'secrets', version: 'v1', owner: 'Provider' },
    { group: '', resource: 'configmaps', version: 'v1', owner: 'Provider' },
  ],
});
