/**
 * Warning Events on the objects users look at (`kubectl describe`), for what only they can fix: an upstream object
 * the konnector did not create, a Secret of the same name in the way. The same warning on the same object is written
 * once per `repeatMs`; the memory of what was written is bounded.
 */
import type { CoreV1Api } from '@kubernetes/client-node';
import type { Logger } from 'pino';
import type { Obj } from './kube/objects';

export type Warn = (obj: Obj, reason: string, message: string) => void;

export function eventRecorder(o: { core: CoreV1Api; log: Logger; component?: string; repeatMs?: number; now?: () => number }): Warn {
  const seen = new Map<string, number>();
  const repeatMs = o.repeatMs ?? 10 * 60_000;
  const now = o.now ?? Date.now;
  return (obj, reason, message) => {
    const id = `${obj.metadata.uid}|${reason}|${message}`;
    const at = seen.get(id);
    o.log.warn({ object: `${obj.kind} ${obj.metadata.namespace ?? ''}/${obj.metadata.name}`, reason }, message);
    if (at !== undefined && now() - at < repeatMs) return;
    seen.set(id, now());
    if (seen.size > 1000) seen.delete(seen.keys().next().value as string);
    const namespace = obj.metadata.namespace ?? 'default';
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
