import { operationCases } from './operations';

export default operationCases(
  'servicebinding',
  { instanceRef: 'my-db', serviceInstanceType: 'postgresql' },
  ['instanceRef'],
  [
    {
      name: 'region and policy',
      reason: 'optional binding settings',
      backend: 'a9s',
      spec: { instanceRef: 'my-db', serviceInstanceType: 'keyvalue', region: 'eu-1', policy: 'read-only' },
      valid: true,
    },
  ],
);
