/**
 * Status down: one provider copy (key `providerNamespace/name`) → the status of its consumer object. Also removes a
 * copy whose consumer object is gone (deleted while the konnector was down, or its finalizer removed by hand), once
 * the consumer cluster itself confirms it is gone — a lagging cache never deletes anything upstream.
 *
 * A claim's status (one with conditions) comes down with its Ready condition naming the hop that holds it
 * (lib/claim-hold.ts): the app developer reads where it waits, and what to do, with kubectl get.
 */
import type { ReconcileResult } from '../../../../controller';
import { Annotations } from '../../../../exports/bind-api';
import { withHold, type Hold } from '../../../../lib/claim-hold';
import { isDeleting, jsonEqual, type Obj } from '../../../kube/objects';
import type { NamespaceMap } from '../../../names';

export interface StatusDeps {
  getProvider(namespace: string, name: string): Obj | undefined;
  readonly namespaces: NamespaceMap;
  /** Whether the resource's status has conditions (a claim's): its Ready condition then names what holds it. */
  readonly claim?: boolean;
  /** What holds the binding, while it is not Ready: it then holds each of its claims that is not Ready either. */
  bindingHold?(): Hold | undefined;
  getConsumer(namespace: string, name: string): Obj | undefined;
  /** The consumer object read from the API server. */
  readConsumer(namespace: string, name: string): Promise<Obj | undefined>;
  /** Replaces the consumer object's status. */
  writeConsumerStatus(consumer: Obj, status: unknown): Promise<void>;
  deleteProvider(namespace: string, name: string, uid: string): Promise<void>;
  observe?(what: 'status' | 'orphan', provider: Obj): void;
}

export async function reconcileStatus(deps: StatusDeps, providerNamespace: string, name: string): Promise<ReconcileResult> {
  const p = deps.getProvider(providerNamespace, name);
  if (!p || p.metadata.annotations?.[Annotations.bound] !== 'true') return undefined; // gone, or not a copy of ours
  const consumerNamespace = deps.namespaces.consumerNamespace(providerNamespace);
  if (consumerNamespace === undefined) return undefined; // the backend removes namespaces no APIServiceNamespace maps
  const c = deps.getConsumer(consumerNamespace, name) ?? (await deps.readConsumer(consumerNamespace, name));
  if (!c) {
    if (!isDeleting(p)) {
      await deps.deleteProvider(providerNamespace, name, p.metadata.uid ?? '');
      deps.observe?.('orphan', p);
    }
    return undefined;
  }
  const status = deps.claim
    ? withHold(p.status ?? {}, p.metadata.creationTimestamp ?? c.metadata.creationTimestamp ?? '', deps.bindingHold?.())
    : (p.status ?? {});
  if (isDeleting(c) || jsonEqual(c.status ?? {}, status)) return undefined;
  await deps.writeConsumerStatus(c, status);
  deps.observe?.('status', p);
  return undefined;
}
