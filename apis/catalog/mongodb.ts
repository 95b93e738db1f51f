/** MongoDB on a9s (SSPL plans). */
import { DataService, planMatrix, s } from '..';

export default new DataService({
  name: 'mongodb',
  kind: 'MongodbInstance',
  description: 'A MongoDB instance.',
  defaultBackend: 'a9s',
  sizes: ['nano', 'small', 'big'],
  a9s: {
    services: ['a9s-mongodb50', 'a9s-mongodb70'],
    plans: planMatrix({ prefix: 'mongodbsspl', topologies: { single: ['nano', 'small', 'big'], replica: ['small', 'big'] }, ssl: 'both' }),
  },
  parameters: [
    {
      name: 'setClusterParameter',
      schema: s.object({
        changeStreamOptions: s.object({
          preAndPostImages: s.object({
            expireAfterSeconds: s.integer({ minimum: 1, description: 'How long pre- and post-images of change streams are kept.' }),
          }),
        }),
      }),
      // The broker takes MongoDB's own setClusterParameter document.
      keys: { a9s: 'setClusterParameter' },
    },
  ],
  exampleParameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 3600 } } } },
});
