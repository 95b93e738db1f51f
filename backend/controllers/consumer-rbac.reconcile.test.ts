import type { V1ClusterRole, V1ClusterRoleBinding, V1Namespace } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { BackendAnnotations } from '../labels';
import type { ConsumerScope } from '../consumer-access';
import type { ExportGrant } from '../provision/claimed';
import { consumerClusterRole, consumerClusterRoleBinding, consumerListWatchClusterRole } from '../provision/rbac';
import { reconcileConsumerRbac, type ConsumerRbacDeps } from './consumer-rbac.reconcile';

const ns = (o: { identity?: boolean; deleting?: boolean; provisioned?: boolean } = {}): V1Namespace => ({
  metadata: {
    name: 'cluster-x',
    uid: 'ns-uid',
    ...(o.identity === false
      ? {}
      : {
          annotations: {
            [Annotations.identity]: 'alice#c1',
            ...(o.provisioned === false ? {} : { [BackendAnnotations.provisioned]: 'true' }),
          },
        }),
    ...(o.deleting ? { deletionTimestamp: new Date() } : {}),
  },
});

const PG: ExportGrant = {
  group: 'anynines.com',
  resource: 'postgresqlinstances',
  kind: 'PostgresqlInstance',
  claims: [{ group: '', resource: 'secrets', version: 'v1' }],
};

function world(
  scope: ConsumerScope,
  n?: V1Namespace,
  o: { grants?: ExportGrant[]; roles?: V1ClusterRole[]; bindings?: V1ClusterRoleBinding[] } = {},
) {
  const writes: string[] = [];
  const d: ConsumerRbacDeps = {
    consumerScope: scope,
    getNamespace: () => n,
    grants: () => o.grants ?? [PG],
    getClusterRole: (name) => o.roles?.find((r) => r.metadata?.name === name),
    getClusterRoleBinding: (name) => o.bindings?.find((b) => b.metadata?.name === name),
    applyClusterRole: async (r) =>
      void writes.push(
        `apply clusterrole ${r.metadata?.name} owner=${r.metadata?.ownerReferences?.[0]?.uid} ${JSON.stringify(r.rules?.map((x) => [x.apiGroups, x.resources, x.verbs]))}`,
      ),
    applyClusterRoleBinding: async (b) => void writes.push(`apply clusterrolebinding ${b.metadata?.name} → ${b.roleRef.name}`),
    deleteClusterRoleBinding: async (name) => void writes.push(`delete clusterrolebinding ${name}`),
  };
  return { d, writes };
}

const CRUD = '["get","list","watch","create","update","patch","delete"]';
const PG_CRUD = `[[["anynines.com"],["postgresqlinstances"],${CRUD}]]`;
const PG_LIST_WATCH = '[[["anynines.com"],["postgresqlinstances"],["list","watch"]]]';
/** The ClusterRoleBinding every verb everywhere: an earlier version's in Cluster scope, and Klutch's. */
const wideBinding = (): V1ClusterRoleBinding => ({
  ...consumerClusterRoleBinding(ns()),
  metadata: { ...consumerClusterRoleBinding(ns()).metadata, name: 'klutch-binder-cluster-x' },
  roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'klutch-binder-cluster-x' },
});
/** What a Cluster-scope consumer holds when all is done. */
const clusterScopeObjects = () => ({
  roles: [consumerClusterRole(ns(), [PG]), consumerListWatchClusterRole(ns(), [PG])],
  bindings: [consumerClusterRoleBinding(ns())],
});

