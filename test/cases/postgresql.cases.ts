import type { ApiCases, CreateCase } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { servicePlanClaims } from './klutch';

const a9sParams = {
  maxConnections: 250.5,
  tempFileLimit: -1,
  trackIoTiming: 'on',
  archiveTimeout: 60,
  statementTimeout: 0,
  walWriterDelay: 200,
  maxReplicationSlots: 10,
  maxWalSenders: 10,
  synchronousCommit: 'remote_apply',
  logStatement: 'ddl',
  logErrorVerbosity: 'VERBOSE',
  clientMinMessages: 'NOTICE',
  logMinMessages: 'WARNING',
  logMinErrorStatement: 'ERROR',
  dataChecksums: 'enabled',
  effectiveCacheSize: '4GB',
  workMem: '4MB',
  maintenanceWorkMem: '64MB',
  idleInTransactionSessionTimeout: 60000,
  rolePrivileges: ['CREATEDB'],
  walLevelLogical: true,
};
const a8sParams = {
  maxConnections: 100,
  tempFileLimit: 1024,
  trackIoTiming: 'off',
  archiveTimeout: 60,
  statementTimeout: 30000,
  walWriterDelay: 200,
  maxReplicationSlots: 10,
  maxWalSenders: 10,
  synchronousCommit: 'on',
  logStatement: 'all',
  logErrorVerbosity: 'TERSE',
  clientMinMessages: 'DEBUG1',
  logMinMessages: 'PANIC',
  logMinErrorStatement: 'INFO',
  maxLocksPerTransaction: 64,
  sslCiphers: 'HIGH:!aNULL',
  sslMinProtocolVersion: 'TLSv1.2',
};

// Klutch's services and plans per composition, as its XRD's CEL rules list them.
const A9S_SERVICES = ['a9s-postgresql13', 'a9s-postgresql15', 'a9s-postgresql17'];
const A8S_SERVICES = ['a9s-postgresql13', 'a9s-postgresql14'];
const SERVICES = ['a9s-postgresql13', 'a9s-postgresql14', 'a9s-postgresql15', 'a9s-postgresql17'];
const A9S_PLANS = ['single-nano', 'single-small', 'single-big', 'replica-small', 'replica-big'].flatMap((p) =>
  ['', '-bionic', '-ssl', '-ssl-bionic'].map((v) => `postgresql-${p}${v}`),
);
const A8S_PLANS = ['replica', 'single'].flatMap((t) => ['nano', 'small', 'medium', 'big'].map((z) => `postgresql-${t}-${z}`));
const PLANS = [...new Set([...A9S_PLANS, ...A8S_PLANS])];

const small = (backend: 'a9s' | 'a8s', parameters: Record<string, unknown>) => ({
  backend,
  spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters },
});

/** A claim on the CloudNativePG backend, which offers PostgreSQL 15 only. */
const onCnpg = (parameters: Record<string, unknown>) => ({
  backend: 'cnpg' as const,
  spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters },
});

/** A cnpg instance restored from another's backups (the example offering has an object store). */
const RESTORED = {
  backend: 'cnpg' as const,
  spec: {
    service: 'a9s-postgresql15',
    plan: 'postgresql-single-nano',
    restoreFrom: { instance: 'orders', pointInTime: '2026-12-03T04:00:00Z' },
  },
};

/** Klutch's bounds (CEL rules there, minimum here), each broken once. */
const boundCases: CreateCase[] = [
  ['idleInTransactionSessionTimeout', -1, 'a9s'],
  ['maxReplicationSlots', -1, 'a9s'],
  ['maxWalSenders', -1, 'a8s'],
  ['maxLocksPerTransaction', 9, 'a8s'],
  ['walWriterDelay', -5, 'a8s'],
  ['tempFileLimit', -2, 'a8s'],
].map(([name, value, backend]) => ({
  name: `${name} ${value}`,
  reason: `${name} is bounded (Klutch rule)`,
  ...small(backend as 'a9s' | 'a8s', { [name as string]: value }),
  valid: false,
  error: name as string,
}));

