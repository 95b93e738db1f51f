/**
 * The conditions of an APIServiceBinding that say how a step went: the provider connection's heartbeat, the last
 * kubeconfig rotation, waiting on an earlier step, missing access, and the deletion in progress.
 */
import { APIServiceBindingConditions as C, type ConditionInput } from '../../exports/bind-api';
import type { ProviderConnection } from '../provider/connection';
import type { ResourceRef } from '../kube/objects';
import { APP_CLUSTER_ROLE } from '../../lib/app-cluster-access';
import { BACKEND_VERSION_ANNOTATION, releaseDoc } from '../../lib/version';
import { compareVersions, parseVersion } from '../../lib/semver';
import type { BindingReason } from '../../lib/binding-reasons';

/** A condition of a binding: its reason one of lib/binding-reasons.ts, which says what each means on a claim. */
export type BindingCondition = ConditionInput & { readonly reason: BindingReason };

/** Whether the provider's kubeconfig was copied at the last heartbeat, or refused (not in the bind API's list: ours). */
export const KUBECONFIG_CURRENT = 'KubeconfigCurrent';
/** Whether this konnector may run with the control plane's release (not in the bind API's list: ours). */
const CONTROL_PLANE_VERSION = 'ControlPlaneVersion';
/**
 * Conditions set only where a reconcile can decide them: one it did not set is removed rather than kept as it was, so
 * a skew warning does not outlive the stamp it was read from.
 */
export const SET_WHEN_DECIDED: readonly string[] = [CONTROL_PLANE_VERSION];
/** Shown while a deleted binding waits for its objects (not in the bind API's list: ours). */
const DELETING = 'Deleting';

/** Conditions a step after `types` cannot decide yet. */
export const waitingFor = (why: string, ...types: string[]): BindingCondition[] =>
  types.map((type) => ({ type, status: 'Unknown', reason: 'Waiting', message: why }));

export function heartbeating(h: ProviderConnection['heartbeat']): BindingCondition {
  if (h.error) return { type: C.Heartbeating, status: 'False', reason: 'HeartbeatFailed', message: h.error };
  if (!h.at) return { type: C.Heartbeating, status: 'Unknown', reason: 'FirstHeartbeatPending', message: 'no heartbeat written yet' };
  return { type: C.Heartbeating, status: 'True', reason: 'Heartbeating', message: `last heartbeat ${h.at.toISOString()}` };
}

/** Whether the last heartbeat refused the provider's kubeconfig for the binding's Secret (the old one stays). */
export function kubeconfigCurrent(refused: { readonly reason: BindingReason; readonly message: string } | undefined): BindingCondition {
  if (refused) return { type: KUBECONFIG_CURRENT, status: 'False', reason: refused.reason, message: refused.message, severity: 'Warning' };
  return { type: KUBECONFIG_CURRENT, status: 'True', reason: 'KubeconfigCurrent' };
}

/** Access the konnector lacks for a bound API, with the fix of the setup it runs in. */
export function forbidden(missing: readonly string[], r: ResourceRef, controlPlaneMode: boolean): BindingCondition {
  return {
    type: C.InformersSynced,
    status: 'False',
    reason: 'Forbidden',
    message: controlPlaneMode
      ? // Read in the app cluster too, whose administrator made that kubeconfig: names the ClusterRole, not a file.
        `the kubeconfig the platform holds for this cluster (its AppClusterBinding) may not ${missing.join(', ')}; bind its user to ClusterRole ${APP_CLUSTER_ROLE}, which the platform operator provides with the release (it covers every API of the catalog), or ask them`
      : // Read in the app cluster, by whoever binds there: no file of the platform's build, but what they can run.
        `the konnector may not ${missing.join(', ')} in this cluster; grant it access to ${r.resource}.${r.group}: run kubectl bind with the bind backend's URL again (it grants the konnector each API it binds), or ask this cluster's administrator to`,
  };
}

export const deleting = (message: string): BindingCondition => ({
  type: DELETING,
  status: 'False',
  reason: 'Deleting',
  message,
  severity: 'Info',
});

/**
 * This konnector's release against the control plane's, as the backend stamps it on the ClusterBinding: a konnector
 * newer than the control plane is not supported (docs/upgrading.md, "What runs with what"), and the binding says so
 * and is not Ready, though it keeps syncing. Undefined, so no condition, where the ClusterBinding states no release
 * (Klutch's backend, one of ours older than the stamp) or one that is not `vX.Y.Z`: nothing to compare.
 */
export function controlPlaneVersion(
  annotations: Readonly<Record<string, string>> | undefined,
  konnector: string,
): BindingCondition | undefined {
  const stated = annotations?.[BACKEND_VERSION_ANNOTATION];
  const [cp, own] = [parseVersion(stated ?? ''), parseVersion(konnector)];
  if (!cp || !own) return undefined;
  if (compareVersions(own, cp) > 0)
    return {
      type: CONTROL_PLANE_VERSION,
      status: 'False',
      reason: 'KonnectorNewer',
      severity: 'Warning',
      message: `this konnector (${konnector}) is newer than the control plane (${stated}), which is not supported: upgrade the control plane first, or run the konnector of ${stated} (kubectl bind of that release installs it); see ${releaseDoc('docs/upgrading.md', 'what-runs-with-what')}`,
    };
  return { type: CONTROL_PLANE_VERSION, status: 'True', reason: 'Supported', message: `control plane ${stated}, konnector ${konnector}` };
}
