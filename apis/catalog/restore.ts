/** Restore of a backup into its instance. */
import { a8sObject, a9sResource, Api, INSTANCE_TYPES, MANAGED_STATE_COLUMN, postgresqlService, s } from '..';

export default new Api({
  name: 'restore',
  kind: 'Restore',
  description: 'A restore of a backup into a data-service instance.',
  spec: s.object(
    {
      backupRef: s
        .string({ minLength: 1, description: 'Name of the Backup claim in the same namespace.' })
        .immutable('backupRef cannot be changed'),
      instanceRef: s
        .string({ minLength: 1, description: 'Name of the instance claim in the same namespace.' })
        .immutable('instanceRef cannot be changed'),
      serviceInstanceType: s
        .string({ enum: INSTANCE_TYPES, description: 'The data service of the instance.' })
        .immutable('serviceInstanceType cannot be changed'),
    },
    { required: ['backupRef', 'instanceRef', 'serviceInstanceType'] },
  ),
  defaultBackend: 'a8s',
  backends: {
    a9s: a9sResource({
      kind: 'Restore',
      providerConfig: { fromFieldPath: 'spec.serviceInstanceType', format: '%s-backup-manager' },
      fields: [{ from: 'spec.backupRef', to: 'spec.forProvider.backupName', required: true }],
      status: ['restoreId', 'backupId', 'state', 'triggeredAt', 'finishedAt'],
    }),
    a8s: a8sObject({
      resource: { apiVersion: 'backups.anynines.com/v1beta3', kind: 'Restore' },
      fields: [...postgresqlService(), { from: 'spec.backupRef', to: 'spec.backupName', required: true }],
    }),
  },
  examples: {
    a9s: { backupRef: 'example-backup-a9s', instanceRef: 'example-postgresql-a9s', serviceInstanceType: 'postgresql' },
    a8s: { backupRef: 'example-backup-a8s', instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' },
  },
  printerColumns: [MANAGED_STATE_COLUMN],
});
