import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';

export default {
  api: 'keyvalue',
  create: [
    ...commonCreateCases({ service: 'a9s-keyvalue8', plan: 'keyvalue-single-small-ssl' }, { name: 'minReplicasMaxLag', wrongType: '10s' }),
    {
      name: 'replica, every parameter',
      reason: 'all parameters on a replica plan',
      spec: {
        service: 'a9s-keyvalue8',
        plan: 'keyvalue-replica-medium-ssl',
        parameters: { maxmemoryPolicy: 'volatile-lfu', notifyKeyspaceEvents: 'KEA', minReplicasToWrite: 1, minReplicasMaxLag: 10 },
      },
      valid: true,
    },
    {
      name: 'single, replica-only minReplicasMaxLag',
      reason: 'minReplicasMaxLag needs a replica plan',
      spec: { service: 'a9s-keyvalue8', plan: 'keyvalue-single-small-ssl', parameters: { minReplicasMaxLag: 10 } },
      valid: false,
      error: 'minReplicasMaxLag is only accepted with replica plans',
    },
    {
      name: 'single, replica-only minReplicasToWrite',
      reason: 'minReplicasToWrite needs a replica plan',
      spec: { service: 'a9s-keyvalue8', plan: 'keyvalue-single-small-ssl', parameters: { minReplicasToWrite: 1 } },
      valid: false,
      error: 'minReplicasToWrite is only accepted with replica plans',
    },
    {
      name: 'single, shared parameters',
      reason: 'non-replica parameters on a single plan',
      spec: { service: 'a9s-keyvalue8', plan: 'keyvalue-single-nano-ssl', parameters: { maxmemoryPolicy: 'noeviction' } },
      valid: true,
    },
    {
      name: 'unknown eviction policy',
      reason: 'maxmemoryPolicy is an enum',
      spec: { service: 'a9s-keyvalue8', plan: 'keyvalue-single-small-ssl', parameters: { maxmemoryPolicy: 'lru' } },
      valid: false,
      error: 'maxmemoryPolicy',
    },
  ],
  update: transitionCases({
    service: 'a9s-keyvalue8',
    small: 'keyvalue-single-small-ssl',
    big: 'keyvalue-single-big-ssl',
    multi: 'keyvalue-replica-small-ssl',
    singleAsBig: 'keyvalue-single-big-ssl',
  }),
} satisfies ApiCases;