/** Parameters only one backend offers: refused with the other composition, as Klutch does. */
const backendOnlyCases: CreateCase[] = [
  ...Object.entries({
    dataChecksums: 'disabled',
    effectiveCacheSize: '1GB',
    workMem: '8MB',
    maintenanceWorkMem: '128MB',
    idleInTransactionSessionTimeout: 1000,
    rolePrivileges: ['CREATEROLE', 'REPLICATION'],
    walLevelLogical: false,
  }).map(([name, value]) => ({ name, value, only: 'a9s' as const })),
  ...Object.entries({ maxLocksPerTransaction: 10, sslCiphers: 'HIGH', sslMinProtocolVersion: 'TLSv1.3' }).map(([name, value]) => ({
    name,
    value,
    only: 'a8s' as const,
  })),
].flatMap(({ name, value, only }) => {
  // CloudNativePG takes every one of them as a PostgreSQL setting except those it cannot honour (backends/cnpg.ts).
  const cnpg = !['dataChecksums', 'rolePrivileges', 'walLevelLogical'].includes(name);
  const offered = [`${only}-postgresql`, ...(cnpg ? ['cnpg-postgresql'] : [])].join(', ');
  const error = `The parameter ${name} is only offered by the ${offered} composition`;
  return [
    { name: `${name} on ${only}`, reason: `${name} is a ${only} parameter`, ...small(only, { [name]: value }), valid: true },
    {
      name: `${name} on ${only === 'a9s' ? 'a8s' : 'a9s'}`,
      reason: `${name} is a ${only} parameter (Klutch rule)`,
      ...small(only === 'a9s' ? 'a8s' : 'a9s', { [name]: value }),
      valid: false,
      error,
    },
    cnpg
      ? { name: `${name} on cnpg`, reason: `CloudNativePG has the setting`, ...onCnpg({ [name]: value }), valid: true }
      : {
          name: `${name} on cnpg`,
          reason: 'CloudNativePG cannot honour it: refused with a message, not dropped',
          ...onCnpg({ [name]: value }),
          valid: false,
          error,
        },
  ];
});

/** Claims as Klutch's documentation writes them. */
const klutchDocs: CreateCase[] = [
  {
    name: 'klutch docs a8s',
    reason: "Klutch's documented a8s PostgresqlInstance",
    backend: 'a8s',
    spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-nano', expose: 'Internal' },
    valid: true,
  },
  {
    name: 'klutch docs a9s',
    reason: "Klutch's documented a9s PostgresqlInstance",
    backend: 'a9s',
    spec: { acceptsIncomplete: true, service: 'a9s-postgresql13', plan: 'postgresql-single-small' },
    valid: true,
  },
  {
    name: 'klutch docs a8s with parameters',
    reason: "Klutch's documented a8s parameters",
    backend: 'a8s',
    spec: {
      service: 'a9s-postgresql14',
      plan: 'postgresql-replica-small',
      expose: 'LoadBalancer',
      parameters: { maxConnections: 100.0, sslMinProtocolVersion: 'TLSv1.2', logMinMessages: 'WARNING', trackIoTiming: 'on' },
    },
    valid: true,
  },
];

