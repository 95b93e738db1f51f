/** OpenSearch ("Search") on a9s; every plan uses TLS. Parameters, schemas and keys as in Klutch's XRD and Composition (v1.5.0). */
import { DataService, planMatrix, s } from '..';

export const JAVA_GC = ['UseSerialGC', 'UseParallelGC', 'UseParallelOldGC', 'UseG1GC'];

export default new DataService({
  name: 'search',
  kind: 'SearchInstance',
  description: 'An OpenSearch instance.',
  defaultBackend: 'a9s',
  sizes: ['nano', 'small', 'medium', 'big'],
  a9s: {
    services: ['a9s-search2'],
    plans: planMatrix({
      prefix: 'search',
      topologies: { single: ['nano', 'small', 'medium', 'big'], cluster: ['small', 'medium', 'big'] },
      ssl: 'only',
    }),
  },
  parameters: [
    { name: 'javaHeapspace', schema: s.integer({ minimum: 256, description: 'JVM heap in MB.' }), keys: { a9s: 'java_heapspace' } },
    {
      name: 'javaMaxmetaspace',
      schema: s.integer({ minimum: 256, maximum: 1024, description: 'JVM metaspace in MB.' }),
      keys: { a9s: 'java_maxmetaspace' },
    },
    { name: 'javaGarbageCollector', schema: s.string({ enum: JAVA_GC }), keys: { a9s: 'java_garbage_collector' } },
    {
      name: 'tlsProtocols',
      schema: s.array(s.string({ enum: ['TLSv1.2', 'TLSv1.3'] })),
      keys: { a9s: 'tls-protocols' },
    },
    { name: 'tlsCiphers', schema: s.array(s.string()), keys: { a9s: 'tls-ciphers' } },
  ],
  exampleParameters: { javaHeapspace: 1024 },
});
