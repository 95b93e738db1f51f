/**
 * The sandbox's backup-and-restore steps (issue 35, docs/backups.md): what an app team does with the cnpg instance
 * once it holds data. A `Backup` claim of it from the app cluster ends Completed there with CloudNativePG's backup in
 * the platform's object store; then a new instance claim with `restoreFrom` that instance comes up from its backups
 * and its archived WAL, and a Pod of the app cluster reads the row the round trip wrote, through the new instance's own
 * binding. `npm run sandbox` runs both after the round trip; the test run's shared platform runs the backup for
 * `test/cluster/object-store.test.ts`, which checks it.
 */
import type { Kube, WireObject } from '../harness/cluster/kube';
import { createWhenServed, getObject } from '../harness/cluster/kube';
import type { Steps } from './steps';

type Obj = Record<string, any>;

/** What the Backup claim shows in the app cluster once Completed (CloudNativePG's backup, as `status.managed`). */
export interface SandboxBackup {
  /** The Backup claim, in the app cluster's `default` namespace. */
  readonly name: string;
  /** The instance it backed up. */
  readonly instance: string;
  /** `phase`, `backupId`, `startedAt`, `stoppedAt`, `destinationPath`, `serverName`, … as the claim shows them. */
  readonly managed: Readonly<Obj>;
  /** From the claim's creation in the app cluster to its Ready there. */
  readonly ms: number;
  /**
   * From CloudNativePG's Backup turning `completed` on the control plane to the claim's Ready in the app cluster, as
   * seen by polling both (up to a second apart): what the chain Object → composite → claim → konnector adds.
   */
  readonly lagMs?: number;
}

/** What the restored instance answered. */
export interface SandboxRestore {
  /** The new instance claim and its binding. */
  readonly instance: string;
  readonly binding: string;
  /** psql's output lines of RESTORE_QUERY, through the new binding's Secret. */
  readonly query: readonly string[];
}

/** Read in the restored instance: the row the round trip's QUERY wrote before the backup. */
const RESTORE_QUERY = 'SELECT body FROM greetings WHERE id = 1;';
/** What RESTORE_QUERY prints when the row came back. */
const RESTORED_ROW = 'hello from the app cluster';
/** A base backup under the round trip's load takes minutes: Barman Cloud's start, a checkpoint, the upload. */
const BACKUP_WAIT_MS = 600_000;

export interface BackupContext {
  readonly steps: Steps;
  /** The app cluster and the control plane, as their admin. */
  readonly app: Kube;
  readonly control: Kube;
  readonly namespace: string;
  /** Where the app cluster's claims of `namespace` are on the control plane. */
  readonly providerNamespace: string;
  /** The cnpg pair the round trip made. */
  readonly cnpg: { readonly instance: string; readonly binding: string };
  /** kubectl bind of one more API (once per API). */
  bind(resource: string): Promise<void>;
  /** An example of the synth output, by file name. */
  example(name: string): Obj | undefined;
  /** eventually(), with the control plane's view of the claims added to a timeout's message. */
  until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs?: number): Promise<T>;
  /** Runs SQL with psql in a Pod of the app cluster configured by one Secret; psql's output lines. */
  psql(secret: string, sql: string): Promise<string[]>;
}

