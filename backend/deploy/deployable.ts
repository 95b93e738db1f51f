/** The bind backend's program, as synth bundles it and its image runs it (lib/deployable.ts). */
import type { Deployable } from '../../lib/deployable';

export const BACKEND_DEPLOYABLE: Deployable = {
  name: 'backend',
  entry: 'backend/main.ts',
  description: 'the bind backend',
  ports: [
    { port: 8080, serves: 'the bind endpoints (/export, /authorize, /callback, /resources, /bind)' },
    { port: 8081, serves: '/healthz, /readyz and /metrics' },
  ],
  // Klutch's Deployments start its example-backend by these paths: ours runs under them too.
  entrypoints: ['/example-backend', '/ko-app/example-backend'],
};
