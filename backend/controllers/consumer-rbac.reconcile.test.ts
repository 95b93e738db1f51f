import type { V1ClusterRole, V1ClusterRoleBinding, V1Namespace } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { BackendAnnotations } from '../labels';
import type { ConsumerScope } from '../options';
import type { ExportGrant } from '../provision/claimed';
import { consumerClusterRole, consumerClusterRoleBinding } from '../provision/rbac';
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
  o: { grants?: ExportGrant[]; role?: V1ClusterRole; binding?: V1ClusterRoleBinding } = {},
) {
  const writes: string[] = [];
  const d: ConsumerRbacDeps = {
    consumerScope: scope,
    getNamespace: () => n,
    grants: () => o.grants ?? [PG],
    getClusterRole: (name) => (o.role?.metadata?.name === name ? o.role : undefined),
    getClusterRoleBinding: (name) => (o.binding?.metadata?.name === name ? o.binding : undefined),
    applyClusterRole: async (r) =>
      void writes.push(
        `apply clusterrole ${r.metadata?.name} owner=${r.metadata?.ownerReferences?.[0]?.uid} ${JSON.stringify(r.rules?.map((x) => [x.apiGroups, x.resources]))}`,
      ),
    applyClusterRoleBinding: async (b) => void writes.push(`apply clusterrolebinding ${b.metadata?.name} → ${b.roleRef.name}`),
    deleteClusterRoleBinding: async (name) => void writes.push(`delete clusterrolebinding ${name}`),
  };
  return { d, writes };
}

describe('reconcileConsumerRbac', () => {
  it('grants the exported resources only (never a claimed one), owned by the cluster namespace; Namespaced scope binds nothing cluster-wide', async () => {
    const w = world('Namespaced', ns());
    await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
    expect(w.writes).toEqual(['apply clusterrole klutch-binder-cluster-x owner=ns-uid [[["anynines.com"],["postgresqlinstances"]]]']);
  });

  it('binds the ClusterRole cluster-wide in Cluster scope', async () => {
    const w = world('Cluster', ns());
    await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
    expect(w.writes.at(-1)).toBe('apply clusterrolebinding klutch-binder-cluster-x → klutch-binder-cluster-x');
  });

  it('writes nothing when the cached ClusterRole and ClusterRoleBinding already say it (a bind’s own events cost no request)', async () => {
    const role = consumerClusterRole(ns(), [PG]);
    const binding = consumerClusterRoleBinding(ns());
    // As the API server hands them back: fields in its own order, an empty resourceNames, labels of others beside ours.
    const cached: V1ClusterRole = {
      ...role,
      metadata: { ...role.metadata, labels: { ...role.metadata!.labels, other: 'x' } },
      rules: role.rules!.map((r) => ({ verbs: r.verbs, resources: r.resources, apiGroups: r.apiGroups })),
    };
    expect((await run(world('Cluster', ns(), { role: cached, binding }))).writes).toEqual([]);
    expect((await run(world('Namespaced', ns(), { role: cached }))).writes).toEqual([]);
  });

  it('writes again what differs from the cache: rules, owner (a namespace made anew under the same name), the binding', async () => {
    const role = consumerClusterRole(ns(), [PG]);
    const otherOwner = consumerClusterRole({ metadata: { name: 'cluster-x', uid: 'old-uid' } }, [PG]);
    expect((await run(world('Namespaced', ns(), { role: { ...role, rules: [] } }))).writes).toHaveLength(1);
    expect((await run(world('Namespaced', ns(), { role: otherOwner }))).writes[0]).toContain('owner=ns-uid');
    const binding = consumerClusterRoleBinding(ns());
    const widened = { ...binding, subjects: [...binding.subjects!, { kind: 'Group', name: 'system:authenticated' }] };
    expect((await run(world('Cluster', ns(), { role, binding: widened }))).writes).toEqual([
      'apply clusterrolebinding klutch-binder-cluster-x → klutch-binder-cluster-x',
    ]);
  });

  it('a consumer without exports needs no ClusterRole; an emptied one is emptied; a cluster-wide binding left from Cluster scope goes', async () => {
    expect((await run(world('Namespaced', ns(), { grants: [] }))).writes).toEqual([]);
    const role = consumerClusterRole(ns(), [PG]);
    expect((await run(world('Namespaced', ns(), { grants: [], role }))).writes).toEqual([
      'apply clusterrole klutch-binder-cluster-x owner=ns-uid []',
    ]);
    const binding = consumerClusterRoleBinding(ns());
    expect((await run(world('Namespaced', ns(), { role, binding }))).writes).toEqual(['delete clusterrolebinding klutch-binder-cluster-x']);
  });

  it("in a namespace adopted from Klutch (not provisioned here) writes what the caches cannot vouch for: Klutch's unlabelled role and binding", async () => {
    const adopted = ns({ provisioned: false });
    expect((await run(world('Namespaced', adopted, { grants: [] }))).writes).toEqual([
      'apply clusterrole klutch-binder-cluster-x owner=ns-uid []',
      'delete clusterrolebinding klutch-binder-cluster-x',
    ]);
  });

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
