import { operationCases } from './operations';

export default operationCases('servicebinding', {
  spec: { instanceRef: 'my-db', serviceInstanceType: 'postgresql' },
  refs: ['instanceRef'],
  required: ['instanceRef', 'serviceInstanceType'],
  a8sPostgresqlOnly: 'binds postgresql instances only',
  extra: [
    {
      name: 'region and policy',
      reason: 'optional binding settings',
      backend: 'a9s',
      spec: {
        acceptsIncomplete: false,
        instanceRef: 'my-db',
        serviceInstanceType: 'keyvalue',
        region: 'eu-central-1',
        policy: 'read-only',
      },
      valid: true,
    },
    {
      name: 'us-east-1',
      reason: "Klutch's other region",
      backend: 'a9s',
      spec: { instanceRef: 'my-db', serviceInstanceType: 'mariadb', region: 'us-east-1' },
      valid: true,
    },
    {
      name: 'unknown region',
      reason: 'region is an enum',
      backend: 'a9s',
      spec: { instanceRef: 'my-db', serviceInstanceType: 'mariadb', region: 'eu-1' },
      valid: false,
      error: 'spec.region',
    },
    {
      name: 'klutch docs a8s binding',
      reason: "Klutch's documented a8s ServiceBinding",
      backend: 'a8s',
      spec: { instanceRef: 'example-a8s-postgresql', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'klutch docs a9s binding',
      reason: "Klutch's documented a9s ServiceBinding",
      backend: 'a9s',
      spec: { instanceRef: 'example-a9s-postgresql', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'cnpg binding',
      reason: 'the CloudNativePG backend binds its PostgreSQL instances',
      backend: 'cnpg',
      spec: { instanceRef: 'pg', serviceInstanceType: 'postgresql' },
      valid: true,
    },
    {
      name: 'cnpg, not postgresql',
      reason: 'the CloudNativePG backend serves PostgreSQL only',
      backend: 'cnpg',
      spec: { instanceRef: 'pg', serviceInstanceType: 'mongodb' },
      valid: false,
      error: 'The cnpg-servicebinding composition binds postgresql instances only',
    },
  ],
});
