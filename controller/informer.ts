/**
 * An informer: @kubernetes/client-node's ListWatch (list, then watch from the list's resourceVersion, re-list on 410,
 * a cache of objects), plus what controllers need and ListWatch leaves out:
 * - it restarts by itself after an error (API server away, token refused), with capped exponential backoff, instead
 *   of stopping for good; a restart resumes from the last resourceVersion, so no event is lost unless etcd compacted
 *   it, in which case the 410 makes ListWatch list again and deliver the differences;
 * - `synced` resolves, and `hasSynced()` turns true, once the first list is in the cache (readiness, and the point
 *   after which a missing object really is missing);
 * - field selectors;
 * - one shape in the cache: it lists the collection itself, as wire JSON, like the watch events it then applies. (A
 *   typed client-node list renames keys — `x-kubernetes-preserve-unknown-fields` becomes
 *   `xKubernetesPreserveUnknownFields` — and turns timestamps into Dates, so one cache would hold two shapes.)
 * - a transform (client-go's `SetTransform`): every listed object and watch event passes through it before the
 *   cache, so a controller caches only what it reads.
 */
import https from 'node:https';
import { type KubeConfig, type KubernetesListObject, type KubernetesObject, ListWatch, Watch } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import { messageOf } from '../lib/kube-errors';
import { backoffDelay } from './backoff';
import { keepAliveAgent, watchConfig } from './clients';
import { userAgent } from '../lib/user-agent';

export type InformerEvent = 'add' | 'update' | 'delete';

/**
 * What an informer may hold: any object with a name, typed as its wire JSON is (ours, with RFC 3339 strings) or as
 * client-node types it (with Dates). Informers are typed by the resource they watch, so their users need no cast; the
 * one cast between that type and ListWatch's `KubernetesObject` is here, where the JSON enters the cache.
 */
export interface InformerObject {
  readonly metadata?: { readonly name?: string; readonly namespace?: string; readonly resourceVersion?: string };
}

export interface WatchInformerOptions<T extends InformerObject> {
  readonly kc: KubeConfig;
  /** The collection's path: `/api/v1/namespaces/ns/secrets`, `/apis/group/v1/widgets`. */
  readonly path: string;
  readonly labelSelector?: string;
  readonly fieldSelector?: string;
  /** Warnings about failed watches; the informer retries by itself. */
  readonly log?: Logger;
  /** First restart delay after an error. @default 200 */
  readonly minRestartDelayMs?: number;
  /** @default 10_000 */
  readonly maxRestartDelayMs?: number;
  /**
   * Applied to every object before it enters the cache (listed or from a watch event) and before handlers see it;
   * may change the object in place. Deletions pass through it too, so the handlers see one shape.
   */
  readonly transform?: (obj: T) => T;
  /** Told of every failed list or watch (before the informer retries), for owners that act on the kind of failure. */
  readonly onError?: (err: unknown) => void;
}

