import type { ApiCases } from './types';
import { commonCreateCases } from './builders';

export default {
  api: 'logme2',
  create: [
    ...commonCreateCases({ service: 'a9s-logme2', plan: 'logme-single-small-ssl' }, { name: 'fluentdTcp', wrongType: 'tcp' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      spec: {
        service: 'a9s-logme2',
        plan: 'logme-cluster-small-ssl',
        parameters: {
          javaHeapspace: 1024,
          javaMaxmetaspace: 256,
          javaGarbageCollector: 'UseParallelGC',
          ismDeletionAfter: '30d',
          ismJobInterval: 5,
          opensearchTlsProtocols: ['TLSv1.3'],
          opensearchTlsCiphers: ['TLS_AES_128_GCM_SHA256'],
          fluentdUdp: 514,
          fluentdTcp: 601,
          fluentdTls: 6514,
          fluentdTlsCiphers: 'HIGH',
          fluentdTlsVersion: 'TLSv1_3',
          fluentdTlsMinVersion: 'TLSv1_2',
          fluentdTlsMaxVersion: 'TLSv1_3',
          groks: [{ pattern: '%{COMMONAPACHELOG}' }],
        },
      },
      valid: true,
    },
    {
      name: 'port out of range',
      reason: 'ports are 1..65535',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { fluentdUdp: 70000 } },
      valid: false,
      error: 'fluentdUdp',
    },
    {
      name: 'unknown TLS version',
      reason: 'TLS versions are an enum',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { fluentdTlsVersion: 'TLSv1_0' } },
      valid: false,
      error: 'fluentdTlsVersion',
    },
    {
      name: 'grok without pattern',
      reason: 'a grok has a pattern',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { groks: [{}] } },
      valid: false,
      error: 'pattern',
    },
    {
      name: 'bad deletion age',
      reason: 'ismDeletionAfter is a duration like 14d',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { ismDeletionAfter: 'two weeks' } },
      valid: false,
      error: 'ismDeletionAfter',
    },
  ],
  update: [
    {
      name: 'single to cluster',
      reason: 'a single plan may become a cluster',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl' },
      patch: { plan: 'logme-cluster-small-ssl' },
      valid: true,
    },
    {
      name: 'cluster to single',
      reason: 'no cluster → single',
      spec: { service: 'a9s-logme2', plan: 'logme-cluster-small-ssl' },
      patch: { plan: 'logme-single-small-ssl' },
      valid: false,
      error: 'cannot be changed to a single plan',
    },
  ],
} satisfies ApiCases;
