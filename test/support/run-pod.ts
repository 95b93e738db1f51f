/** A Pod run to its end, as a one-off `kubectl run --rm` does: its phase, its log, its status; deleted after. */
import { eventually, getObject, requireOk, type Kube, type WireObject } from '../../harness/cluster/kube';

export interface PodRun {
  readonly phase: 'Succeeded' | 'Failed';
  readonly log: string;
  /** The Pod as it ended (its containerStatuses say which image ID ran). */
  readonly pod: WireObject;
}

export async function runPodToEnd(kube: Kube, ns: string, pod: WireObject, timeoutMs = 120_000): Promise<PodRun> {
  const path = `/api/v1/namespaces/${ns}/pods/${pod.metadata.name}`;
  await requireOk(kube, 'POST', `/api/v1/namespaces/${ns}/pods`, pod);
  try {
    const done = await eventually(
      `Pod ${ns}/${pod.metadata.name} to end`,
      async () => {
        const p = await getObject(kube, path);
        return ['Succeeded', 'Failed'].includes(p?.status?.phase) ? p : undefined;
      },
      timeoutMs,
    ).catch(async (e: Error) => {
      const p = await getObject(kube, path);
      throw new Error(`${e.message}; its status: ${JSON.stringify(p?.status ?? {})}`);
    });
    const body = (await kube.request('GET', `${path}/log`)).body as unknown;
    const log = typeof body === 'string' ? body : String((body as { message?: unknown })?.message ?? JSON.stringify(body));
    return { phase: done.status.phase, log, pod: done };
  } finally {
    await kube.request('DELETE', `${path}?gracePeriodSeconds=0`);
  }
}
