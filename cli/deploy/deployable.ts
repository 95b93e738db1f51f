/** The kubectl bind plugin's program, as synth bundles it and its image runs it (lib/deployable.ts). */
import type { Deployable } from '../../lib/deployable';

export const KUBECTL_BIND_DEPLOYABLE: Deployable = {
  name: 'kubectl-bind',
  entry: 'cli/main.ts',
  description: 'the kubectl bind plugin (copy the .mjs onto PATH as kubectl-bind, or run the image)',
  ports: [],
};
