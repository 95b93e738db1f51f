/**
 * LogMe2 (OpenSearch + Fluentd log stack) on a9s; a plan never moves between single and cluster. Parameters, schemas
 * and keys as in Klutch's XRD and Composition (v1.5.0), including its spelling of the Fluentd TLS versions.
 */
import { DataService, type Plan, s } from '..';
import { JAVA_GC } from './search';

const port = s.integer({ minimum: 1, maximum: 65535 });
const tlsVersion = s.string({ enum: ['TLSv1_1', 'TLS1_2', 'TLS1_3'] });
const plans: Plan[] = [
  { name: 'logme-single-small-ssl', topology: 'single', size: 'small', ssl: true },
  { name: 'logme-cluster-small-ssl', topology: 'cluster', size: 'small', ssl: true },
];

export default new DataService({
  name: 'logme2',
  kind: 'Logme2Instance',
  description: 'A LogMe2 log stack.',
  defaultBackend: 'a9s',
  sizes: ['small'],
  a9s: { services: ['a9s-logme2'], plans },
  fixedTopology: true,
  parameters: [
    { name: 'javaHeapspace', schema: s.integer({ minimum: 256, description: 'JVM heap in MB.' }), keys: { a9s: 'java_heapspace' } },
    {
      name: 'javaMaxmetaspace',
      schema: s.integer({ minimum: 256, maximum: 1024, description: 'JVM metaspace in MB.' }),
      keys: { a9s: 'java_maxmetaspace' },
    },
    { name: 'javaGarbageCollector', schema: s.string({ enum: JAVA_GC }), keys: { a9s: 'java_garbage_collector' } },
    {
      name: 'ismDeletionAfter',
      schema: s.string({ description: 'Index age after which indices are deleted: a number and s, m, h or d, e.g. 14d.' }),
      keys: { a9s: 'ism_deletion_after' },
    },
    {
      name: 'ismJobInterval',
      schema: s.integer({ minimum: 1, description: 'Minutes between index state management runs.' }),
      keys: { a9s: 'ism_job_interval' },
    },
    {
      name: 'ismJitter',
      schema: s.number({ minimum: 0, description: 'Jitter of the index state management job interval.' }),
      keys: { a9s: 'ism_jitter' },
    },
    {
      name: 'opensearchTlsProtocols',
      schema: s.array(s.string({ enum: ['TLSv1.2', 'TLSv1.3'] })),
      keys: { a9s: 'opensearch-tls-protocols' },
    },
    { name: 'opensearchTlsCiphers', schema: s.array(s.string()), keys: { a9s: 'opensearch-tls-ciphers' } },
    { name: 'fluentdUdp', schema: port, keys: { a9s: 'fluentd-udp' } },
    { name: 'fluentdTcp', schema: port, keys: { a9s: 'fluentd-tcp' } },
    { name: 'fluentdTls', schema: port, keys: { a9s: 'fluentd-tls' } },
    { name: 'fluentdTlsCiphers', schema: s.string(), keys: { a9s: 'fluentd-tls-ciphers' } },
    { name: 'fluentdTlsVersion', schema: tlsVersion, keys: { a9s: 'fluentd-tls-version' } },
    { name: 'fluentdTlsMinVersion', schema: tlsVersion, keys: { a9s: 'fluentd-tls-min-version' } },
    { name: 'fluentdTlsMaxVersion', schema: tlsVersion, keys: { a9s: 'fluentd-tls-max-version' } },
    {
      name: 'groks',
      schema: s.array(s.object({ pattern: s.string() }, { required: ['pattern'] })),
      keys: { a9s: 'groks' },
    },
  ],
  exampleParameters: { ismDeletionAfter: '14d', fluentdTls: 6514 },
});
