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
      reason: 'CloudNativePG cannot back up or restore on this platform: refused with the reason (backends/cnpg.ts)',
      backend: 'cnpg',
      spec: { instanceRef: 'pg', serviceInstanceType: 'postgresql' },
      valid: false,
      error: 'The cnpg-backup composition does not exist: CloudNativePG backs up to an object store',
    },
  ],
});
