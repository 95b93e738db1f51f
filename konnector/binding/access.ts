/**
 * What the konnector must be allowed to do in the app cluster to serve one bound API, checked with
 * SelfSubjectAccessReviews before it starts watching — so a missing grant shows up as a condition on the binding
 * that says what to apply, instead of a watch that fails quietly in a log.
 */
import type { AuthorizationV1Api } from '@kubernetes/client-node';
import { groupResource, type ResourceRef } from '../kube/objects';

export interface AccessCheck {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  readonly subresource?: string;
  readonly name?: string;
}

/** The checks for a bound resource, its CRD and the resources its accepted claims copy. */
export function accessNeeded(r: ResourceRef, claimed: readonly string[]): AccessCheck[] {
  const crd = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', name: groupResource(r) };
  return [
    ...['get', 'list', 'watch', 'patch', 'delete'].map((verb) => ({ group: r.group, resource: r.resource, verb })),
    { group: r.group, resource: r.resource, verb: 'patch', subresource: 'status' },
    ...['update', 'patch', 'delete'].map((verb) => ({ ...crd, verb })),
    ...claimed.flatMap((c) => ['get', 'list', 'watch', 'create', 'update', 'delete'].map((verb) => ({ group: '', resource: c, verb }))),
  ];
}

/** The checks the konnector fails, as `verb resource[/subresource]` strings (empty: allowed everything). */
export async function missingAccess(authz: AuthorizationV1Api, checks: readonly AccessCheck[]): Promise<string[]> {
  const results = await Promise.all(
    checks.map(async (c) => {
      const r = await authz.createSelfSubjectAccessReview({
        body: {
          spec: { resourceAttributes: { group: c.group, resource: c.resource, verb: c.verb, subresource: c.subresource, name: c.name } },
        },
      });
      const what = `${c.verb} ${groupResource(c)}${c.subresource ? `/${c.subresource}` : ''}${c.name ? ` (${c.name})` : ''}`;
      return r.status?.allowed ? undefined : what;
    }),
  );
  return results.filter((x): x is string => x !== undefined);
}
