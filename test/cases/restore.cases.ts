import { operationCases } from './operations';

export default operationCases('restore', {
  spec: { backupRef: 'my-backup', instanceRef: 'my-db', serviceInstanceType: 'postgresql' },
  refs: ['backupRef', 'instanceRef'],
  required: ['backupRef', 'serviceInstanceType'],
  a8sPostgresqlOnly: 'restores postgresql instances only',
  extra: [
    {
      name: 'a9s without instanceRef',
      reason: "Klutch's a9s Restore names only the backup (instanceRef is required for a8s-restore only)",
      backend: 'a9s',
      spec: { backupRef: 'example-a9s-backup', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'a9s with empty instanceRef',
      reason: 'the a9s restore does not read instanceRef',
      backend: 'a9s',
      spec: { backupRef: 'example-a9s-backup', instanceRef: '', serviceInstanceType: 'mariadb' },
      valid: true,
    },
    {
      name: 'a8s without instanceRef',
      reason: 'a8s-restore needs the instance (Klutch rule)',
      backend: 'a8s',
      spec: { backupRef: 'example-a8s-backup', serviceInstanceType: 'postgresql' },
      valid: false,
      error: 'needs instanceRef',
    },
    {
      name: 'a8s with empty instanceRef',
      reason: 'a8s-restore needs a non-empty instanceRef (Klutch rule)',
      backend: 'a8s',
      spec: { backupRef: 'example-a8s-backup', instanceRef: '', serviceInstanceType: 'postgresql' },
      valid: false,
      error: 'needs instanceRef',
    },
    {
      name: 'default composition without instanceRef',
      reason: 'the default composition is a8s-restore',
      spec: { backupRef: 'example-a8s-backup', serviceInstanceType: 'postgresql' },
      valid: false,
      error: 'needs instanceRef',
    },
    {
      name: 'klutch docs a8s restore',
      reason: "Klutch's documented a8s Restore",
      backend: 'a8s',
      spec: { backupRef: 'example-a8s-backup', instanceRef: 'example-a8s-postgresql', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'cnpg',
      reason: 'CloudNativePG restores only into a new cluster, which the cnpg backend does not compose yet: refused with the reason',
      backend: 'cnpg',
      spec: { backupRef: 'b', instanceRef: 'pg', serviceInstanceType: 'postgresql' },
      valid: false,
      error: 'The cnpg-restore composition does not exist: CloudNativePG restores by bootstrapping a new cluster from a backup',
    },
  ],
});
