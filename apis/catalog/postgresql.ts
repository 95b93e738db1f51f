/**
 * PostgreSQL on a9s (VMs, provider-anynines), a8s (Kubernetes, the a8s PostgreSQL operator) and cnpg (Kubernetes, the
 * open-source CloudNativePG operator; backends/cnpg.ts).
 */
import { DataService, type Parameter, planMatrix, s } from '..';

/** PostgreSQL's message levels, as the claim spells them (a9s takes them so; a8s wants them lower-cased). */
const CLIENT_LEVELS = ['DEBUG5', 'DEBUG4', 'DEBUG3', 'DEBUG2', 'DEBUG1', 'LOG', 'NOTICE', 'WARNING', 'ERROR'];
const SERVER_LEVELS = ['DEBUG5', 'DEBUG4', 'DEBUG3', 'DEBUG2', 'DEBUG1', 'INFO', 'NOTICE', 'WARNING', 'ERROR', 'LOG', 'FATAL', 'PANIC'];
const onOff = s.string({ enum: ['on', 'off'] });

// Schemas and broker keys as in Klutch's XRD and Compositions (v1.5.0): a number where Klutch has `type: number`
// (`maxConnections: 100.0` is accepted), bounds only where Klutch has them.
const parameters: Parameter[] = [
  // Shared by both backends.
  {
    name: 'maxConnections',
    schema: s.number({ description: 'The maximum number of concurrent connections.' }),
    keys: { a9s: 'max_connections', a8s: 'maxConnections', cnpg: 'max_connections' },
  },
  {
    name: 'tempFileLimit',
    schema: s.integer({
      description: 'Disk space per process for temporary files, in kB; -1 for no limit.',
      rules: [{ rule: 'self == -1 || self > 0', message: 'tempFileLimit must be -1 (no limit) or greater than 0' }],
    }),
    // Klutch once mapped this to `temp_file_Limit`, which the broker ignores (klutchio #101); the key is `temp_file_limit`.
    keys: { a9s: 'temp_file_limit', a8s: 'tempFileLimitKiloBytes', cnpg: 'temp_file_limit' },
  },
  { name: 'trackIoTiming', schema: onOff, keys: { a9s: 'track_io_timing', a8s: 'trackIOTiming', cnpg: 'track_io_timing' } },
  {
    name: 'archiveTimeout',
    schema: s.integer({ description: 'Seconds.' }),
    keys: { a9s: 'archive_timeout', a8s: 'archiveTimeoutSeconds', cnpg: 'archive_timeout' },
  },
  {
    name: 'statementTimeout',
    schema: s.integer({ description: 'Milliseconds; 0 disables.' }),
    keys: { a9s: 'statement_timeout', a8s: 'statementTimeoutMillis', cnpg: 'statement_timeout' },
  },
  {
    name: 'walWriterDelay',
    schema: s.integer({ minimum: 1, description: 'Milliseconds.' }),
    keys: { a9s: 'wal_writer_delay', a8s: 'walWriterDelayMillis', cnpg: 'wal_writer_delay' },
  },
  {
    name: 'maxReplicationSlots',
    schema: s.integer({ minimum: 0 }),
    keys: { a9s: 'max_replication_slots', a8s: 'maxReplicationSlots', cnpg: 'max_replication_slots' },
  },
  {
    name: 'maxWalSenders',
    schema: s.integer({ minimum: 0 }),
    keys: { a9s: 'max_wal_senders', a8s: 'maxWALSenders', cnpg: 'max_wal_senders' },
  },
  {
    name: 'synchronousCommit',
    schema: s.string({ enum: ['on', 'off', 'local', 'remote_write', 'remote_apply'] }),
    keys: { a9s: 'synchronous_commit', a8s: 'synchronousCommit', cnpg: 'synchronous_commit' },
  },
  {
    name: 'logStatement',
    schema: s.string({ enum: ['none', 'ddl', 'mod', 'all'] }),
    keys: { a9s: 'log_statement', a8s: 'logStatement', cnpg: 'log_statement' },
  },
  {
    name: 'logErrorVerbosity',
    schema: s.string({ enum: ['DEFAULT', 'VERBOSE', 'TERSE'] }),
    keys: { a9s: 'log_error_verbosity', a8s: 'logErrorVerbosity', cnpg: 'log_error_verbosity' },
  },
  {
    name: 'clientMinMessages',
    schema: s.string({ enum: CLIENT_LEVELS }),
    keys: { a9s: 'client_min_messages', a8s: { key: 'clientMinMessages', lowercase: true }, cnpg: 'client_min_messages' },
  },
  // The a9s broker takes the server log levels with a pg_ prefix.
  {
    name: 'logMinMessages',
    schema: s.string({ enum: SERVER_LEVELS }),
    keys: { a9s: 'pg_log_min_messages', a8s: { key: 'logMinMessages', lowercase: true }, cnpg: 'log_min_messages' },
  },
  {
    name: 'logMinErrorStatement',
    schema: s.string({ enum: SERVER_LEVELS }),
    keys: { a9s: 'pg_log_min_error_statement', a8s: { key: 'logMinErrorStatement', lowercase: true }, cnpg: 'log_min_error_statement' },
  },
  // a9s only: refused with a8s-postgresql, as Klutch does. cnpg-postgresql takes the plain settings; it refuses
  // dataChecksums (an initdb option, not a setting), rolePrivileges (the application user is CNPG's) and
  // walLevelLogical (CNPG runs wal_level logical always and manages it).
  { name: 'dataChecksums', schema: s.string({ enum: ['enabled', 'disabled'] }), keys: { a9s: 'data_checksums' }, backends: ['a9s'] },
  {
    name: 'effectiveCacheSize',
    schema: s.string({ description: 'e.g. 4GB' }),
    keys: { a9s: 'effective_cache_size', cnpg: 'effective_cache_size' },
    backends: ['a9s', 'cnpg'],
  },
  {
    name: 'workMem',
    schema: s.string({ description: 'e.g. 4MB' }),
    keys: { a9s: 'work_mem', cnpg: 'work_mem' },
    backends: ['a9s', 'cnpg'],
  },
  {
    name: 'maintenanceWorkMem',
    schema: s.string({ description: 'e.g. 64MB' }),
    keys: { a9s: 'maintenance_work_mem', cnpg: 'maintenance_work_mem' },
    backends: ['a9s', 'cnpg'],
  },
  {
    name: 'idleInTransactionSessionTimeout',
    schema: s.integer({ minimum: 0, description: 'Milliseconds; 0 disables.' }),
    keys: { a9s: 'idle_in_transaction_session_timeout', cnpg: 'idle_in_transaction_session_timeout' },
    backends: ['a9s', 'cnpg'],
  },
  {
    name: 'rolePrivileges',
    schema: s.array(s.string({ enum: ['CREATEDB', 'CREATEROLE', 'REPLICATION'] })),
    keys: { a9s: 'role_privileges' },
    backends: ['a9s'],
  },
  { name: 'walLevelLogical', schema: s.boolean(), keys: { a9s: 'wal_level_logical' }, backends: ['a9s'] },
  // a8s (and cnpg) only: refused with a9s-postgresql. sharedBuffers is left out, as in Klutch: the a8s operator and the broker use
  // different units.
  {
    name: 'maxLocksPerTransaction',
    schema: s.integer({ minimum: 10 }),
    keys: { a8s: 'maxLocksPerTransaction', cnpg: 'max_locks_per_transaction' },
    backends: ['a8s', 'cnpg'],
  },
  { name: 'sslCiphers', schema: s.string(), keys: { a8s: 'sslCiphers', cnpg: 'ssl_ciphers' }, backends: ['a8s', 'cnpg'] },
  {
    name: 'sslMinProtocolVersion',
    schema: s.string({ enum: ['TLSv1', 'TLSv1.1', 'TLSv1.2', 'TLSv1.3'] }),
    keys: { a8s: 'sslMinProtocolVersion', cnpg: 'ssl_min_protocol_version' },
    backends: ['a8s', 'cnpg'],
  },
];