export interface WatchInformer<T extends InformerObject> {
  get(name: string, namespace?: string): T | undefined;
  list(namespace?: string): readonly T[];
  /** Resolves once the first list is in the cache. */
  readonly synced: Promise<void>;
  hasSynced(): boolean;
  on(event: InformerEvent, cb: (obj: T) => void): void;
  off(event: InformerEvent, cb: (obj: T) => void): void;
  /** The last error, while the informer is retrying after it; undefined when the watch runs. */
  lastError(): string | undefined;
  /** Starts listing and watching; resolves after the first attempt (see `synced` for success). */
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** An informer over one collection; call `start()`. */
export function watchInformer<T extends InformerObject>(o: WatchInformerOptions<T>): WatchInformer<T> {
  const t = o.transform;
  const list = async () => {
    const l = await listWire<T>(o.kc, o.path, { labelSelector: o.labelSelector, fieldSelector: o.fieldSelector });
    if (t) l.items = l.items.map(t);
    return l;
  };
  const lw = new ListWatch<KubernetesObject>(
    o.path,
    t ? transformingWatch(serverTimedWatch(o.kc), t) : serverTimedWatch(o.kc),
    list as () => Promise<KubernetesListObject<KubernetesObject>>,
    false,
    o.labelSelector,
    o.fieldSelector,
  );
  const minDelay = o.minRestartDelayMs ?? 200;
  const maxDelay = o.maxRestartDelayMs ?? 10_000;
  let stopped = true;
  let synced = false;
  let failures = 0;
  let error: string | undefined;
  let restartTimer: NodeJS.Timeout | undefined;
  let markSynced: () => void = () => {};
  const syncedPromise = new Promise<void>((resolve) => (markSynced = resolve));

  const attempt = async (): Promise<void> => {
    let failed = false;
    const onError = () => (failed = true);
    lw.on('error', onError);
    try {
      await lw.start();
    } finally {
      lw.off('error', onError);
    }
    if (!failed && !stopped) {
      // ListWatch.start() resolves once the list is in the cache and the watch is open.
      failures = 0;
      error = undefined;
      if (!synced) {
        synced = true;
        markSynced();
      }
    }
  };

  lw.on('error', (err: unknown) => {
    if (stopped) return;
    error = messageOf(err) || 'watch failed';
    const delay = backoffDelay(failures, { baseMs: minDelay, maxMs: maxDelay });
    failures++;
    o.log?.warn({ path: o.path, err, retryInMs: delay }, 'watch failed; restarting');
    o.onError?.(err);
    clearTimeout(restartTimer);
    restartTimer = setTimeout(() => {
      if (!stopped) void attempt();
    }, delay);
  });

  return {
    get: (name, namespace) => lw.get(name, namespace) as T | undefined,
    list: (namespace) => lw.list(namespace) as readonly KubernetesObject[] as readonly T[],
    synced: syncedPromise,
    hasSynced: () => synced,
    on: (event, cb) => lw.on(event, cb as (o: KubernetesObject) => void),
    off: (event, cb) => lw.off(event, cb as (o: KubernetesObject) => void),
    lastError: () => error,
    start: async () => {
      stopped = false;
      await attempt();
    },
    stop: async () => {
      stopped = true;
      clearTimeout(restartTimer);
      await lw.stop();
    },
  };
}

/** The API server ends each watch after this long, plus up to as much again at random (client-go's 5-10 min). */
const WATCH_TIMEOUT_S = 300;
/** How long past the server's end of a watch a silent one counts as a dead connection. */
const WATCH_SLACK_S = 30;

/**
 * A Watch the API server ends, as client-go's: with `timeoutSeconds` (at random, so informers do not all come back at
 * once) and `allowWatchBookmarks`, for which the API server sends a BOOKMARK about every minute of a watch with an
 * end, so a quiet collection's resourceVersion stays recent and the next watch resumes from it without a 410 and a
 * full list. client-node's Watch aborts one that carries nothing for `requestTimeoutMs` (30 s by default, which cut
 * every quiet watch and made informers relist and back off, missing events for up to 30 s): it is kept past the
 * server's end, so only a dead connection trips it.
 */
function serverTimedWatch(kc: KubeConfig, timeoutS = WATCH_TIMEOUT_S): Watch {
  const w = new Watch(watchConfig(kc));
  const watch = w.watch.bind(w);
  w.watch = (path, query, cb, done) => {
    const timeoutSeconds = timeoutS + Math.floor(Math.random() * timeoutS);
    // Private in its types; read by each watch as it arms its timer.
    Object.assign(w, { requestTimeoutMs: (timeoutSeconds + WATCH_SLACK_S) * 1000 });
    return watch(path, { ...query, timeoutSeconds, allowWatchBookmarks: true }, cb, done);
  };
  return w;
}

/**
 * `watch` with `transform` applied to each event's object (not to ERROR events' Status, nor BOOKMARKs, which carry
 * no object to cache), the only place ListWatch lets an object pass before it caches it.
 */
function transformingWatch<T>(watch: Watch, transform: (obj: T) => T): Watch {
  return Object.assign(Object.create(watch) as Watch, {
    watch: (
      path: string,
      query: Record<string, string | number | boolean | undefined>,
      cb: (phase: string, obj: any, w?: any) => void,
      done: (err: any) => void,
    ) =>
      watch.watch(
        path,
        query,
        (phase, obj, w) => cb(phase, phase === 'ERROR' || phase === 'BOOKMARK' ? obj : transform(obj as T), w),
        done,
      ),
  });
}

/**
 * The kept connections of each KubeConfig's lists: an informer lists at its start and after a failed watch, and a
 * controller starts its informers together; without an agent of its own every list was a new TLS connection.
 */
const listAgents = new WeakMap<KubeConfig, ReturnType<typeof keepAliveAgent>>();

/** A GET of a collection as wire JSON (what watch events carry), authenticated as `kc`'s current user. */
export async function listWire<T extends InformerObject>(
  kc: KubeConfig,
  path: string,
  selectors: { labelSelector?: string; fieldSelector?: string } = {},
): Promise<{ items: T[]; metadata?: { resourceVersion?: string } }> {
  const server = kc.getCurrentCluster()?.server;
  if (!server) throw new Error('the kubeconfig has no current cluster with a server');
  const url = new URL(new URL(server).pathname.replace(/\/$/, '') + path, server);
  if (selectors.labelSelector) url.searchParams.set('labelSelector', selectors.labelSelector);
  if (selectors.fieldSelector) url.searchParams.set('fieldSelector', selectors.fieldSelector);
  const opts: https.RequestOptions = { method: 'GET', headers: { Accept: 'application/json', 'User-Agent': userAgent() } };
  await kc.applyToHTTPSOptions(opts);
  let agentFor = listAgents.get(kc);
  if (!agentFor) listAgents.set(kc, (agentFor = keepAliveAgent(8)));
  opts.agent = agentFor(opts);
  return new Promise((resolve, reject) => {
    const req = https.request(url, opts, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        if ((res.statusCode ?? 0) >= 300) {
          let message = text;
          try {
            message = (JSON.parse(text) as { message?: string }).message ?? text;
          } catch {
            // not a Status: keep the text
          }
          // The shape client-node's own errors have, so callers (and ListWatch's 410 handling) read `code`.
          return reject(
            Object.assign(new Error(`list ${path}: ${res.statusCode} ${message}`), { code: res.statusCode, statusCode: res.statusCode }),
          );
        }
        try {
          resolve(JSON.parse(text) as { items: T[]; metadata?: { resourceVersion?: string } });
        } catch (e) {
          reject(new Error(`list ${path}: the answer is not JSON: ${messageOf(e)}`, { cause: e }));
        }
      });
    });
    req.on('error', reject);
    req.end();
  });
}
