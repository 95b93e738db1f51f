/** Valkey ("KeyValue") on a9s; the broker takes kebab-case keys, and replication settings only on replica plans. */
import { DataService, planMatrix, s } from '..';

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
  parameters: [
    {
      name: 'maxmemoryPolicy',
      schema: s.string({
        enum: [
          'volatile-lru',
          'allkeys-lru',
          'volatile-lfu',
          'allkeys-lfu',
          'volatile-random',
          'allkeys-random',
          'volatile-ttl',
          'noeviction',
        ],
      }),
      keys: { a9s: 'maxmemory-policy' },
    },
    {
      name: 'notifyKeyspaceEvents',
      schema: s.string({ pattern: '^[KEg$lshzxeAtmdn]*$', description: 'Valkey notify-keyspace-events flags.' }),
      keys: { a9s: 'notify-keyspace-events' },
    },
    {
      name: 'minReplicasToWrite',
      schema: s.integer({ minimum: 0, maximum: 2 }),
      keys: { a9s: 'min-replicas-to-write' },
      topologies: ['replica'],
    },
    {
      name: 'minReplicasMaxLag',
      schema: s.integer({ minimum: 1, description: 'Seconds.' }),
      keys: { a9s: 'min-replicas-max-lag' },
      topologies: ['replica'],
    },
  ],
  exampleParameters: { maxmemoryPolicy: 'allkeys-lru' },
});
