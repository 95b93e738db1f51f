import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';

export default {
  api: 'mariadb',
  create: [
    ...commonCreateCases({ service: 'a9s-mariadb106', plan: 'mariadb-single-small' }, { name: 'binlogExpireDays', wrongType: 'week' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      backend: 'a9s',
      spec: {
        acceptsIncomplete: false,
        service: 'a9s-mariadb106',
        plan: 'mariadb-cluster-big',
        parameters: { binlogExpireDays: 7, databases: ['orders', 'users_2'], grantPerformanceSchemaPermissions: true },
      },
      valid: true,
    },
    {
      name: '10.11 with ssl',
      reason: 'MariaDB 10.11 runs with ssl plans',
      spec: { service: 'a9s-mariadb1011', plan: 'mariadb-cluster-small-ssl' },
      valid: true,
    },
    {
      name: '10.11 without ssl',
      reason: 'MariaDB 10.11 needs an ssl plan',
      spec: { service: 'a9s-mariadb1011', plan: 'mariadb-cluster-small' },
      valid: false,
      error: 'needs an ssl plan',
    },
    {
      name: 'binlogExpireDays 0',
      reason: 'binlogExpireDays >= 1',
      spec: { service: 'a9s-mariadb106', plan: 'mariadb-single-small', parameters: { binlogExpireDays: 0 } },
      valid: false,
      error: 'binlogExpireDays',
    },
    {
      name: 'database names as Klutch takes them',
      reason: 'Klutch does not check database names',
      spec: {
        service: 'a9s-mariadb106',
        plan: 'mariadb-single-small',
        parameters: { databases: ['my-db', 'my-db'], binlogExpireDays: 365 },
      },
      valid: true,
    },
    ...servicePlanClaims({
      ...klutchEnums('a9s/mariadb/definition.yaml'),
      accepts: (service, plan) => service !== 'a9s-mariadb1011' || plan.endsWith('-ssl'),
      error: () => 'needs an ssl plan',
    }),
  ],
  update: transitionCases({
    service: 'a9s-mariadb106',
    otherService: 'a9s-mariadb1011',
    small: 'mariadb-single-small',
    big: 'mariadb-single-big',
    multi: 'mariadb-cluster-small',
    singleAsBig: 'mariadb-single-big',
    otherSsl: 'mariadb-single-small-ssl',
    smaller: 'mariadb-single-nano',
  }),
} satisfies ApiCases;
