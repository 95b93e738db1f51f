/**
 * Binding an API, step by step: kubeconfig Secret (SecretValid) → provider connection (Connected) → APIServiceExport
 * → permission to use the resource in the app cluster → CRD (SchemaInSync, crd.ts) → syncer (InformersSynced), with
 * the connection's heartbeat (Heartbeating, KubeconfigCurrent). Each step adds its conditions; the first that cannot
 * go on returns, and the steps after it say what they wait for.
 */
import type { ReconcileContext } from '../../controller';
import { APIServiceBindingConditions as C, type APIServiceBinding, type APIServiceExport } from '../../exports/bind-api';
import { exportMismatch } from '../schema/schema';
import { accessNeeded } from './access';
import {
  controlPlaneVersion,
  forbidden,
  heartbeating,
  KUBECONFIG_CURRENT,
  kubeconfigCurrent,
  waitingFor,
  type BindingCondition,
} from './binding.conditions';
import type { BindingDeps, Progress } from './binding.deps';
import { resourceOf, syncCrd } from './crd';
import { checkKubeconfigSecret } from './kubeconfig';
import { upstreamVersionOf, type Upstream } from '../provider/export/conversion';
import { KONNECTOR_VERSION } from '../version';

/** Claimed resources the konnector copies. */
const COPYABLE = ['secrets', 'configmaps'];

/**
 * Everything up to a running syncer; the conditions say how far it got. `removing`: the binding is being deleted
 * (its CRD is not made again, see crd.ts).
 */
