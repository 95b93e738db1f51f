import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';

export default {
  api: 'mongodb',
  create: [
    ...commonCreateCases({ service: 'a9s-mongodb70', plan: 'mongodbsspl-single-small' }, { name: 'setClusterParameter', wrongType: 'on' }),
    {
      name: 'every parameter',
      reason: 'the nested change-stream setting',
      spec: {
        service: 'a9s-mongodb70',
        plan: 'mongodbsspl-replica-big-ssl',
        parameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 600 } } } },
      },
      valid: true,
    },
    {
      name: 'expireAfterSeconds as text',
      reason: 'expireAfterSeconds is an integer',
      spec: {
        service: 'a9s-mongodb70',
        plan: 'mongodbsspl-single-small',
        parameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 'soon' } } } },
      },
      valid: false,
      error: 'expireAfterSeconds',
    },
    {
      name: 'unknown nested field',
      reason: 'unknown fields are rejected at every level',
      spec: { service: 'a9s-mongodb70', plan: 'mongodbsspl-single-small', parameters: { setClusterParameter: { changeStreamOption: {} } } },
      valid: false,
      error: 'changeStreamOption',
    },
  ],
  update: transitionCases({
    service: 'a9s-mongodb50',
    otherService: 'a9s-mongodb70',
    small: 'mongodbsspl-single-small',
    big: 'mongodbsspl-single-big',
    multi: 'mongodbsspl-replica-small',
    singleAsBig: 'mongodbsspl-single-big',
    otherSsl: 'mongodbsspl-single-small-ssl',
  }),
} satisfies ApiCases;
