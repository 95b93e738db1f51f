/**
 * Valkey ("KeyValue") on a9s. The broker takes kebab-case keys; replication settings only on replica plans; a plan
 * never moves between single and replica. Parameters, schemas and keys as in Klutch's XRD and Composition (v1.5.0).
 */
import { DataService, planMatrix, s, type Parameter } from '..';

const yesNo = s.string({ enum: ['yes', 'no'] });
/** A size in bytes, optionally with k(b), m(b) or g(b). */
const SIZE = '[1-9][0-9]*((k|m|g)b?)?';

const parameters: Parameter[] = [
  {
    name: 'snapshot',
    schema: s.string({
      pattern: "^\\[('save [1-9][0-9]* [1-9][0-9]*'(,'save [1-9][0-9]* [1-9][0-9]*')*)?\\]$",
      description: "Snapshot rules, `['save <seconds> <writes>',...]`; `[]` disables snapshots (cache only).",
    }),
    keys: { a9s: 'snapshot' },
  },
  {
    name: 'replBacklogSize',
    schema: s.string({ pattern: `^${SIZE}$`, description: 'Replication backlog size (enabled per broker by the operator).' }),
    keys: { a9s: 'repl-backlog-size' },
    topologies: ['replica'],
  },
  {
    name: 'minReplicasToWrite',
    schema: s.integer({ minimum: 0, description: 'Connected replicas the primary needs to accept writes; 0 disables.' }),
    keys: { a9s: 'min-replicas-to-write' },
    topologies: ['replica'],
  },
  {
    name: 'minReplicasMaxLag',
    schema: s.integer({ minimum: 1, description: 'Seconds a replica may lag before it counts as disconnected.' }),
    keys: { a9s: 'min-replicas-max-lag' },
    topologies: ['replica'],
  },
  { name: 'lazyfreeLazyEviction', schema: yesNo, keys: { a9s: 'lazyfree-lazy-eviction' } },
  { name: 'lazyfreeLazyExpire', schema: yesNo, keys: { a9s: 'lazyfree-lazy-expire' } },
  {
    name: 'maxmemory',
    schema: s.string({ pattern: `^dynamic$|^0$|^${SIZE}$`, description: '`dynamic`, `0` (no limit) or a size.' }),
    keys: { a9s: 'maxmemory' },
  },
  {
    name: 'maxmemoryPolicy',
    schema: s.string({
      enum: [
        'volatile-lru',
        'volatile-lfu',
        'volatile-random',
        'volatile-ttl',
        'allkeys-lru',
        'allkeys-lfu',
        'allkeys-random',
        'noeviction',
      ],
    }),
    keys: { a9s: 'maxmemory-policy' },
  },
  { name: 'maxmemorySamples', schema: s.integer({ minimum: 0 }), keys: { a9s: 'maxmemory-samples' } },
  { name: 'maxclients', schema: s.integer({ minimum: 0 }), keys: { a9s: 'maxclients' } },
  {
    name: 'downAfterMilliseconds',
    schema: s.integer({ minimum: 0 }),
    keys: { a9s: 'down-after-milliseconds' },
    topologies: ['replica'],
  },
  {
    name: 'failoverTimeout',
    schema: s.integer({ minimum: 0, description: 'Milliseconds.' }),
    keys: { a9s: 'failover-timeout' },
    topologies: ['replica'],
  },
  {
    name: 'hostnameResolution',
    schema: s.string({ enum: ['disabled', 'resolve-only', 'enabled'] }),
    keys: { a9s: 'hostname-resolution' },
    topologies: ['replica'],
  },
  {
    name: 'tlsProtocols',
    schema: s.string({ enum: ['TLSv1.2', 'TLSv1.3', 'TLSv1.2 TLSv1.3', 'TLSv1.3 TLSv1.2'] }),
    keys: { a9s: 'tls-protocols' },
  },
  { name: 'tlsCiphers', schema: s.string({ description: 'ciphers(1ssl) syntax; not validated.' }), keys: { a9s: 'tls-ciphers' } },
  { name: 'tlsCiphersuites', schema: s.string({ description: 'TLSv1.3 ciphersuites; not validated.' }), keys: { a9s: 'tls-ciphersuites' } },
  { name: 'luaTimeLimit', schema: s.integer({ minimum: 0, description: 'Milliseconds.' }), keys: { a9s: 'lua-time-limit' } },
  {
    name: 'notifyKeyspaceEvents',
    schema: s.string({ pattern: '^$|^[KEg\\$lshzxeA]*[KE][KEg\\$lshzxeA]*$', description: 'Valkey notify-keyspace-events flags.' }),
    keys: { a9s: 'notify-keyspace-events' },
  },
];

export default new DataService({
  name: 'keyvalue',
  kind: 'KeyvalueInstance',
  description: 'A Valkey instance.',
  defaultBackend: 'a9s',
  sizes: ['nano', 'small', 'medium', 'big'],
  a9s: {
    services: ['a9s-keyvalue8'],
    plans: planMatrix({
      prefix: 'keyvalue',
      topologies: { single: ['nano', 'small', 'medium', 'big'], replica: ['small', 'medium', 'big'] },
      ssl: 'only',
    }),
  },
  fixedTopology: true,
  parameters,
  exampleParameters: { maxmemoryPolicy: 'allkeys-lru' },
});
