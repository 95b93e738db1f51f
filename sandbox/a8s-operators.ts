/**
 * STAND-IN for the a8s operators, running on its own for the sandbox. The operators cannot run here (they start
 * database Pods, which need a kubelet and images); harness/stand-ins/a8s-operators.ts writes only what they
 * would write, when told. This loop tells it, for what exists: every a8s `Postgresql` becomes Running, every a8s
 * `ServiceBinding` is implemented with credentials made up here (and written to the Secret the real service-binding
 * controller would write). It watches both kinds, as the operators do, and acts when one changes (a pass every 10 s
 * besides); it reads the API server only for an object it is about to act on (docs/decisions/platform-api-load.md). Nothing else in the sandbox is played.
 * Objects in a namespace labelled `klutch-kit.test/stand-in: off` are left alone: a test plays the operators there
 * itself (harness/stand-ins/stand-in-off.ts).
 */
import { randomBytes } from 'node:crypto';
import { watchInformer } from '../controller';
import { A8sOperatorsStandIn } from '../harness/stand-ins/a8s-operators';
import { getObject, type Kube } from '../harness/cluster/kube';
import { type RunningStandIn, standInLoop } from '../harness/stand-ins/stand-in-loop';
import { namespacesLeftAlone, STAND_IN_LABEL } from '../harness/stand-ins/stand-in-off';

type Obj = { metadata: { name: string; namespace: string }; spec?: Record<string, any>; status?: Record<string, any> };

const POSTGRESQLS = '/apis/postgresql.anynines.com/v1beta3/postgresqls';
const BINDINGS = '/apis/servicebindings.anynines.com/v1beta3/servicebindings';

/** How often the stand-in looks at its caches when no watch event woke it. */
const RESYNC_MS = 10_000;

/** Installs the a8s CRDs and starts acting; `say` gets a line for each object it plays the operator for. */
export async function startA8sOperators(kube: Kube, say: (line: string) => void): Promise<RunningStandIn> {
  const operators = new A8sOperatorsStandIn(kube);
  await operators.installCrds();
  const postgresqls = watchInformer<Obj>({ kc: kube.config, path: POSTGRESQLS });
  const bindings = watchInformer<Obj>({ kc: kube.config, path: BINDINGS });
  // Namespaces known to be left alone are skipped without a request; one labelled a moment ago is caught by the
  // fresh list before acting.
  const leftAlone = watchInformer<Obj>({ kc: kube.config, path: '/api/v1/namespaces', labelSelector: `${STAND_IN_LABEL}=off` });
  const path = (base: string, o: Obj) => `${base.replace(/\/([a-z]+)$/, `/namespaces/${o.metadata.namespace}/$1`)}/${o.metadata.name}`;
  // The cache may be a moment behind (our own status write not seen yet): what to act on is read again first.
  const pending = async (base: string, cached: Obj[], done: (o: Obj) => boolean): Promise<Obj[]> => {
    const todo = cached.filter((o) => !done(o) && !leftAlone.get(o.metadata.namespace));
    const fresh = await Promise.all(todo.map((o) => getObject(kube, path(base, o))));
    return (fresh.filter(Boolean) as Obj[]).filter((o) => !done(o));
  };
  const tick = async (): Promise<void> => {
    const pgs = await pending(POSTGRESQLS, [...postgresqls.list()], (pg) => pg.status?.clusterStatus === 'Running');
    const sbs = await pending(BINDINGS, [...bindings.list()], (sb) => sb.status?.implemented === true);
    if (pgs.length + sbs.length === 0) return;
    // Read now, after the objects: a test labels its namespace before it makes anything there.
    const off = await namespacesLeftAlone(kube);
    for (const pg of pgs) {
      if (off.has(pg.metadata.namespace)) continue;
      await operators.postgresqlRunning(pg.metadata.namespace, pg.metadata.name);
      say(`a8s PostgreSQL operator (stand-in): Postgresql ${pg.metadata.namespace}/${pg.metadata.name} is Running`);
    }
    for (const sb of sbs) {
      if (off.has(sb.metadata.namespace)) continue;
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
  const loop = standInLoop('a8s stand-in', tick, say, { everyMs: RESYNC_MS });
  // The listed objects come as adds too: the first pass after the list is woken by them.
  for (const i of [postgresqls, bindings]) for (const e of ['add', 'update'] as const) i.on(e, () => loop.wake());
  for (const i of [leftAlone, postgresqls, bindings]) await i.start();
  return {
    stop: async () => {
      await loop.stop();
      await Promise.all([leftAlone, postgresqls, bindings].map((i) => i.stop()));
    },
  };
}
