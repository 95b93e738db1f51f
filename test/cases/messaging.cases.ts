import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';

export default {
  api: 'messaging',
  create: [
    ...commonCreateCases({ service: 'a9s-messaging313', plan: 'messaging-single-small' }, { name: 'consumerTimeout', wrongType: '30m' }),
    {
      name: 'every parameter',
      reason: 'all parameters',
      spec: {
        acceptsIncomplete: false,
        service: 'a9s-messaging4',
        plan: 'messaging-cluster-big-ssl',
        parameters: { consumerTimeout: 1800000, tlsProtocols: ['tlsv1.2', 'tlsv1.3'], tlsCiphers: ['ECDHE-RSA-AES256-GCM-SHA384'] },
      },
      valid: true,
    },
    {
      name: 'consumerTimeout too short',
      reason: 'consumerTimeout >= 1800000',
      spec: { service: 'a9s-messaging4', plan: 'messaging-single-small', parameters: { consumerTimeout: 60000 } },
      valid: false,
      error: 'consumerTimeout',
    },
    {
      name: 'bad tls protocol',
      reason: 'tlsProtocols is an enum',
      spec: { service: 'a9s-messaging4', plan: 'messaging-single-small', parameters: { tlsProtocols: ['sslv3'] } },
      valid: false,
      error: 'tlsProtocols',
    },
    ...servicePlanClaims(klutchEnums('a9s/messaging/definition.yaml')),
  ],
  update: transitionCases({
    service: 'a9s-messaging310',
    otherService: 'a9s-messaging312',
    small: 'messaging-single-small',
    big: 'messaging-single-big',
    multi: 'messaging-cluster-small',
    singleAsBig: 'messaging-single-big',
    otherSsl: 'messaging-single-small-ssl',
    smaller: 'messaging-single-nano',
  }),
} satisfies ApiCases;
