/**
 * What a konnector must be allowed to do in an app cluster, as a list of checks: the one source for the
 * SelfSubjectAccessReviews the konnector (per bound API) and the backend's AppClusterBinding controller (before it
 * deploys a control-plane konnector) ask, and for the minimal ClusterRole synth ships for an AppClusterBinding's app
 * cluster kubeconfig (konnector/deploy/app-cluster-role.ts), so what is checked and what is granted cannot drift apart.
 * Free of client libraries: the backend and konnector bundles and the constructs all import it.
 */

export interface AccessCheck {
  readonly group: string;
  readonly resource: string;
  readonly verb: string;
  readonly subresource?: string;
  readonly name?: string;
}

/** A bound API: its group and plural, and the core resources (secrets, configmaps) its accepted claims copy. */
export interface BoundApi {
  readonly group: string;
  readonly resource: string;
  readonly claimed?: readonly string[];
  /** An instance API: its protected objects cannot be deleted (konnector/deploy/access.ts `deletionProtection`). */
  readonly deletionProtection?: boolean;
}

const CRDS = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions' } as const;

/** `resource.group`, or `resource` for the core group. */
const groupResourceName = (r: { group: string; resource: string }): string => (r.group ? `${r.resource}.${r.group}` : r.resource);

/**
 * The permission that puts its holder under the copies-only admission policy `policy` (konnector/deploy/access.ts
 * `copiesOnly`): a verb of a resource no API serves, so it grants nothing; the policy matches every request whose
 * user holds it (`authorizer…check`), whichever binding, user, group or ServiceAccount it came through — the policy
 * follows the role, not one username. Its holder is also under the policy when it is not the ServiceAccount synth
 * made.
 */
export function copiesOnlyCheck(policy: string): AccessCheck {
  return { group: COPIES_ONLY_GROUP, resource: COPIES_ONLY_RESOURCE, verb: COPIES_ONLY_VERB, name: policy };
}
/** The ClusterRole (and its copies-only policy) an AppClusterBinding's kubeconfig is bound to in its app cluster. */
export const APP_CLUSTER_ROLE = 'klutch-control-plane-konnector';
export const COPIES_ONLY_GROUP = 'klutch-kit.anynines.com';
export const COPIES_ONLY_RESOURCE = 'copies-only-policies';
const COPIES_ONLY_VERB = 'held-by';

/**
 * For one bound API: its objects (read, finalizers, delete on unbind), their status, update and delete of its CRD
 * (by name), and read/write of the resources its claims copy down — with them, when `copiesOnly` names the admission
 * policy that must hold those writes, the permission that puts the identity under it (copiesOnlyCheck).
 */
export function boundApiChecks(api: BoundApi, copiesOnly?: string): AccessCheck[] {
  const crd = { ...CRDS, name: groupResourceName(api) };
  const claimed = [...new Set(api.claimed ?? [])];
  return [
    ...['get', 'list', 'watch', 'patch', 'delete'].map((verb) => ({ group: api.group, resource: api.resource, verb })),
    { group: api.group, resource: api.resource, verb: 'patch', subresource: 'status' },
    ...['update', 'patch', 'delete'].map((verb) => ({ ...crd, verb })),
    ...claimed.flatMap((c) => ['get', 'list', 'watch', 'create', 'update', 'delete'].map((verb) => ({ group: '', resource: c, verb }))),
    ...(claimed.length && copiesOnly ? [copiesOnlyCheck(copiesOnly)] : []),
  ];
}

/**
 * What a konnector in control-plane mode does in the app cluster besides the bound APIs: it watches namespaces (a
 * deleted namespace ends its APIServiceNamespace) and CRDs, creates the bound CRDs, and records warnings as events.
 * Bindings, kubeconfig Secrets and its Lease live on the control plane, so none of those is needed here.
 */
export const CONTROL_PLANE_KONNECTOR_BASE: readonly AccessCheck[] = [
  ...['get', 'list', 'watch'].map((verb) => ({ group: '', resource: 'namespaces', verb })),
  ...['get', 'list', 'watch', 'create'].map((verb) => ({ ...CRDS, verb })),
  ...['create', 'patch'].map((verb) => ({ group: '', resource: 'events', verb })),
];

/** `verb resource.group[/subresource] (name)`: how a missing check is named in conditions. */
export function describeCheck(c: AccessCheck): string {
  return `${c.verb} ${groupResourceName(c)}${c.subresource ? `/${c.subresource}` : ''}${c.name ? ` (${c.name})` : ''}`;
}

/** One RBAC rule per group, resource (with subresource) and name, verbs sorted: what grants exactly `checks`. */
export interface AccessRule {
  readonly group: string;
  /** `resource` or `resource/subresource`. */
  readonly resource: string;
  readonly name?: string;
  readonly verbs: readonly string[];
}

export function rulesFor(checks: readonly AccessCheck[]): AccessRule[] {
  const byKey = new Map<string, { group: string; resource: string; name?: string; verbs: Set<string> }>();
  for (const c of checks) {
    const resource = c.subresource ? `${c.resource}/${c.subresource}` : c.resource;
    const key = JSON.stringify([c.group, resource, c.name ?? '']);
    let r = byKey.get(key);
    if (!r) byKey.set(key, (r = { group: c.group, resource, ...(c.name ? { name: c.name } : {}), verbs: new Set() }));
    r.verbs.add(c.verb);
  }
  return [...byKey.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([, r]) => ({ group: r.group, resource: r.resource, ...(r.name ? { name: r.name } : {}), verbs: [...r.verbs].sort() }));
}

/** What missingAccess needs of a client (client-node's AuthorizationV1Api has it). */
export interface SelfSubjectReviewer {
  createSelfSubjectAccessReview(p: {
    body: { spec: { resourceAttributes: Omit<AccessCheck, 'subresource' | 'name'> & { subresource?: string; name?: string } } };
  }): Promise<{ status?: { allowed: boolean } }>;
}

/** The checks the caller fails, named by describeCheck (empty: allowed everything), asked as SelfSubjectAccessReviews. */
export async function missingAccess(authz: SelfSubjectReviewer, checks: readonly AccessCheck[]): Promise<string[]> {
  const results = await Promise.all(
    checks.map(async (c) => {
      const r = await authz.createSelfSubjectAccessReview({
        body: {
          spec: { resourceAttributes: { group: c.group, resource: c.resource, verb: c.verb, subresource: c.subresource, name: c.name } },
        },
      });
      return r.status?.allowed ? undefined : describeCheck(c);
    }),
  );
  return results.filter((x): x is string => x !== undefined);
}
