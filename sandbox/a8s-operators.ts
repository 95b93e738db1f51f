/**
 * STAND-IN for the a8s operators, running on its own for the sandbox. The operators cannot run here (they start
 * database Pods, which need a kubelet and images); harness/stand-ins/a8s-operators.ts writes only what they
 * would write, when told. This loop tells it, once a second, for what exists: every a8s `Postgresql` becomes Running,
 * every a8s `ServiceBinding` is implemented with credentials made up here (and written to the Secret the real
 * service-binding controller would write). Nothing else in the sandbox is played. Objects in a namespace labelled
 * `klutch-kit.test/stand-in: off` are left alone: a test plays the operators there itself
 * (harness/stand-ins/stand-in-off.ts).
 */
import { randomBytes } from 'node:crypto';
import { A8sOperatorsStandIn } from '../harness/stand-ins/a8s-operators';
import type { Kube } from '../harness/kube';
import { type RunningStandIn, standInLoop } from '../harness/stand-ins/stand-in-loop';
import { namespacesLeftAlone } from '../harness/stand-ins/stand-in-off';

type Obj = { metadata: { name: string; namespace: string }; spec?: Record<string, any>; status?: Record<string, any> };

const POSTGRESQLS = '/apis/postgresql.anynines.com/v1beta3/postgresqls';
const BINDINGS = '/apis/servicebindings.anynines.com/v1beta3/servicebindings';

/** Installs the a8s CRDs and starts acting; `say` gets a line for each object it plays the operator for. */
export async function startA8sOperators(kube: Kube, say: (line: string) => void): Promise<RunningStandIn> {
  const operators = new A8sOperatorsStandIn(kube);
  await operators.installCrds();
  const list = async (path: string): Promise<Obj[]> => {
    const r = await kube.request('GET', path);
    return r.code === 200 ? ((r.body as { items: Obj[] }).items ?? []) : [];
  };
  const tick = async (): Promise<void> => {
    const off = await namespacesLeftAlone(kube);
    for (const pg of await list(POSTGRESQLS)) {
      if (pg.status?.clusterStatus === 'Running' || off.has(pg.metadata.namespace)) continue;
      await operators.postgresqlRunning(pg.metadata.namespace, pg.metadata.name);
      say(`a8s PostgreSQL operator (stand-in): Postgresql ${pg.metadata.namespace}/${pg.metadata.name} is Running`);
    }
    for (const sb of await list(BINDINGS)) {
      if (sb.status?.implemented === true || off.has(sb.metadata.namespace)) continue;
      const instance = String(sb.spec?.instance?.name ?? 'postgresql');
      await operators.bindingImplemented(sb.metadata.namespace, sb.metadata.name, {
        database: instance.replace(/-/g, '_'),
        instance_service: `${instance}-master.${sb.metadata.namespace}`,
        username: `a8s-${sb.metadata.name}`.slice(0, 63),
        password: randomBytes(12).toString('base64url'),
      });
      say(
        `a8s service-binding controller (stand-in): ServiceBinding ${sb.metadata.namespace}/${sb.metadata.name} implemented, credentials in Secret ${sb.metadata.name}-service-binding`,
      );
    }
  };
  return standInLoop('a8s stand-in', tick, say);
}