describe('reconcileConsumerRbac', () => {
  it('grants every verb on the exported resources only (never a claimed one), owned by the cluster namespace; Namespaced scope binds nothing cluster-wide', async () => {
    const w = world('Namespaced', ns());
    await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
    expect(w.writes).toEqual([`apply clusterrole klutch-binder-cluster-x owner=ns-uid ${PG_CRUD}`]);
  });

  it('in Cluster scope binds cluster-wide only list and watch (for Klutch’s cluster-wide informer), never the role that writes', async () => {
    const w = world('Cluster', ns());
    await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
    expect(w.writes).toEqual([
      `apply clusterrole klutch-binder-cluster-x owner=ns-uid ${PG_CRUD}`,
      `apply clusterrole klutch-binder-cluster-x:list-watch owner=ns-uid ${PG_LIST_WATCH}`,
      'apply clusterrolebinding klutch-binder-cluster-x:list-watch → klutch-binder-cluster-x:list-watch',
    ]);
  });

  it('writes nothing when the cached ClusterRoles and ClusterRoleBinding already say it (a bind’s own events cost no request)', async () => {
    const role = consumerClusterRole(ns(), [PG]);
    // As the API server hands them back: fields in its own order, an empty resourceNames, labels of others beside ours.
    const cached = (r: V1ClusterRole): V1ClusterRole => ({
      ...r,
      metadata: { ...r.metadata, labels: { ...r.metadata!.labels, other: 'x' } },
      rules: r.rules!.map((x) => ({ verbs: x.verbs, resources: x.resources, apiGroups: x.apiGroups })),
    });
    const all = clusterScopeObjects();
    expect((await run(world('Cluster', ns(), { roles: all.roles.map(cached), bindings: all.bindings }))).writes).toEqual([]);
    expect((await run(world('Namespaced', ns(), { roles: [cached(role)] }))).writes).toEqual([]);
  });

  it('writes again what differs from the cache: rules, owner (a namespace made anew under the same name), the binding', async () => {
    const role = consumerClusterRole(ns(), [PG]);
    const otherOwner = consumerClusterRole({ metadata: { name: 'cluster-x', uid: 'old-uid' } }, [PG]);
    expect((await run(world('Namespaced', ns(), { roles: [{ ...role, rules: [] }] }))).writes).toHaveLength(1);
    expect((await run(world('Namespaced', ns(), { roles: [otherOwner] }))).writes[0]).toContain('owner=ns-uid');
    const all = clusterScopeObjects();
    const binding = all.bindings[0]!;
    const widened = { ...binding, subjects: [...binding.subjects!, { kind: 'Group', name: 'system:authenticated' }] };
    expect((await run(world('Cluster', ns(), { roles: all.roles, bindings: [widened] }))).writes).toEqual([
      'apply clusterrolebinding klutch-binder-cluster-x:list-watch → klutch-binder-cluster-x:list-watch',
    ]);
    // Someone gave the list-watch role every verb: put back to list and watch.
    const [crud, reader] = all.roles as [V1ClusterRole, V1ClusterRole];
    const writing = { ...reader, rules: reader.rules!.map((r) => ({ ...r, verbs: ['*'] })) };
    expect((await run(world('Cluster', ns(), { roles: [crud, writing], bindings: all.bindings }))).writes).toEqual([
      `apply clusterrole klutch-binder-cluster-x:list-watch owner=ns-uid ${PG_LIST_WATCH}`,
    ]);
  });

  it('replaces a list-watch binding re-made to another role (roleRef cannot be patched)', async () => {
    const all = clusterScopeObjects();
    const binding = all.bindings[0]!;
    const toCrud = { ...binding, roleRef: { ...binding.roleRef, name: 'klutch-binder-cluster-x' } };
    expect((await run(world('Cluster', ns(), { roles: all.roles, bindings: [toCrud] }))).writes).toEqual([
      'delete clusterrolebinding klutch-binder-cluster-x:list-watch',
      'apply clusterrolebinding klutch-binder-cluster-x:list-watch → klutch-binder-cluster-x:list-watch',
    ]);
  });

  it('deletes the cluster-wide binding of every verb (an earlier version’s in Cluster scope) in both scopes, after the list-watch one is in place', async () => {
    const all = clusterScopeObjects();
    expect((await run(world('Cluster', ns(), { roles: [all.roles[0]!], bindings: [wideBinding()] }))).writes).toEqual([
      `apply clusterrole klutch-binder-cluster-x:list-watch owner=ns-uid ${PG_LIST_WATCH}`,
      'apply clusterrolebinding klutch-binder-cluster-x:list-watch → klutch-binder-cluster-x:list-watch',
      'delete clusterrolebinding klutch-binder-cluster-x',
    ]);
    expect((await run(world('Namespaced', ns(), { roles: [all.roles[0]!], bindings: [wideBinding()] }))).writes).toEqual([
      'delete clusterrolebinding klutch-binder-cluster-x',
    ]);
  });

  it('a consumer without exports needs no ClusterRole; an emptied one is emptied; a list-watch binding left from Cluster scope goes', async () => {
    expect((await run(world('Namespaced', ns(), { grants: [] }))).writes).toEqual([]);
    const role = consumerClusterRole(ns(), [PG]);
    expect((await run(world('Namespaced', ns(), { grants: [], roles: [role] }))).writes).toEqual([
      'apply clusterrole klutch-binder-cluster-x owner=ns-uid []',
    ]);
    const all = clusterScopeObjects();
    expect((await run(world('Namespaced', ns(), all))).writes).toEqual(['delete clusterrolebinding klutch-binder-cluster-x:list-watch']);
  });

  it.each<[ConsumerScope, string[]]>([
    ['Namespaced', ['apply clusterrole klutch-binder-cluster-x owner=ns-uid []', 'delete clusterrolebinding klutch-binder-cluster-x']],
    [
      'Cluster',
      [
        'apply clusterrole klutch-binder-cluster-x owner=ns-uid []',
        'apply clusterrolebinding klutch-binder-cluster-x:list-watch → klutch-binder-cluster-x:list-watch',
        'delete clusterrolebinding klutch-binder-cluster-x',
      ],
    ],
  ])(
    "in a namespace adopted from Klutch (not provisioned here), %s scope, writes what the caches cannot vouch for: Klutch's unlabelled role and its cluster-wide binding",
    async (scope, writes) => {
      const adopted = ns({ provisioned: false });
      expect((await run(world(scope, adopted, { grants: [] }))).writes).toEqual(writes);
    },
  );

  it.each([
    ['gone', undefined],
    ['being deleted (the owner reference removes the rest)', ns({ deleting: true })],
    ['not a cluster namespace', ns({ identity: false })],
  ])('leaves a namespace %s alone', async (_what, n) => {
    const w = world('Cluster', n);
    await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
    expect(w.writes).toEqual([]);
  });
});

async function run(w: ReturnType<typeof world>) {
  await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
  return w;
}
