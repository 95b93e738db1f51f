/**
 * The sandbox's round trip, steps 9 to 12: an a8s and a cnpg PostgresqlInstance made in the app cluster arrive on the
 * control plane and are composed there, turn Ready back in the app cluster, their ServiceBindings bring
 * `<binding>-creds` down, and a Pod of the app cluster queries the cnpg database with them.
 */
import { parseYaml } from '../harness/crossplane/catalog';
import { createWhenServed, eventually, getObject, type Kube } from '../harness/cluster/kube';
import type { Node } from '../harness/node/node';
import { podFailure } from '../harness/platform/pods';
import type { CrossplaneTarget } from '../apis/api';
import type { Steps } from './steps';

type Obj = Record<string, any>;

/** The namespace of the sandbox's claims in the app cluster, and the konnector's. */
export const SANDBOX_NAMESPACE = 'default';
export const KONNECTOR_NAMESPACE = 'klutch-bind';
const WAIT_MS = 300_000;
/**
 * What the query Pod runs in the cnpg database, and what it prints. The table is the instance owner's, not the
 * binding role's (backends/cnpg.ts CNPG_OWNER_TRIGGER_SQL): the restore step reads it through another binding.
 */
const QUERY =
  "CREATE TABLE IF NOT EXISTS greetings (id int PRIMARY KEY, body text); INSERT INTO greetings VALUES (1, 'hello from the app cluster') ON CONFLICT (id) DO NOTHING; SELECT body FROM greetings WHERE id = 1;";
/** A claim an interrupted run left is taken as it is. */
const EXISTING = { existing: 'ok' } as const;

const claimPath = (plural: string, namespace: string, name: string) => `/apis/anynines.com/v1/namespaces/${namespace}/${plural}/${name}`;

export interface RoundTripContext {
  readonly steps: Steps;
  /** The synth output installed (path → content): its examples are the claims. */
  readonly files: ReadonlyMap<string, string>;
  readonly target: CrossplaneTarget;
  /** The control plane and the app cluster, as their admin, and their nodes (for diagnoses). */
  readonly kc: Kube;
  readonly ka: Kube;
  readonly cpNode: Node;
  readonly appNode: Node;
  /** psql in a Pod of the app cluster with only `secret`; its output lines. */
  psql(secret: string, sql: string): Promise<string[]>;
}

export interface RoundTrip {
  readonly instance: string;
  readonly binding: string;
  readonly cnpg?: { readonly instance: string; readonly binding: string };
  /** Where the app cluster's claims of SANDBOX_NAMESPACE are on the control plane. */
  readonly providerNamespace: string;
  /** psql's output lines of QUERY (with the cnpg pair only). */
  readonly query?: readonly string[];
  /** An example of the synth output, by file name. */
  example(name: string): Obj | undefined;
  /** Waits for `check`; a timeout names the Pods of `ns` on the control plane and the konnector's that failed. */
  until<T>(what: string, check: () => Promise<T | undefined>, ns?: string, timeoutMs?: number): Promise<T>;
}

