/** MariaDB (Galera cluster plans) on a9s. Parameters, schemas and keys as in Klutch's XRD and Composition (v1.5.0). */
import { DataService, planMatrix, s } from '..';

export default new DataService({
  name: 'mariadb',
  kind: 'MariadbInstance',
  description: 'A MariaDB instance.',
  defaultBackend: 'a9s',
  sizes: ['nano', 'small', 'big'],
  a9s: {
    services: ['a9s-mariadb106', 'a9s-mariadb1011'],
    plans: planMatrix({ prefix: 'mariadb', topologies: { single: ['nano', 'small', 'big'], cluster: ['small', 'big'] }, ssl: 'both' }),
  },
  // MariaDB 10.11 is only offered with TLS.
  sslOnlyServices: ['a9s-mariadb1011'],
  parameters: [
    { name: 'binlogExpireDays', schema: s.integer({ minimum: 1 }), keys: { a9s: 'binlog_expire_days' } },
    { name: 'databases', schema: s.array(s.string({ description: 'A database name.' })), keys: { a9s: 'databases' } },
    { name: 'grantPerformanceSchemaPermissions', schema: s.boolean(), keys: { a9s: 'grant_performance_schema_permissions' } },
  ],
  exampleParameters: { binlogExpireDays: 7, databases: ['orders'] },
});
