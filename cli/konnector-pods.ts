/**
 * Why the konnector does not report, as `kubectl describe pod` would show it: a binding that stays without status
 * after the wait is, most of the time, a konnector Pod that cannot start (its image not pulled, a crash loop, no node
 * for it), and the app developer should read that, not "the konnector has not reported".
 */
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { selectorLabels } from '../lib/workload';
import { KONNECTOR_NAME } from '../konnector/deploy/konnector';

/** What keeps one Pod from serving, in the kubelet's and the scheduler's words; undefined when it runs and is Ready. */
export function podTrouble(pod: V1Pod): string | undefined {
  const name = `Pod ${pod.metadata?.name ?? '?'}`;
  const conditions = pod.status?.conditions ?? [];
  const unscheduled = conditions.find((c) => c.type === 'PodScheduled' && c.status === 'False');
  if (unscheduled) return `${name} cannot be scheduled: ${unscheduled.message ?? unscheduled.reason ?? 'no node for it'}`;
  for (const c of [...(pod.status?.initContainerStatuses ?? []), ...(pod.status?.containerStatuses ?? [])]) {
    const waiting = c.state?.waiting;
    if (waiting?.reason && waiting.reason !== 'PodInitializing' && waiting.reason !== 'ContainerCreating') {
      const last = c.lastState?.terminated;
      const exited = last ? `; it last exited with code ${last.exitCode}${last.reason ? ` (${last.reason})` : ''}` : '';
      return `${name}: ${waiting.reason}${waiting.message ? `, ${waiting.message}` : ''}${exited}`;
    }
  }
  if (pod.status?.phase === 'Failed') return `${name} failed: ${pod.status.message ?? pod.status.reason ?? 'no reason given'}`;
  const ready = conditions.find((c) => c.type === 'Ready');
  if (pod.status?.phase === 'Running' && ready?.status === 'True') return undefined;
  return `${name} is ${pod.status?.phase ?? 'Pending'}, not Ready${ready?.message ? `: ${ready.message}` : ''}`;
}

/** What keeps the konnector in `namespace` from reporting, or undefined when its Pods run (the wait was short). */
export async function konnectorTrouble(core: CoreV1Api, namespace: string): Promise<string | undefined> {
  const labels = selectorLabels(KONNECTOR_NAME);
  const labelSelector = Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
  const pods = (await core.listNamespacedPod({ namespace, labelSelector })).items.filter((p) => !p.metadata?.deletionTimestamp);
  if (!pods.length) return `no konnector Pod runs in namespace ${namespace} (labels ${labelSelector})`;
  const troubles = pods.map(podTrouble).filter((t): t is string => t !== undefined);
  return troubles.length === pods.length ? `the konnector cannot run: ${troubles.join('; ')}` : undefined;
}