/** The two steps, each run at most once (a second call returns the first one's result). */
export function sandboxBackups(c: BackupContext): { backup(): Promise<SandboxBackup>; restore(): Promise<SandboxRestore> } {
  const path = (plural: string, name: string) => `/apis/anynines.com/v1/namespaces/${c.namespace}/${plural}/${name}`;
  const fromExample = (file: string): Obj => {
    const e = c.example(file);
    if (!e) throw new Error(`the synth output has no example ${file}: the package has no cnpg backups`);
    return e;
  };
  /** Ready in the app cluster, or the claim's words once it says it failed (not after the wait). */
  const ready = async (plural: string, name: string, timeoutMs: number, alongside?: () => Promise<void>): Promise<WireObject> => {
    const r = await c.until(
      `${plural} ${c.namespace}/${name} Ready in the app cluster`,
      async () => {
        await alongside?.();
        const o = await getObject(c.app, path(plural, name));
        if (!o) return undefined;
        if (o.status?.managed?.phase === 'failed') return { o, failed: true };
        return ((o.status?.conditions ?? []) as Obj[]).some((x) => x.type === 'Ready' && x.status === 'True')
          ? { o, failed: false }
          : undefined;
      },
      timeoutMs,
    );
    if (r.failed) throw new Error(`${plural} ${c.namespace}/${name} failed: ${JSON.stringify(r.o.status)}`);
    return r.o;
  };

  let backup: Promise<SandboxBackup> | undefined;
  let restore: Promise<SandboxRestore> | undefined;
  const name = `${c.cnpg.instance}-backup`;
  const restored = `${c.cnpg.instance}-restored`;

  return {
    backup: () =>
      (backup ??= c.steps.run(
        `A Backup claim of ${c.namespace}/${c.cnpg.instance} from the app cluster: CloudNativePG's base backup into the object store`,
        async () => {
          await c.bind('backups');
          const b = fromExample('backup-cnpg');
          const t = Date.now();
          // A claim an earlier call left is taken as it is (409).
          await createWhenServed(
            c.app,
            'backups',
            { ...b, metadata: { name, namespace: c.namespace }, spec: { ...b.spec, instanceRef: c.cnpg.instance } },
            { existing: 'ok' },
          );
          // CloudNativePG's Backup (named after the claim) and the claim's copy, both in the provider namespace, read
          // beside the app cluster's claim: when each hop showed the result.
          const seen: { completed?: number; controlPlane?: number } = {};
          const hops = async () => {
            const onControlPlane = (group: string) => `/apis/${group}/namespaces/${c.providerNamespace}/backups/${name}`;
            if (seen.completed === undefined) {
              const live = await getObject(c.control, onControlPlane('postgresql.cnpg.io/v1'));
              if (live?.status?.phase === 'completed') seen.completed = Date.now();
            }
            if (seen.controlPlane === undefined) {
              const copy = await getObject(c.control, onControlPlane('anynines.com/v1'));
              if ((copy?.status?.conditions ?? []).some((x: Obj) => x.type === 'Ready' && x.status === 'True'))
                seen.controlPlane = Date.now();
            }
          };
          const claim = await ready('backups', name, BACKUP_WAIT_MS, hops);
          const readyAt = Date.now();
          const ms = readyAt - t;
          const lagMs = seen.completed === undefined ? undefined : readyAt - seen.completed;
          const m = (claim.status.managed ?? {}) as Obj;
          const after = (from: number | undefined, to: number) => (from === undefined ? '?' : `${((to - from) / 1000).toFixed(1)}s`);
          c.steps.say(`Backup ${c.namespace}/${name} Ready in the app cluster after ${(ms / 1000).toFixed(1)}s: phase ${m.phase}`);
          c.steps.say(
            `CloudNativePG's Backup completed → the claim Ready on the control plane ${after(seen.completed, seen.controlPlane ?? readyAt)} → in the app cluster ${after(seen.controlPlane, readyAt)} (read about once a second)`,
          );
          c.steps.say(
            `CloudNativePG's backup ${m.backupId} of server ${m.serverName}, ${m.startedAt} to ${m.stoppedAt}, in ${m.destinationPath}`,
          );
          return { name, instance: c.cnpg.instance, managed: m, ms, ...(lagMs === undefined ? {} : { lagMs }) };
        },
      )),
    restore: () =>
      (restore ??= c.steps.run(
        `A new instance ${c.namespace}/${restored} restored from ${c.cnpg.instance}'s backups (restoreFrom), queried through its own binding`,
        async () => {
          const pg = fromExample('postgresql-cnpg');
          const sb = fromExample('servicebinding-cnpg');
          const binding = `${restored}-binding`;
          await createWhenServed(
            c.app,
            'postgresqlinstances',
            // No point in time: the newest state the source archived.
            {
              ...pg,
              metadata: { name: restored, namespace: c.namespace },
              spec: { ...pg.spec, restoreFrom: { instance: c.cnpg.instance } },
            },
            { existing: 'ok' },
          );
          const t = Date.now();
          await ready('postgresqlinstances', restored, BACKUP_WAIT_MS);
          c.steps.say(
            `${restored} Ready in the app cluster after ${((Date.now() - t) / 1000).toFixed(1)}s (CloudNativePG's recovery from the object store)`,
          );
          await createWhenServed(
            c.app,
            'servicebindings',
            { ...sb, metadata: { name: binding, namespace: c.namespace }, spec: { ...sb.spec, instanceRef: restored } },
            { existing: 'ok' },
          );
          await c.until(`Secret ${c.namespace}/${binding}-creds in the app cluster`, async () => {
            const s = await getObject(c.app, `/api/v1/namespaces/${c.namespace}/secrets/${binding}-creds`);
            return Object.keys(s?.data ?? {}).length ? s : undefined;
          });
          const query = await c.psql(`${binding}-creds`, RESTORE_QUERY);
          c.steps.say(`psql -c "${RESTORE_QUERY}" with Secret ${binding}-creds`);
          for (const line of query) c.steps.say(`  ${line}`);
          if (!query.some((l) => l.trim() === RESTORED_ROW))
            throw new Error(
              `the restored instance ${restored} lacks the row written before the backup ("${RESTORED_ROW}"): psql printed ${JSON.stringify(query)}`,
            );
          return { instance: restored, binding, query };
        },
      )),
  };
}
