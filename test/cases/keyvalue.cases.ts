import type { ApiCases, CreateCase } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';

const single = 'keyvalue-single-small-ssl';
const replica = 'keyvalue-replica-medium-ssl';
const claim = (plan: string, parameters: Record<string, unknown>) => ({ spec: { service: 'a9s-keyvalue8', plan, parameters } });

/** Every parameter of Klutch's KeyValue XRD, with a value it accepts. */
const everyParameter = {
  snapshot: "['save 900 1','save 300 10']",
  replBacklogSize: '64mb',
  minReplicasToWrite: 1,
  minReplicasMaxLag: 10,
  lazyfreeLazyEviction: 'yes',
  lazyfreeLazyExpire: 'no',
  maxmemory: 'dynamic',
  maxmemoryPolicy: 'volatile-lfu',
  maxmemorySamples: 5,
  maxclients: 10000,
  downAfterMilliseconds: 30000,
  failoverTimeout: 180000,
  hostnameResolution: 'resolve-only',
  tlsProtocols: 'TLSv1.3 TLSv1.2',
  tlsCiphers: 'HIGH:!aNULL',
  tlsCiphersuites: 'TLS_AES_256_GCM_SHA384',
  luaTimeLimit: 5000,
  notifyKeyspaceEvents: 'KEA',
};
const REPLICA_ONLY = [
  'replBacklogSize',
  'minReplicasToWrite',
  'minReplicasMaxLag',
  'downAfterMilliseconds',
  'failoverTimeout',
  'hostnameResolution',
];

/** Values Klutch's rules refuse (bounds and patterns), each on a replica plan so only that rule speaks. */
const refused: [string, unknown][] = [
  ['snapshot', 'save 900 1'],
  ['snapshot', "['save 0 1']"],
  ['replBacklogSize', '64 mb'],
  ['minReplicasToWrite', -1],
  ['minReplicasMaxLag', 0],
  ['maxmemory', '01gb'],
  ['maxmemorySamples', -1],
  ['maxclients', -1],
  ['downAfterMilliseconds', -1],
  ['failoverTimeout', -1],
  ['luaTimeLimit', -1],
  ['notifyKeyspaceEvents', 'g'],
  ['notifyKeyspaceEvents', 'Kt'],
  ['lazyfreeLazyEviction', 'true'],
  ['tlsProtocols', 'TLSv1.1'],
];

export default {
  api: 'keyvalue',
  create: [
    ...commonCreateCases({ service: 'a9s-keyvalue8', plan: single }, { name: 'minReplicasMaxLag', wrongType: '10s' }),
    {
      name: 'replica, every parameter',
      reason: "every parameter of Klutch's XRD",
      spec: { ...claim(replica, everyParameter).spec, acceptsIncomplete: false },
      valid: true,
    },
    {
      name: 'single, every parameter it takes',
      reason: 'the parameters that are not replica-only, on a single plan',
      ...claim(single, Object.fromEntries(Object.entries(everyParameter).filter(([k]) => !REPLICA_ONLY.includes(k)))),
      valid: true,
    },
    {
      name: 'snapshots off',
      reason: '`[]` turns snapshots off (cache only)',
      ...claim(single, { snapshot: '[]', maxmemory: '0', notifyKeyspaceEvents: '' }),
      valid: true,
    },
    ...REPLICA_ONLY.map<CreateCase>((name) => ({
      name: `single, replica-only ${name}`,
      reason: `${name} needs a replica plan (Klutch rule)`,
      ...claim(single, { [name]: everyParameter[name as keyof typeof everyParameter] }),
      valid: false,
      error: `The parameter ${name} is only accepted with replica plans`,
    })),
    ...refused.map<CreateCase>(([name, value]) => ({
      name: `${name} ${JSON.stringify(value)}`,
      reason: `Klutch refuses ${JSON.stringify(value)} for ${name}`,
      ...claim(replica, { [name]: value }),
      valid: false,
      error: name,
    })),
    {
      name: 'unknown eviction policy',
      reason: 'maxmemoryPolicy is an enum',
      ...claim(single, { maxmemoryPolicy: 'lru' }),
      valid: false,
      error: 'maxmemoryPolicy',
    },
    ...servicePlanClaims(klutchEnums('a9s/keyvalue/definition.yaml')),
  ],
  update: transitionCases({
    service: 'a9s-keyvalue8',
    small: 'keyvalue-single-small-ssl',
    big: 'keyvalue-single-big-ssl',
    smaller: 'keyvalue-single-nano-ssl',
    multi: 'keyvalue-replica-small-ssl',
    singleAsBig: 'keyvalue-single-big-ssl',
    fixedTopology: true,
  }),
} satisfies ApiCases;
