/** Backup of an instance: the a9s backup manager, or the a8s backup controller. */
import { Api } from '../api';
import { A8S_PROVIDER_CONFIG, A9S_API_VERSION } from '../dataservice';
import { A8S_STATUS, INSTANCE_TYPES, MANAGED_STATE_COLUMN, a8sPostgresqlService, managedStatus } from '../operations';
import { celString } from '../plans';
import { s } from '../schema';

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
  rules: ({ composition, compositionName }) => [
    {
      rule: `${composition} != ${celString(compositionName('a8s'))} || self.serviceInstanceType == 'postgresql'`,
      message: `The ${compositionName('a8s')} composition backs up postgresql instances only: set serviceInstanceType: postgresql or use ${compositionName('a9s')}`,
    },
  ],
  defaultBackend: 'a8s',
  backends: {
    a9s: {
      resource: { apiVersion: A9S_API_VERSION, kind: 'Backup' },
      providerConfig: { fromFieldPath: 'spec.serviceInstanceType', format: '%s-backup-manager' },
      fields: [{ from: 'spec.instanceRef', to: 'spec.forProvider.instanceName', required: true }],
      status: managedStatus(['id', 'status', 'size', 'downloadable', 'triggered_at', 'finished_at']),
    },
    a8s: {
      resource: { apiVersion: 'backups.anynines.com/v1beta3', kind: 'Backup' },
      providerConfig: { name: A8S_PROVIDER_CONFIG },
      fields: a8sPostgresqlService(),
      status: A8S_STATUS,
    },
  },
  examples: {
    a9s: { instanceRef: 'example-postgresql-a9s', serviceInstanceType: 'postgresql' },
    a8s: { instanceRef: 'example-postgresql-a8s', serviceInstanceType: 'postgresql' },
  },
  printerColumns: [MANAGED_STATE_COLUMN],
});
