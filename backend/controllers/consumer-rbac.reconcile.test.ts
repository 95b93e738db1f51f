import type { V1Namespace } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import type { ConsumerScope } from '../options';
import { reconcileConsumerRbac, type ConsumerRbacDeps } from './consumer-rbac.reconcile';

const ns = (o: { identity?: boolean; deleting?: boolean } = {}): V1Namespace => ({
  metadata: {
    name: 'cluster-x',
    uid: 'ns-uid',
    ...(o.identity === false ? {} : { annotations: { [Annotations.identity]: 'alice#c1' } }),
    ...(o.deleting ? { deletionTimestamp: new Date() } : {}),
  },
});

function world(scope: ConsumerScope, n?: V1Namespace) {
  const writes: string[] = [];
  const d: ConsumerRbacDeps = {
    consumerScope: scope,
    getNamespace: () => n,
    grants: () => [
      {
        group: 'anynines.com',
        resource: 'postgresqlinstances',
        kind: 'PostgresqlInstance',
        claims: [{ group: '', resource: 'secrets', version: 'v1' }],
      },
    ],
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
    expect(w.writes).toEqual([
      'apply clusterrole klutch-binder-cluster-x owner=ns-uid [[["anynines.com"],["postgresqlinstances"]]]',
      'delete clusterrolebinding klutch-binder-cluster-x',
    ]);
  });

  it('binds the ClusterRole cluster-wide in Cluster scope', async () => {
    const w = world('Cluster', ns());
    await reconcileConsumerRbac(w.d, { name: 'cluster-x' });
    expect(w.writes.at(-1)).toBe('apply clusterrolebinding klutch-binder-cluster-x → klutch-binder-cluster-x');
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
