/** The konnector's program, as synth bundles it and its image runs it (lib/deployable.ts). */
import type { Deployable } from '../../lib/deployable';

export const KONNECTOR_DEPLOYABLE: Deployable = {
  name: 'konnector',
  entry: 'konnector/main.ts',
  description: 'the konnector (app clusters)',
  ports: [{ port: 8080, serves: '/healthz, /readyz and /metrics' }],
};