export async function roundTrip(c: RoundTripContext): Promise<RoundTrip> {
  const { steps, files, kc, ka, cpNode, appNode, target } = c;
  const example = (name: string): Obj | undefined => {
    const text = files.get(`packages/dataservices/examples/${name}.yaml`);
    return text ? (parseYaml(text)[0] as Obj) : undefined;
  };
  const instance = 'demo-postgresql';
  const binding = 'demo-binding';
  // A package without the cnpg backend (a catalog of its own) makes only the a8s pair.
  const cnpg = example('postgresql-cnpg') ? { instance: 'demo-cnpg', binding: 'demo-cnpg-binding' } : undefined;
  const instances = [{ name: instance, example: 'postgresql-a8s' }, ...(cnpg ? [{ name: cnpg.instance, example: 'postgresql-cnpg' }] : [])];
  /** What to read when a claim does not get there: the Pods of its namespace on the control plane, with logs. */
  const diagnose = async (ns?: string) =>
    `\n${ns ? await podFailure(kc, cpNode, ns, '').catch(() => '') : ''}${await podFailure(ka, appNode, KONNECTOR_NAMESPACE, 'app.kubernetes.io/name=konnector').catch(() => '')}`;
  const until = async <T>(what: string, check: () => Promise<T | undefined>, ns?: string, timeoutMs = WAIT_MS): Promise<T> => {
    try {
      return await eventually(what, check, timeoutMs);
    } catch (e) {
      throw new Error(`${(e as Error).message}${await diagnose(ns)}`, { cause: e });
    }
  };

  const providerNamespace = await steps.run(
    `PostgresqlInstances ${instances.map((i) => `${SANDBOX_NAMESPACE}/${i.name} (${i.example.replace('postgresql-', '')})`).join(' and ')} created in the app cluster, arriving in the control plane`,
    async () => {
      if (!cnpg) steps.say('the package has no cnpg example: the cnpg PostgresqlInstance is left out');
      for (const i of instances) {
        const pg = example(i.example);
        if (!pg) throw new Error(`the synth output has no example ${i.example}`);
        // A claim an interrupted run left is taken as it is (409).
        await createWhenServed(ka, 'postgresqlinstances', { ...pg, metadata: { name: i.name, namespace: SANDBOX_NAMESPACE } }, EXISTING);
      }
      const ns = await until(
        'the bind backend to assign a control-plane namespace',
        async () =>
          ((await getObject(kc, `/apis/klutch.anynines.com/v1alpha1/apiservicenamespaces`))?.items as Obj[] | undefined)?.find(
            (n) => n.metadata.name === SANDBOX_NAMESPACE,
          )?.status?.namespace as string | undefined,
      );
      for (const i of instances) {
        const up = await until(`${i.name} on the control plane`, () => getObject(kc, claimPath('postgresqlinstances', ns, i.name)), ns);
        // A claim (v1) names its composite; a namespaced composite (v2) is the object itself and names what it composed.
        const composed = await until(
          `Crossplane to compose ${i.name}`,
          async () => {
            const live = await getObject(kc, claimPath('postgresqlinstances', ns, i.name));
            if (target === 'v1') return live?.spec?.resourceRef as Obj | undefined;
            const refs = live?.spec?.crossplane?.resourceRefs as Obj[] | undefined;
            return refs?.length ? { ...live, refs } : undefined;
          },
          ns,
        );
        steps.say(
          target === 'v1'
            ? `${ns}/${i.name} (composition ${up.spec.compositionRef.name}): Crossplane composed ${composed.kind} ${composed.name} with our function`
            : `${ns}/${i.name}: Crossplane composed ${composed.kind} ${ns}/${i.name} (composition ${composed.spec.crossplane.compositionRef.name}) into ${composed.refs.map((r: Obj) => `${r.kind} ${r.name}`).join(', ')} with our function`,
        );
      }
      return ns;
    },
  );

  await steps.run(
    `Ready: the a8s PostgreSQL (stand-in operator)${cnpg ? ' and CloudNativePG running PostgreSQL as a Pod' : ''} → the claims → the app cluster`,
    async () => {
      for (const i of instances) {
        const phases = new Set<string>();
        const ready = await until(
          `PostgresqlInstance ${i.name} Ready in the app cluster`,
          async () => {
            const c = await getObject(ka, claimPath('postgresqlinstances', SANDBOX_NAMESPACE, i.name));
            if (c?.status?.managed?.phase && !phases.has(c.status.managed.phase)) {
              phases.add(c.status.managed.phase);
              steps.say(`${i.name} in the app cluster: ${c.status.managed.phase}`);
            }
            return c?.status?.conditions?.some((x: Obj) => x.type === 'Ready' && x.status === 'True') ? c : undefined;
          },
          providerNamespace,
        );
        const m = (ready.status.managed ?? {}) as Obj;
        steps.say(`${i.name} in the app cluster: Ready=True (${m.phase ?? m.clusterStatus ?? 'managed status not reported'})`);
      }
    },
  );

  const bindings = [
    { name: binding, instance, example: 'servicebinding-a8s' },
    ...(cnpg ? [{ name: cnpg.binding, instance: cnpg.instance, example: 'servicebinding-cnpg' }] : []),
  ];
  await steps.run(
    `ServiceBindings ${bindings.map((b) => `${SANDBOX_NAMESPACE}/${b.name}`).join(' and ')}: credentials back in the app cluster as <binding>-creds`,
    async () => {
      for (const b of bindings) {
        const sb = example(b.example);
        if (!sb) throw new Error(`the synth output has no example ${b.example}`);
        await createWhenServed(
          ka,
          'servicebindings',
          {
            ...sb,
            metadata: { name: b.name, namespace: SANDBOX_NAMESPACE },
            spec: { ...sb.spec, instanceRef: b.instance },
          },
          EXISTING,
        );
      }
      for (const b of bindings) {
        const secret = await until(
          `Secret ${SANDBOX_NAMESPACE}/${b.name}-creds with data in the app cluster`,
          async () => {
            const s = await getObject(ka, `/api/v1/namespaces/${SANDBOX_NAMESPACE}/secrets/${b.name}-creds`);
            return Object.keys(s?.data ?? {}).length ? s : undefined;
          },
          providerNamespace,
        );
        const address = Buffer.from(String(secret.data.instance_service ?? ''), 'base64').toString();
        steps.say(
          `Secret ${SANDBOX_NAMESPACE}/${b.name}-creds holds ${Object.keys(secret.data).sort().join(', ')} (instance_service ${address})`,
        );
      }
    },
  );

  const query = cnpg
    ? await steps.run(
        `A Pod in the app cluster connects with Secret ${cnpg.binding}-creds and queries PostgreSQL on the control plane`,
        async () => {
          const lines = await c.psql(`${cnpg.binding}-creds`, QUERY);
          steps.say(`psql -c "${QUERY}"`);
          for (const line of lines) steps.say(`  ${line}`);
          return lines;
        },
      )
    : undefined;

  return { instance, binding, ...(cnpg ? { cnpg } : {}), providerNamespace, ...(query ? { query } : {}), example, until };
}
