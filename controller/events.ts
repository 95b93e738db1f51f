/**
 * Warning Events on the objects users look at (`kubectl describe`), for what only they can fix: the konnector's an
 * upstream object it did not create or a Secret of the same name in the way, the backend's an export request it
 * refused or a consumer whose credentials it revoked. The same warning on the same object is written once per
 * `repeatMs`; the memory of what was written is bounded. A failed write is logged at debug, never retried: the
 * warning is in the log already.
 *
 * Each namespace has a bucket of writes (`burst`, one back every `refillMs`), as client-go's EventCorrelator has
 * per object: a tenant who makes many objects that fail (export requests in its cluster namespace) would otherwise
 * have the backend write one Event per object, a write to the API server and etcd for every write of theirs. Past
 * the bucket the warning is logged only.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';

/** The object an Event is about. */
export interface EventSubject {
  readonly apiVersion: string;
  readonly kind: string;
  /** An object without a name (never one read from the API server) gets the log line only. */
  readonly metadata: { readonly name?: string; readonly namespace?: string; readonly uid?: string };
}

export type Warn = (obj: EventSubject, reason: string, message: string) => void;

export interface EventRecorderOptions {
  readonly core: CoreV1Api;
  readonly log: Logger;
  /** `source.component` of each Event: who says it. @default konnector */
  readonly component?: string;
  /** @default 10 minutes */
  readonly repeatMs?: number;
  /** Events a namespace may get at once. @default 25 */
  readonly burst?: number;
  /** One more Event for a namespace after this long. @default 10 seconds */
  readonly refillMs?: number;
  readonly now?: () => number;
}

export function eventRecorder(o: EventRecorderOptions): Warn {
  const seen = new Map<string, number>();
  const repeatMs = o.repeatMs ?? 10 * 60_000;
  const now = o.now ?? Date.now;
  const burst = o.burst ?? 25;
  const refillMs = o.refillMs ?? 10_000;
  const buckets = new Map<string, { tokens: number; at: number }>();
  /** Takes a write from the namespace's bucket, if one is left. */
  const allowed = (namespace: string): boolean => {
    const t = now();
    const b = buckets.get(namespace) ?? { tokens: burst, at: t };
    b.tokens = Math.min(burst, b.tokens + (t - b.at) / refillMs);
    b.at = t;
    buckets.delete(namespace); // re-inserted last: the oldest namespace is the one dropped when the map is full
    buckets.set(namespace, b);
    if (buckets.size > 1000) buckets.delete(buckets.keys().next().value as string);
    if (b.tokens < 1) return false;
    b.tokens -= 1;
    return true;
  };
  return (obj, reason, message) => {
    const id = `${obj.metadata.uid}|${reason}|${message}`;
    const at = seen.get(id);
    o.log.warn({ object: `${obj.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, reason }, message);
    if (!obj.metadata.name || (at !== undefined && now() - at < repeatMs)) return;
    const namespace = obj.metadata.namespace ?? 'default';
    if (!allowed(namespace)) return;
    seen.set(id, now());
    if (seen.size > 1000) seen.delete(seen.keys().next().value as string);
    const t = new Date();
    void o.core
      .createNamespacedEvent({
        namespace,
        body: {
          metadata: { generateName: `${obj.metadata.name}.`, namespace },
          involvedObject: { apiVersion: obj.apiVersion, kind: obj.kind, name: obj.metadata.name, namespace, uid: obj.metadata.uid },
          reason,
          message,
          type: 'Warning',
          source: { component: o.component ?? 'konnector' },
          firstTimestamp: t,
          lastTimestamp: t,
          count: 1,
        },
      })
      .catch((e: unknown) => o.log.debug({ err: e }, 'cannot record an event'));
  };
}
