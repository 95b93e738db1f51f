/**
 * What the konnector must be allowed to do in the app cluster to serve one bound API, checked with
 * SelfSubjectAccessReviews before it starts watching — so a missing grant shows up as a condition on the binding
 * that says what to apply, instead of a watch that fails quietly in a log. The checks themselves are shared with the
 * backend's AppClusterBinding controller and the app-cluster ClusterRole (lib/app-cluster-access.ts).
 */
import { boundApiChecks, type AccessCheck } from '../../lib/app-cluster-access';
import type { ResourceRef } from '../kube/objects';

export { type AccessCheck } from '../../lib/app-cluster-access';

/** The checks for a bound resource, its CRD and the resources its accepted claims copy. */
export function accessNeeded(r: ResourceRef, claimed: readonly string[]): AccessCheck[] {
  return boundApiChecks({ group: r.group, resource: r.resource, claimed });
}
