import type { ApiCases } from './types';
import { commonCreateCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';
import type { CreateCase } from './types';

export default {
  api: 'logme2',
  create: [
    ...commonCreateCases({ service: 'a9s-logme2', plan: 'logme-single-small-ssl' }, { name: 'fluentdTcp', wrongType: 'tcp' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      spec: {
        acceptsIncomplete: false,
        service: 'a9s-logme2',
        plan: 'logme-cluster-small-ssl',
        parameters: {
          javaHeapspace: 1024,
          javaMaxmetaspace: 256,
          javaGarbageCollector: 'UseParallelGC',
          ismDeletionAfter: '30d',
          ismJobInterval: 5,
          ismJitter: 0.5,
          opensearchTlsProtocols: ['TLSv1.3'],
          opensearchTlsCiphers: ['TLS_AES_128_GCM_SHA256'],
          fluentdUdp: 514,
          fluentdTcp: 601,
          fluentdTls: 6514,
          fluentdTlsCiphers: 'HIGH',
          fluentdTlsVersion: 'TLS1_3',
          fluentdTlsMinVersion: 'TLS1_2',
          fluentdTlsMaxVersion: 'TLS1_3',
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
      name: 'klutch docs TLS and jitter',
      reason: "Klutch's spelling of the Fluentd TLS versions, and a fractional jitter",
      spec: {
        service: 'a9s-logme2',
        plan: 'logme-single-small-ssl',
        parameters: { ismJitter: 0.5, fluentdTlsMinVersion: 'TLS1_2', fluentdTlsMaxVersion: 'TLSv1_1', ismDeletionAfter: '90s' },
      },
      valid: true,
    },
    {
      name: 'TLSv1_2',
      reason: 'Klutch spells it TLS1_2',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { fluentdTlsMinVersion: 'TLSv1_2' } },
      valid: false,
      error: 'fluentdTlsMinVersion',
    },
    {
      name: 'opensearch TLS 1.1',
      reason: 'opensearchTlsProtocols is TLSv1.2 or TLSv1.3',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { opensearchTlsProtocols: ['TLSv1.1'] } },
      valid: false,
      error: 'opensearchTlsProtocols',
    },
    ...(
      [
        ['javaHeapspace', 255],
        ['javaMaxmetaspace', 255],
        ['javaMaxmetaspace', 1025],
        ['ismJobInterval', 0],
        ['ismJitter', -0.5],
        ['fluentdUdp', 0],
        ['fluentdTcp', 0],
        ['fluentdTcp', 65536],
        ['fluentdTls', 0],
        ['fluentdTls', 65536],
      ] as const
    ).map<CreateCase>(([name, value]) => ({
      name: `${name} ${value}`,
      reason: `${name} is bounded (Klutch rule)`,
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl', parameters: { [name]: value } },
      valid: false,
      error: name,
    })),
    ...servicePlanClaims(klutchEnums('a9s/logme2/definition.yaml')),
  ],
  update: [
    {
      name: 'single to cluster',
      reason: 'a single plan stays single (Klutch rule)',
      spec: { service: 'a9s-logme2', plan: 'logme-single-small-ssl' },
      patch: { plan: 'logme-cluster-small-ssl' },
      valid: false,
      error: 'A single plan cannot be changed to a replica or cluster plan',
    },
    {
      name: 'plan kept',
      reason: 'keeping the plan passes the topology rules',
      spec: { service: 'a9s-logme2', plan: 'logme-cluster-small-ssl' },
      patch: { plan: 'logme-cluster-small-ssl', parameters: { ismJitter: 1 } },
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