export default new DataService({
  name: 'postgresql',
  kind: 'PostgresqlInstance',
  description: 'A PostgreSQL instance.',
  defaultBackend: 'a8s',
  sizes: ['nano', 'small', 'medium', 'big'],
  a9s: {
    services: ['a9s-postgresql13', 'a9s-postgresql15', 'a9s-postgresql17'],
    plans: planMatrix({
      prefix: 'postgresql',
      topologies: { single: ['nano', 'small', 'big'], replica: ['small', 'big'] },
      ssl: 'both',
      variant: { suffix: '-bionic', services: ['a9s-postgresql13'] },
    }),
  },
  a8s: {
    services: ['a9s-postgresql13', 'a9s-postgresql14'],
    plans: planMatrix({
      prefix: 'postgresql',
      topologies: { single: ['nano', 'small', 'medium', 'big'], replica: ['nano', 'small', 'medium', 'big'] },
      ssl: 'none',
    }),
    resource: { apiVersion: 'postgresql.anynines.com/v1beta3', kind: 'Postgresql' },
    versionPrefix: 'a9s-postgresql',
    // Resources per size and replicas per topology as in Klutch's a8s-postgresql Composition (its labels and maps).
    sizes: {
      nano: { volumeSize: '3Gi', cpu: '2', memory: '1Gi' },
      small: { volumeSize: '10Gi', cpu: '2', memory: '2Gi' },
      medium: { volumeSize: '50Gi', cpu: '2', memory: '4Gi' },
      big: { volumeSize: '100Gi', cpu: '4', memory: '16Gi' },
    },
    replicas: { single: 1, replica: 3 },
  },
  // CloudNativePG with PostgreSQL 15 (Debian's postgresql-15 in the image): the a8s plan names, sized for a shared
  // Kubernetes node rather than a8s' dedicated ones; CNPG's defaults for everything else.
  cnpg: {
    services: ['a9s-postgresql15'],
    plans: planMatrix({
      prefix: 'postgresql',
      topologies: { single: ['nano', 'small', 'medium', 'big'], replica: ['nano', 'small', 'medium', 'big'] },
      ssl: 'none',
    }),
    images: { 'a9s-postgresql15': 'ghcr.io/cloudnative-pg/postgresql:15-bookworm' },
    sizes: {
      nano: { storage: '1Gi', cpu: '250m', memory: '512Mi' },
      small: { storage: '10Gi', cpu: '1', memory: '2Gi' },
      medium: { storage: '50Gi', cpu: '2', memory: '4Gi' },
      big: { storage: '100Gi', cpu: '4', memory: '16Gi' },
    },
    instances: { single: 1, replica: 3 },
    // Private networks only: an operator whose app clusters connect from elsewhere lists their egress ranges.
    sourceRanges: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', 'fc00::/7'],
    // The object store the sandbox runs (docs/backups.md): WAL archived continuously, a backup daily, kept 7 days.
    // An operator names theirs; a control plane without one leaves archiving failing (ContinuousArchiving says why).
    // Small instances: a backup (an app team's Backup claim too) starts at once rather than after a spread checkpoint.
    backups: { endpointURL: 'https://versitygw.klutch-object-store.svc:7070', immediateCheckpoint: true },
  },
  parameters,
  fields: [
    {
      name: 'expose',
      schema: s.string({ enum: ['Internal', 'LoadBalancer'], description: 'How the a8s instance is reachable (default LoadBalancer).' }),
      to: { a8s: 'spec.expose' },
      // Klutch's a8s-postgresql Composition sets LoadBalancer in its base, so a claim without expose gets it.
      defaults: { a8s: 'LoadBalancer' },
    },
  ],
  exampleParameters: { maxConnections: 200, logMinMessages: 'WARNING', statementTimeout: 30000 },
});
