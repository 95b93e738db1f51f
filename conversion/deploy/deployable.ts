/** The conversion server's program, as synth bundles it and its image runs it (lib/deployable.ts). */
import type { Deployable } from '../../lib/deployable';

/** Where it listens in its Pod (its `--address` default's port). */
export const CONVERSION_PORT = 9443;

export const CONVERSION_DEPLOYABLE: Deployable = {
  name: 'conversion',
  entry: 'conversion/main.ts',
  description: 'the conversion server',
  ports: [{ port: CONVERSION_PORT, serves: 'ConversionReviews at /convert/<XRD name>, and /healthz' }],
};
