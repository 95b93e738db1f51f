/** Backup of an instance: the a9s backup manager, the a8s backup controller, or CloudNativePG's Barman Cloud. */
import { a8sObject, a9sResource, Api, INSTANCE_TYPES, MANAGED_STATE_COLUMN, postgresqlService, s, A8sReadiness, cnpgBackup } from '..';

export default new Api({
  name: 'backup',
  kind: 'Backup',
  description: 'A backup of a data-service instance.',
  spec: s.object(
    {
      instanceRef: s.string({ description: 'Name of the instance claim in the same namespace.' }),
      serviceInstanceType: s.string({ enum: INSTANCE_TYPES, description: 'The data service of the instance.' }),
    },
    { required: ['instanceRef', 'serviceInstanceType'] },
  ),
  // The a8s backup manager backs up PostgreSQL only (Klutch's rule).
  // Composition names are DNS labels, so they go into CEL quoted as they are.
  rules: ({ composedBy, compositionName }) => [
    {
      rule: `!${composedBy('a8s')} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('a8s')} composition backs up postgresql instances only: set serviceInstanceType: postgresql or use ${compositionName('a9s')}`,
    },
    {
      rule: `!${composedBy('cnpg')} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('cnpg')} composition backs up postgresql instances only: set serviceInstanceType: postgresql or use ${compositionName('a9s')}`,
    },
  ],
  defaultBackend: 'a8s',
  backends: {
    a9s: a9sResource({
      kind: 'Backup',
      providerConfig: { fromFieldPath: 'spec.serviceInstanceType', format: '%s-backup-manager' },
      fields: [{ from: 'spec.instanceRef', to: 'spec.forProvider.instanceName', required: true }],
      status: ['id', 'status', 'size', 'downloadable', 'triggered_at', 'finished_at'],
    }),
    // The backup's own conditions (its progress) in status.managed, as Klutch shows them.
    a8s: a8sObject({
      resource: { apiVersion: 'backups.anynines.com/v1beta3', kind: 'Backup' },
      fields: postgresqlService(),
      conditions: 'own',
      readiness: A8sReadiness.fromObject(),
    }),
    // A CNPG Backup of the instance's Cluster into its tenant's bucket (backends/cnpg-backup.ts).
    cnpg: cnpgBackup(),
  },
  examples: {
    a9s: { instanceRef: 'example-postgresql-a9s', serviceInstanceType: 'postgresql' },
    a8s: { instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' },
    cnpg: { instanceRef: 'example-postgresql-cnpg', serviceInstanceType: 'postgresql' },
  },
  printerColumns: [MANAGED_STATE_COLUMN],
});