export default {
  api: 'postgresql',
  create: [
    ...commonCreateCases(
      { service: 'a9s-postgresql15', plan: 'postgresql-single-small', backend: 'a9s' },
      { name: 'maxConnections', wrongType: 'many' },
    ),
    {
      name: 'a9s, every parameter',
      reason: 'all a9s parameters',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql17', plan: 'postgresql-replica-big-ssl', parameters: a9sParams },
      valid: true,
    },
    {
      name: 'a8s, every parameter',
      reason: 'all a8s parameters',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-replica-medium', expose: 'LoadBalancer', parameters: a8sParams },
      valid: true,
    },
    {
      name: 'default composition',
      reason: 'a claim without compositionRef uses a8s-postgresql (Klutch CEL breaks this)',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-nano' },
      valid: true,
    },
    {
      name: 'default composition, a9s-only service',
      reason: 'a8s offers 13 and 14',
      spec: { service: 'a9s-postgresql17', plan: 'postgresql-single-nano' },
      valid: false,
      error: 'The a8s-postgresql composition offers the services',
    },
    {
      name: 'a9s, a8s-only service',
      reason: 'a9s offers 13, 15, 17',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-small' },
      valid: false,
      error: 'The a9s-postgresql composition offers the services',
    },
    {
      name: 'a9s, a8s-only plan',
      reason: 'a9s has no medium plans',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-medium' },
      valid: false,
      error: 'The a9s-postgresql composition offers the plans',
    },
    {
      name: 'a8s, a9s-only plan',
      reason: 'a8s has no ssl plans',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small-ssl' },
      valid: false,
      error: 'The a8s-postgresql composition offers the plans',
    },
    {
      name: 'cnpg, a service it has no image for',
      reason: 'the cnpg offering runs PostgreSQL 15 only',
      backend: 'cnpg',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-nano' },
      valid: false,
      error: 'The cnpg-postgresql composition offers the services a9s-postgresql15',
    },
    {
      name: 'cnpg, restored from another instance to a point in time',
      reason: "the example cnpg offering has an object store: a new instance recovers from another's backups",
      backend: 'cnpg',
      spec: { ...RESTORED.spec },
      valid: true,
    },
    {
      name: 'a8s, restoreFrom',
      reason: 'only the cnpg composition restores from backups into a new instance',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-nano', restoreFrom: { instance: 'orders' } },
      valid: false,
      error: 'restoreFrom is only offered by the cnpg-postgresql composition',
    },
    {
      name: 'cnpg, an ssl plan',
      reason: 'the cnpg offering has the a8s plans, none with ssl',
      backend: 'cnpg',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small-ssl' },
      valid: false,
      error: 'The cnpg-postgresql composition offers the plans',
    },
    {
      name: 'bionic with 13',
      reason: 'bionic plans exist for PostgreSQL 13',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small-bionic' },
      valid: true,
    },
    {
      name: 'bionic with 15',
      reason: 'bionic plans only with PostgreSQL 13',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small-bionic' },
      valid: false,
      error: 'only offered with a9s-postgresql13',
    },
    {
      name: 'tempFileLimit 0',
      reason: 'tempFileLimit is -1 or > 0',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { tempFileLimit: 0 } },
      valid: false,
      error: 'tempFileLimit must be -1',
    },
    {
      name: 'walWriterDelay 0',
      reason: 'walWriterDelay > 0',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { walWriterDelay: 0 } },
      valid: false,
      error: 'walWriterDelay',
    },
    {
      name: 'synchronousCommit always',
      reason: 'synchronousCommit is an enum',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { synchronousCommit: 'always' } },
      valid: false,
      error: 'synchronousCommit',
    },
    {
      name: 'workMem with a space',
      reason: 'Klutch takes memory sizes as text (PostgreSQL reads "4 MB")',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { workMem: '4 MB' } },
      valid: true,
    },
    {
      name: 'dataChecksums as a boolean',
      reason: 'Klutch spells dataChecksums enabled/disabled',
      backend: 'a9s',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { dataChecksums: true } },
      valid: false,
      error: 'dataChecksums',
    },
    {
      name: 'maxConnections 100.0',
      reason: 'maxConnections is a number in Klutch',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters: { maxConnections: 100.0 } },
      valid: true,
    },
    {
      name: 'a8s without expose',
      reason: 'expose is optional (the a8s composition defaults it to LoadBalancer)',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql14', plan: 'postgresql-replica-big' },
      valid: true,
    },
    ...boundCases,
    ...backendOnlyCases,
    ...klutchDocs,
    ...servicePlanClaims({
      services: SERVICES,
      plans: PLANS,
      backends: ['a9s', 'a8s'],
      accepts: (service, plan, backend) =>
        backend === 'a9s'
          ? A9S_SERVICES.includes(service) && A9S_PLANS.includes(plan) && (!plan.endsWith('-bionic') || service === 'a9s-postgresql13')
          : A8S_SERVICES.includes(service) && A8S_PLANS.includes(plan),
      error: (service, plan, backend) =>
        !(backend === 'a9s' ? A9S_SERVICES : A8S_SERVICES).includes(service)
          ? `The ${backend}-postgresql composition offers the services`
          : !(backend === 'a9s' ? A9S_PLANS : A8S_PLANS).includes(plan)
            ? `The ${backend}-postgresql composition offers the plans`
            : 'only offered with a9s-postgresql13',
    }),
    {
      name: 'expose bad value',
      reason: 'expose is Internal or LoadBalancer',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', expose: 'Public' },
      valid: false,
      error: 'expose',
    },
    {
      name: 'maxLocksPerTransaction 5',
      reason: 'maxLocksPerTransaction >= 10',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters: { maxLocksPerTransaction: 5 } },
      valid: false,
      error: 'maxLocksPerTransaction',
    },
    {
      name: 'sharedBuffers',
      reason: 'sharedBuffers is left out on purpose',
      backend: 'a8s',
      spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters: { sharedBuffers: 128 } },
      valid: false,
      error: 'sharedBuffers',
    },
  ],
  update: [
    ...transitionCases({
      service: 'a9s-postgresql13',
      otherService: 'a9s-postgresql15',
      backend: 'a9s',
      small: 'postgresql-single-small',
      big: 'postgresql-single-big',
      multi: 'postgresql-replica-small',
      singleAsBig: 'postgresql-single-big',
      otherSsl: 'postgresql-single-small-ssl',
      smaller: 'postgresql-single-nano',
      variant: 'postgresql-single-small-bionic',
    }),
    {
      name: 'cnpg, a restored instance changed otherwise',
      reason: 'restoreFrom stays as it was made: the rest of the claim may change',
      ...RESTORED,
      patch: { deletionProtection: true },
      valid: true,
    },
    {
      name: 'cnpg, restoreFrom pointed elsewhere',
      reason: 'an instance recovers once, when it is made: restoreFrom cannot change',
      ...RESTORED,
      patch: { restoreFrom: { pointInTime: '2026-12-03T05:00:00Z' } },
      valid: false,
      error: 'restoreFrom cannot be changed: create a new instance to restore into',
    },
    {
      name: 'cnpg, restoreFrom added later',
      reason: 'restoring over a running instance is not what restoreFrom does: it is set when an instance is made',
      backend: 'cnpg',
      spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-nano' },
      patch: { restoreFrom: { instance: 'orders' } },
      valid: false,
      error: 'restoreFrom is set when an instance is made and cannot be added or removed',
    },
    {
      name: 'cnpg, restoreFrom removed',
      reason: 'restoreFrom is set when an instance is made and stays',
      ...RESTORED,
      patch: { restoreFrom: null },
      valid: false,
      error: 'restoreFrom is set when an instance is made and cannot be added or removed',
    },
  ],
} satisfies ApiCases;
