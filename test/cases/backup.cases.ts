import { operationCases } from './operations';

export default operationCases('backup', {
  spec: { instanceRef: 'my-db', serviceInstanceType: 'postgresql' },
  refs: ['instanceRef'],
  required: ['instanceRef', 'serviceInstanceType'],
  a8sPostgresqlOnly: 'backs up postgresql instances only',
  extra: [
    {
      name: 'klutch docs a8s backup',
      reason: "Klutch's documented a8s Backup",
      backend: 'a8s',
      spec: { instanceRef: 'example-a8s-postgresql', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'klutch docs a9s backup',
      reason: "Klutch's documented a9s Backup",
      backend: 'a9s',
      spec: { instanceRef: 'example-a9s-postgresql', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'cnpg',
      reason: "CloudNativePG backs up a cnpg PostgresqlInstance to its tenant's bucket (backends/cnpg-backup.ts)",
      backend: 'cnpg',
      spec: { instanceRef: 'pg', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'cnpg mongodb',
      reason: 'the cnpg backend backs up PostgreSQL only',
      backend: 'cnpg',
      spec: { instanceRef: 'db', serviceInstanceType: 'mongodb' },
      valid: false,
      error: 'The cnpg-backup composition backs up postgresql instances only',
    },
  ],
});
