import type { ApiCases } from './types';
import { commonCreateCases, transitionCases } from './builders';
import { klutchEnums, servicePlanClaims } from './klutch';

export default {
  api: 'mongodb',
  create: [
    ...commonCreateCases({ service: 'a9s-mongodb70', plan: 'mongodbsspl-single-small' }, { name: 'setClusterParameter', wrongType: 'on' }),
    {
      name: 'every parameter',
      reason: 'the nested change-stream setting',
      spec: {
        acceptsIncomplete: false,
        service: 'a9s-mongodb70',
        plan: 'mongodbsspl-replica-big-ssl',
        parameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 600 } } } },
      },
      valid: true,
    },
    {
      name: 'expireAfterSeconds off',
      reason: "Klutch takes 'off' for the oplog default",
      spec: {
        service: 'a9s-mongodb50',
        plan: 'mongodbsspl-single-small',
        parameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 'off' } } } },
      },
      valid: true,
    },
    {
      name: 'expireAfterSeconds 0',
      reason: 'an integer >= 0',
      spec: {
        service: 'a9s-mongodb50',
        plan: 'mongodbsspl-single-small',
        parameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 0 } } } },
      },
      valid: true,
    },
    {
      name: 'expireAfterSeconds -1',
      reason: "'off' or an integer >= 0 (Klutch rule)",
      spec: {
        service: 'a9s-mongodb50',
        plan: 'mongodbsspl-single-small',
        parameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: -1 } } } },
      },
      valid: false,
      error: 'expireAfterSeconds',
    },
    {
      name: 'expireAfterSeconds as text',
      reason: "'off' or an integer >= 0 (Klutch rule)",
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
    ...servicePlanClaims(klutchEnums('a9s/mongodb/definition.yaml')),
  ],
  update: transitionCases({
    service: 'a9s-mongodb50',
    otherService: 'a9s-mongodb70',
    small: 'mongodbsspl-single-small',
    big: 'mongodbsspl-single-big',
    multi: 'mongodbsspl-replica-small',
    singleAsBig: 'mongodbsspl-single-big',
    otherSsl: 'mongodbsspl-single-small-ssl',
    smaller: 'mongodbsspl-single-nano',
  }),
} satisfies ApiCases;
