/**
 * The export-request path: a consumer holding its kubeconfig can create an APIServiceExportRequest for any API
 * without /bind, so the controller checks such requests too. It needs the identity, which only /bind has verified:
 * /bind records it on the consumer's ClusterBinding (annotation `klutch-kit.anynines.com/bound-by`, JSON of issuer,
 * subject and groups). The consumer cannot change it: its token writes only the ClusterBinding's status, and the
 * API server keeps metadata as it was on a status write. A ClusterBinding without the record (made before this rule
 * existed) stands for an identity without groups.
 */
import { type Exportable } from '../exportable';
import { messageOf, BindResources, type BackendClients } from '../kube';
import { bindObjects, CLUSTER_BINDING_NAME, type ClusterBinding } from '../../exports/bind-api';
import { apiName, mayBind, type BindDecision, type BindIdentity, type DefaultBindPolicy } from './bind-policy';

export const BOUND_BY = 'klutch-kit.anynines.com/bound-by';

export interface RecordedBinder extends BindIdentity {
  readonly issuer?: string;
}

/**
 * The annotation value that records `who` (JSON of issuer, subject, groups and a machine's client id). A bind writes
 * it while provisioning, in the same write as its last-bind time (provision/consumer.ts).
 */
export function binderRecord(who: RecordedBinder): string {
  return JSON.stringify({ iss: who.issuer, sub: who.subject, groups: who.groups, ...(who.clientId ? { cid: who.clientId } : {}) });
}

/** The binder recorded on the ClusterBinding of `namespace`, read from the API server (an informer may lag the bind). */
export async function recordedBinder(clients: BackendClients, namespace: string): Promise<RecordedBinder> {
  let cb: ClusterBinding | undefined;
  try {
    cb = await bindObjects<ClusterBinding>(clients.custom, BindResources.clusterBindings).get({ namespace, name: CLUSTER_BINDING_NAME });
  } catch (e) {
    throw new Error(`cannot read ClusterBinding ${namespace}/${CLUSTER_BINDING_NAME}: ${messageOf(e)}`, { cause: e });
  }
  if (!cb) return { groups: [] };
  const raw = cb.metadata?.annotations?.[BOUND_BY];
  if (!raw) return { groups: [] };
  try {
    const v = JSON.parse(raw) as { iss?: unknown; sub?: unknown; groups?: unknown; cid?: unknown };
    return {
      ...(typeof v.iss === 'string' ? { issuer: v.iss } : {}),
      ...(typeof v.sub === 'string' ? { subject: v.sub } : {}),
      ...(typeof v.cid === 'string' ? { clientId: v.cid } : {}),
      groups: Array.isArray(v.groups) ? v.groups.filter((g): g is string => typeof g === 'string') : [],
    };
  } catch {
    return { groups: [] };
  }
}

/** mayBind for an APIServiceExportRequest in cluster namespace `namespace`: the recorded binder's identity. */
export async function mayRequest(
  clients: BackendClients,
  namespace: string,
  exportable: Exportable,
  defaultPolicy: DefaultBindPolicy,
): Promise<{ decision: BindDecision; binder: RecordedBinder; api: string }> {
  const binder = await recordedBinder(clients, namespace);
  return { decision: mayBind(binder, exportable.template, defaultPolicy), binder, api: apiName(exportable.template) };
}
