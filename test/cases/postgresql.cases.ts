import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';

const a9sParams = {
  maxConnections: 100, tempFileLimit: -1, trackIoTiming: 'on', archiveTimeout: 60, statementTimeout: 0, walWriterDelay: 200,
  maxReplicationSlots: 10, maxWalSenders: 10, synchronousCommit: 'remote_apply', logStatement: 'ddl', logErrorVerbosity: 'VERBOSE',
  clientMinMessages: 'NOTICE', logMinMessages: 'WARNING', logMinErrorStatement: 'ERROR', dataChecksums: true, effectiveCacheSize: '4GB',
  workMem: '4MB', maintenanceWorkMem: '64MB', idleInTransactionSessionTimeout: 60000, rolePrivileges: ['CREATEDB'], walLevelLogical: true,
};
const a8sParams = {
  maxConnections: 100, tempFileLimit: 1024, trackIoTiming: 'off', archiveTimeout: 60, statementTimeout: 30000, walWriterDelay: 200,
  maxReplicationSlots: 10, maxWalSenders: 10, synchronousCommit: 'on', logStatement: 'all', logErrorVerbosity: 'TERSE',
  clientMinMessages: 'DEBUG1', logMinMessages: 'PANIC', logMinErrorStatement: 'INFO', maxLocksPerTransaction: 64,
  sslCiphers: 'HIGH:!aNULL', sslMinProtocolVersion: 'TLSv1.2',
};

export default {
  api: 'postgresql',
  create: [
    ...commonCreateCases({ service: 'a9s-postgresql15', plan: 'postgresql-single-small', backend: 'a9s' }, { name: 'maxConnections', wrongType: 'many' }),
    { name: 'a9s, every parameter', reason: 'all a9s parameters', backend: 'a9s', spec: { service: 'a9s-postgresql17', plan: 'postgresql-replica-big-ssl', parameters: a9sParams }, valid: true },
    { name: 'a8s, every parameter', reason: 'all a8s parameters', backend: 'a8s', spec: { service: 'a9s-postgresql14', plan: 'postgresql-replica-medium', expose: 'LoadBalancer', parameters: a8sParams }, valid: true },
    { name: 'default composition', reason: 'a claim without compositionRef uses a8s-postgresql (Klutch CEL breaks this)', spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-nano' }, valid: true },
    { name: 'default composition, a9s-only service', reason: 'a8s offers 13 and 14', spec: { service: 'a9s-postgresql17', plan: 'postgresql-single-nano' }, valid: false, error: 'The a8s-postgresql composition offers the services' },
    { name: 'a9s, a8s-only service', reason: 'a9s offers 13, 15, 17', backend: 'a9s', spec: { service: 'a9s-postgresql14', plan: 'postgresql-single-small' }, valid: false, error: 'The a9s-postgresql composition offers the services' },
    { name: 'a9s, a8s-only plan', reason: 'a9s has no medium plans', backend: 'a9s', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-medium' }, valid: false, error: 'The a9s-postgresql composition offers the plans' },
    { name: 'a8s, a9s-only plan', reason: 'a8s has no ssl plans', backend: 'a8s', spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small-ssl' }, valid: false, error: 'The a8s-postgresql composition offers the plans' },
    { name: 'bionic with 13', reason: 'bionic plans exist for PostgreSQL 13', backend: 'a9s', spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small-bionic' }, valid: true },
    { name: 'bionic with 15', reason: 'bionic plans only with PostgreSQL 13', backend: 'a9s', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small-bionic' }, valid: false, error: 'only offered with a9s-postgresql13' },
    { name: 'tempFileLimit 0', reason: 'tempFileLimit is -1 or > 0', backend: 'a9s', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { tempFileLimit: 0 } }, valid: false, error: 'tempFileLimit must be -1' },
    { name: 'walWriterDelay 0', reason: 'walWriterDelay > 0', backend: 'a9s', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { walWriterDelay: 0 } }, valid: false, error: 'walWriterDelay' },
    { name: 'synchronousCommit always', reason: 'synchronousCommit is an enum', backend: 'a9s', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { synchronousCommit: 'always' } }, valid: false, error: 'synchronousCommit' },
    { name: 'workMem without unit', reason: 'memory sizes carry a unit', backend: 'a9s', spec: { service: 'a9s-postgresql15', plan: 'postgresql-single-small', parameters: { workMem: '4 MB' } }, valid: false, error: 'workMem' },
    { name: 'expose bad value', reason: 'expose is Internal or LoadBalancer', backend: 'a8s', spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', expose: 'Public' }, valid: false, error: 'expose' },
    { name: 'maxLocksPerTransaction 5', reason: 'maxLocksPerTransaction >= 10', backend: 'a8s', spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters: { maxLocksPerTransaction: 5 } }, valid: false, error: 'maxLocksPerTransaction' },
    { name: 'sharedBuffers', reason: 'sharedBuffers is left out on purpose', backend: 'a8s', spec: { service: 'a9s-postgresql13', plan: 'postgresql-single-small', parameters: { sharedBuffers: 128 } }, valid: false, error: 'sharedBuffers' },
  ],
  update: transitionCases({
    service: 'a9s-postgresql13', otherService: 'a9s-postgresql15', backend: 'a9s',
    small: 'postgresql-single-small', big: 'postgresql-single-big', multi: 'postgresql-replica-small', singleAsBig: 'postgresql-single-big',
    otherSsl: 'postgresql-single-small-ssl',
  }),
} satisfies ApiCases;
