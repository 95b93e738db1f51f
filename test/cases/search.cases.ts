import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';

export default {
  api: 'search',
  create: [
    ...commonCreateCases({ service: 'a9s-search2', plan: 'search-single-small-ssl' }, { name: 'javaHeapspace', wrongType: '1g' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      spec: {
        acceptsIncomplete: false,
        service: 'a9s-search2',
        plan: 'search-cluster-medium-ssl',
        parameters: {
          javaHeapspace: 2048,
          javaMaxmetaspace: 512,
          javaGarbageCollector: 'UseG1GC',
          tlsProtocols: ['TLSv1.3'],
          tlsCiphers: ['TLS_AES_256_GCM_SHA384'],
        },
      },
      valid: true,
    },
    {
      name: 'heap too small',
      reason: 'javaHeapspace >= 256',
      spec: { service: 'a9s-search2', plan: 'search-single-small-ssl', parameters: { javaHeapspace: 128 } },
      valid: false,
      error: 'javaHeapspace',
    },
    {
      name: 'metaspace too large',
      reason: 'javaMaxmetaspace 256..1024',
      spec: { service: 'a9s-search2', plan: 'search-single-small-ssl', parameters: { javaMaxmetaspace: 2048 } },
      valid: false,
      error: 'javaMaxmetaspace',
    },
    {
      name: 'unknown collector',
      reason: 'javaGarbageCollector is an enum',
      spec: { service: 'a9s-search2', plan: 'search-single-small-ssl', parameters: { javaGarbageCollector: 'UseZGC' } },
      valid: false,
      error: 'javaGarbageCollector',
    },
    {
      name: 'metaspace too small',
      reason: 'javaMaxmetaspace >= 256 (Klutch rule)',
      spec: { service: 'a9s-search2', plan: 'search-single-small-ssl', parameters: { javaMaxmetaspace: 255 } },
      valid: false,
      error: 'javaMaxmetaspace',
    },
    ...servicePlanClaims(klutchEnums('a9s/search/definition.yaml')),
    {
      name: 'plan without ssl',
      reason: 'every search plan uses ssl',
      spec: { service: 'a9s-search2', plan: 'search-single-small' },
      valid: false,
      error: 'spec.plan',
    },
  ],
  update: transitionCases({
    service: 'a9s-search2',
    small: 'search-single-small-ssl',
    big: 'search-single-big-ssl',
    multi: 'search-cluster-small-ssl',
    singleAsBig: 'search-single-big-ssl',
    smaller: 'search-single-nano-ssl',
  }),
} satisfies ApiCases;
