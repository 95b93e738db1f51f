/** MongoDB on a9s (SSPL plans). Parameters, schemas and keys as in Klutch's XRD and Composition (v1.5.0). */
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
            expireAfterSeconds: s.intOrString({
              description: 'Seconds pre- and post-images of change streams are kept, or "off" for the oplog default.',
              rules: [
                {
                  rule: "type(self) == string ? self == 'off' : self >= 0",
                  message: "expireAfterSeconds must be 'off' or an integer >= 0",
                },
              ],
            }),
          }),
        }),
      }),
      // The broker takes MongoDB's setClusterParameter document under set_cluster_parameter, as Klutch maps it.
      keys: { a9s: 'set_cluster_parameter' },
    },
  ],
  exampleParameters: { setClusterParameter: { changeStreamOptions: { preAndPostImages: { expireAfterSeconds: 3600 } } } },
});
