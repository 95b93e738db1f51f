/** RabbitMQ ("Messaging") on a9s. Parameters, schemas and keys as in Klutch's XRD and Composition (v1.5.0). */
import { DataService, planMatrix, s } from '..';

export default new DataService({
  name: 'messaging',
  kind: 'MessagingInstance',
  description: 'A RabbitMQ instance.',
  defaultBackend: 'a9s',
  sizes: ['nano', 'small', 'big'],
  a9s: {
    services: ['a9s-messaging310', 'a9s-messaging312', 'a9s-messaging313', 'a9s-messaging4'],
    plans: planMatrix({ prefix: 'messaging', topologies: { single: ['nano', 'small', 'big'], cluster: ['small', 'big'] }, ssl: 'both' }),
  },
  parameters: [
    {
      name: 'consumerTimeout',
      schema: s.integer({ minimum: 1800000, description: 'Milliseconds; at least 30 minutes.' }),
      keys: { a9s: 'consumer_timeout' },
    },
    {
      name: 'tlsProtocols',
      schema: s.array(s.string({ enum: ['tlsv1.2', 'tlsv1.3'] })),
      keys: { a9s: 'tls-protocols' },
    },
    { name: 'tlsCiphers', schema: s.array(s.string()), keys: { a9s: 'tls-ciphers' } },
  ],
  exampleParameters: { consumerTimeout: 3600000 },
});
