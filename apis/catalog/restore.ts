/** Restore of a backup into its instance. */
import { a8sObject, a9sResource, Api, INSTANCE_TYPES, MANAGED_STATE_COLUMN, postgresqlService, s, A8sReadiness, cnpgRestore } from '..';

export default new Api({
  name: 'restore',
  kind: 'Restore',
  description: 'A restore of a backup into a data-service instance.',
  spec: s.object(
    {
      backupRef: s.string({ description: 'Name of the Backup claim in the same namespace.' }),
      instanceRef: s.string({
        description:
          'Name of the instance claim in the same namespace (a8s and cnpg; a9s restores into the backed-up instance). On cnpg the instance is made anew from the backup: it is unavailable until the restore is Ready.',
      }),
      serviceInstanceType: s.string({ enum: INSTANCE_TYPES, description: 'The data service of the instance.' }),
    },
    { required: ['backupRef', 'serviceInstanceType'] },
  ),
  // Klutch's rules: the a8s restore needs the instance and restores PostgreSQL only; the a9s backup manager restores
  // into the instance the backup was taken from.
  // Composition names are DNS labels, so they go into CEL quoted as they are.
  rules: ({ composedBy, compositionName }) => [
    {
      rule: `!${composedBy('a8s')} || (has(self.instanceRef) && self.instanceRef != '')`,
      message: `The ${compositionName('a8s')} composition needs instanceRef: name the instance to restore into`,
    },
    {
      rule: `!${composedBy('a8s')} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('a8s')} composition restores postgresql instances only: set serviceInstanceType: postgresql or use ${compositionName('a9s')}`,
    },
    // cnpg restores the instance it names from a Backup claim of that instance (backends/cnpg-backup.ts).
    {
      rule: `!${composedBy('cnpg')} || (has(self.instanceRef) && self.instanceRef != '')`,
      message: `The ${compositionName('cnpg')} composition needs instanceRef: name the instance to restore, whose Backup claim backupRef names`,
    },
    {
      rule: `!${composedBy('cnpg')} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('cnpg')} composition restores postgresql instances only: set serviceInstanceType: postgresql`,
    },
  ],
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
      // The restore's own conditions (its progress) in status.managed, as Klutch shows them.
      conditions: 'own',
      readiness: A8sReadiness.fromObject(),
    }),
    // In place: the instance's own function makes it anew from the backup; this observes it (backends/cnpg-backup.ts).
    cnpg: cnpgRestore(),
  },
  examples: {
    a9s: { backupRef: 'example-backup-a9s', instanceRef: 'example-postgresql-a9s', serviceInstanceType: 'postgresql' },
    a8s: { backupRef: 'example-backup-a8s', instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' },
    cnpg: { backupRef: 'example-backup-cnpg', instanceRef: 'example-postgresql-cnpg', serviceInstanceType: 'postgresql' },
  },
  printerColumns: [MANAGED_STATE_COLUMN],
});
