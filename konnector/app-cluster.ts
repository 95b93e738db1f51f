/**
 * Control-plane mode: the app cluster's kubeconfig comes from a Secret on the control plane (an AppClusterBinding's,
 * copied into its binding root namespace by the backend), and is followed when it changes. The Secret is watched by
 * name; whenever the reduced kubeconfig differs (a rotated token or certificate, a moved server), the konnector's
 * sync loop stops (finishing the work in flight) and starts again with the new credentials — a re-list of the app
 * cluster, nothing lost. A missing or unusable Secret is reported and waited for; a running loop keeps running with
 * the credentials it has.
 */
import type { KubeConfig, V1Secret } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { watchInformer } from '../controller';
import { appClusterKubeConfig, checkAppClusterKubeconfig } from '../exports/bind-api/app-cluster-kubeconfig';
import { untilAborted } from '../lib/abort';

export interface AppClusterSecret {
  readonly secretName: string;
  readonly secretNamespace: string;
  readonly secretKey: string;
}

export interface FollowOptions {
  /** The control plane. */
  readonly home: KubeConfig;
  readonly secret: AppClusterSecret;
  readonly log: Logger;
  /** Runs the sync loop against the app cluster until `signal` aborts. */
  run(app: KubeConfig, signal: AbortSignal): Promise<void>;
  /** Why there is no app cluster to sync with (readiness); undefined when the loop runs. */
  readonly state: { problem?: string };
}

/** The reduced kubeconfig in `secret`, or why there is none. */
function appClusterFrom(s: V1Secret | undefined, ref: AppClusterSecret): ReturnType<typeof checkAppClusterKubeconfig> {
  const where = `Secret ${ref.secretNamespace}/${ref.secretName}`;
  if (!s) return { ok: false, reason: 'KubeconfigInvalid', message: `${where} (--app-cluster-kubeconfig-secret-name) does not exist` };
  const raw = s.data?.[ref.secretKey];
  if (!raw)
    return {
      ok: false,
      reason: 'KubeconfigInvalid',
      message: `${where} has no key "${ref.secretKey}" (--app-cluster-kubeconfig-secret-key)`,
    };
  return checkAppClusterKubeconfig(Buffer.from(raw, 'base64').toString('utf8'), `${where} key "${ref.secretKey}"`);
}

/** Runs `o.run` with the app cluster of the Secret, restarting it whenever the Secret's kubeconfig changes. */
export async function followAppCluster(o: FollowOptions, signal: AbortSignal): Promise<void> {
  const { secretName: name, secretNamespace: ns } = o.secret;
  const inf = watchInformer<V1Secret>({
    kc: o.home,
    path: `/api/v1/namespaces/${ns}/secrets`,
    fieldSelector: `metadata.name=${name}`,
    log: o.log,
  });
  let wake: () => void = () => {};
  for (const e of ['add', 'update', 'delete'] as const) inf.on(e, () => wake());
  void inf.start();
  let current: { key: string; abort: AbortController; done: Promise<void> } | undefined;
  o.state.problem = `waiting for Secret ${ns}/${name}`;
  try {
    while (!signal.aborted) {
      // The shared abortable wait: it removes its abort listener when woken (one was left per turn, without bound).
      const waiting = untilAborted(new Promise<void>((r) => (wake = r)), signal);
      if (inf.hasSynced()) {
        const check = appClusterFrom(inf.get(name, ns), o.secret);
        if (!check.ok) {
          o.state.problem = check.message;
          o.log.error({ reason: check.reason, keepsRunning: Boolean(current) }, check.message);
        } else {
          const key = JSON.stringify(check);
          if (key !== current?.key) {
            if (current) {
              o.log.info({ secret: `${ns}/${name}` }, "the app cluster's kubeconfig changed: restarting the sync with it");
              current.abort.abort();
              await current.done;
            }
            const abort = new AbortController();
            const run = (current = { key, abort, done: Promise.resolve() });
            run.done = o
              .run(appClusterKubeConfig(check), abort.signal)
              .then(
                () => undefined,
                (e: unknown) => o.log.error({ err: e }, 'the sync with the app cluster ended with an error; starting it again in 5s'),
              )
              .finally(() => {
                // Ended by itself (not by a rotation or shutdown): start again after a pause.
                if (!abort.signal.aborted && current === run) {
                  current = undefined;
                  setTimeout(() => wake(), 5_000).unref();
                }
              });
            o.log.info({ server: check.server, secret: `${ns}/${name}` }, 'syncing with the app cluster');
          }
          o.state.problem = undefined;
        }
      } else {
        void inf.synced.then(() => wake());
        setTimeout(() => wake(), 2_000).unref();
        const err = inf.lastError();
        if (err) o.state.problem = `cannot read Secret ${ns}/${name}: ${err}`;
      }
      await waiting;
    }
  } catch (e) {
    o.log.error({ err: e }, 'following the app cluster kubeconfig failed');
    throw e;
  } finally {
    current?.abort.abort();
    await current?.done;
    await inf.stop();
  }
}
