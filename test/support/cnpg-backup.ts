/**
 * The Cluster the cnpg backend composes for an instance of an offering with an object store: what bench/backup runs
 * (on a store of its own, outside the catalog), composed by the function itself rather than written again.
 */
import { DataService, planMatrix } from '../../apis';
import { runFunction } from '../../functions/dataservices/fn';
import { requestOf, SETTINGS } from '../../harness/crossplane/function-requests';
import { CNPG_POSTGRESQL_IMAGE } from '../../harness/node/cnpg-images';
import { inputFor, type Recipe } from '../../recipe';

/**
 * The spec of the Cluster the cnpg backend composes for instance `name` in `namespace` (with `more` in the claim's
 * spec: `restoreFrom`) of an offering whose object store is at `endpointURL`: the function run on a one-plan
 * offering (backends/cnpg-backup.test.ts has the rest).
 */
export function composedCluster(
  endpointURL: string,
  namespace: string,
  name: string,
  more: Record<string, unknown> = {},
): Record<string, any> {
  const offering = new DataService({
    name: 'demo',
    kind: 'DemoInstance',
    defaultBackend: 'cnpg',
    sizes: ['small'],
    cnpg: {
      services: ['pg15'],
      plans: planMatrix({ prefix: 'demo', topologies: { single: ['small'] }, ssl: 'none' }),
      images: { pg15: CNPG_POSTGRESQL_IMAGE },
      sizes: { small: { storage: '1Gi', cpu: '1', memory: '1Gi' } },
      instances: { single: 1 },
      sourceRanges: ['10.0.0.0/8'],
      backups: { endpointURL, schedule: false },
    },
  });
  const input = inputFor(offering.api.backends.cnpg as Recipe, { backend: 'cnpg', service: 'demo', settings: SETTINGS });
  const labels = { 'crossplane.io/claim-name': name, 'crossplane.io/claim-namespace': namespace };
  const xr = {
    apiVersion: 'x/v1',
    kind: 'XDemo',
    metadata: { name: `${name}-x`, labels },
    spec: { service: 'pg15', plan: 'demo-single-small', ...more },
  };
  const rsp = runFunction(requestOf(input, xr, {}));
  return (rsp.desired?.resources['cnpg-demo']?.resource as any).spec.forProvider.manifest.spec;
}