export async function bind(
  d: BindingDeps,
  key: string,
  b: APIServiceBinding,
  removing: boolean,
  ctx: Pick<ReconcileContext, 'log'>,
): Promise<Progress> {
  const ref = b.spec.kubeconfigSecretRef;
  const conds: BindingCondition[] = [];

  const check = checkKubeconfigSecret(ref, await d.readKubeconfigSecret(ref));
  if (check.ok) conds.push({ type: C.SecretValid, status: 'True', reason: 'SecretValid' });
  else {
    conds.push({ type: C.SecretValid, status: 'False', reason: check.reason, message: check.message });
    // A connection already open keeps serving with the credentials it has: losing the Secret loses no data.
    if (!d.connectionOf(key)) {
      conds.push(
        ...waitingFor(
          'waiting for a valid kubeconfig Secret',
          C.Connected,
          C.SchemaInSync,
          C.InformersSynced,
          C.Heartbeating,
          KUBECONFIG_CURRENT,
        ),
      );
      return { conditions: conds, retryMs: 30_000 };
    }
  }

  const conn = await d.connect(key, check.ok ? check : undefined, ref);
  if (!conn.hasSynced()) {
    const err = conn.lastError();
    conds.push({
      type: C.Connected,
      status: err ? 'False' : 'Unknown',
      reason: err ? 'ProviderUnreachable' : 'Connecting',
      message: err ? `cannot reach the provider ${conn.server} (namespace ${conn.namespace}): ${err}` : `connecting to ${conn.server}`,
    });
    conds.push(...waitingFor('waiting for the provider connection', C.SchemaInSync, C.InformersSynced, C.Heartbeating, KUBECONFIG_CURRENT));
    return { conditions: conds };
  }
  // Listed once, then cut off (the control plane down, its address or a NetworkPolicy changed): the caches keep
  // serving, so the steps below still read, but the binding says it has lost the provider until a watch runs again.
  const lost = conn.lastError();
  conds.push(
    lost
      ? {
          type: C.Connected,
          status: 'False',
          reason: 'ProviderUnreachable',
          message: `lost the provider ${conn.server} (namespace ${conn.namespace}): ${lost}; the konnector retries, and until it answers no change or status of a claim travels`,
        }
      : { type: C.Connected, status: 'True', reason: 'Connected', message: `${conn.server}, namespace ${conn.namespace}` },
  );
  const prettyName = conn.clusterBinding()?.spec.providerPrettyName;
  const skew = controlPlaneVersion(conn.clusterBinding()?.metadata.annotations, d.version ?? KONNECTOR_VERSION);
  const provider = [
    heartbeating(conn.heartbeat),
    kubeconfigCurrent(conn.refusedRotations.get(`${ref.namespace}/${ref.name}`)),
    ...(skew ? [skew] : []),
  ];

  const exp = conn.exports.get(b.metadata.name!, conn.namespace);
  // Names come from the binding: an export that describes another resource than its name says is refused before
  // anything (access checks, CRD) is done for it.
  const mismatch = exp && exportMismatch(exp, b);
  if (mismatch) {
    conds.push({ type: C.SchemaInSync, status: 'False', reason: 'ExportNameMismatch', message: mismatch });
    conds.push(...waitingFor('waiting for the schema', C.InformersSynced), ...provider);
    return { conditions: conds, prettyName, retryMs: 30_000 };
  }
  const claims = (b.spec.permissionClaims ?? []).filter(
    (c) => c.state === 'Accepted' && (c.group ?? '') === '' && COPYABLE.includes(c.resource) && c.selector?.owner !== 'Consumer',
  );
  // Permission first: without it the konnector must not even create the CRD it could not manage afterwards.
  const wanted = exp && resourceOf(exp);
  const checks = wanted
    ? accessNeeded(
        wanted,
        claims.map((c) => c.resource),
      )
    : [];
  if (wanted) {
    const missing = await d.missingAccess(checks);
    if (missing.length) {
      conds.push(forbidden(missing, wanted, d.controlPlaneMode));
      conds.push({ type: C.SchemaInSync, status: 'Unknown', reason: 'Forbidden', message: 'waiting for access to the API' }, ...provider);
      return { conditions: conds, prettyName, retryMs: 10_000 };
    }
  }
  const crd = await syncCrd(d, b, exp, conn.namespace, removing, ctx);
  conds.push(crd.condition);
  if (!crd.resource) {
    conds.push(...waitingFor('waiting for the schema', C.InformersSynced), ...provider);
    return { conditions: conds, prettyName };
  }

  const syncer = await d.runSyncer(key, {
    resource: crd.resource,
    ...(exp ? upstreamFor(exp, crd.resource.version, ctx) : {}),
    statusSubresource: crd.statusSubresource,
    statusConditions: crd.statusConditions,
    claims,
  });
  const synced = syncer.hasSynced();
  const err = syncer.lastError();
  // A watch that failed after it had listed may be a grant withdrawn: the next reconcile asks again and, if so, says
  // what to apply. Not while it has never listed: those errors are the set-up's (e.g. the provider's RBAC not yet
  // there), and forgetting on each of them asked every check again once a second (seen in app-cluster-binding.test).
  if (synced && err) d.forgetAccess(checks);
  conds.push(
    synced
      ? { type: C.InformersSynced, status: 'True', reason: 'InformersSynced' }
      : {
          type: C.InformersSynced,
          status: err ? 'False' : 'Unknown',
          reason: err ? 'WatchFailed' : 'Syncing',
          message: err ?? 'listing objects',
        },
    ...provider,
  );
  return { conditions: conds, prettyName, syncer, resource: crd.resource, ...(synced ? {} : { retryMs: 1_000 }) };
}

/**
 * The control plane's version for an app cluster on `version`. An annotation this konnector cannot use leaves the
 * syncer on the app cluster's version, which the control plane's conversion webhook serves too: slower, not broken.
 */
function upstreamFor(exp: APIServiceExport, version: string, ctx: Pick<ReconcileContext, 'log'>): { upstream?: Upstream } {
  try {
    const upstream = upstreamVersionOf(exp, version);
    return upstream ? { upstream } : {};
  } catch (e) {
    ctx.log.warn({ err: e }, 'syncing in the app cluster version: the control plane converts');
    return {};
  }
}
