import type { V1Namespace, V1Role, V1RoleBinding } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { Annotations } from '../../exports/bind-api';
import { claimedRole, claimedRoleBinding } from '../provision/rbac';
import type { ExportGrant, PartialObjectMetadata } from '../provision/claimed';
import { reconcileClaimedAccess, RETRY_UNSYNCED_MS, type ClaimedAccessDeps } from './claimed-access.reconcile';

const ref = { name: 'cluster-x-app' };
const provider = (o: { owner?: string; deleting?: boolean } = {}): V1Namespace => ({
  metadata: {
    name: 'cluster-x-app',
    labels: { 'klutch-kit.anynines.com/cluster-namespace': 'cluster-x' },
    annotations: { [Annotations.apiServiceNamespace]: o.owner ?? 'cluster-x/app' },
    ...(o.deleting ? { deletionTimestamp: new Date() } : {}),
  },
});
const grants: ExportGrant[] = [
  {
    group: 'anynines.com',
    resource: 'postgresqlinstances',
    kind: 'PostgresqlInstance',
    claims: [{ group: '', resource: 'secrets', version: 'v1' } as ExportGrant['claims'][number]],
  },
];
const objects: Record<string, PartialObjectMetadata[]> = {
  'postgresqlinstances.anynines.com': [{ metadata: { name: 'db' } }],
  'secrets.': [{ metadata: { name: 'db-creds' } }, { metadata: { name: 'unrelated' } }],
};
const secretRule = { apiGroups: [''], resources: ['secrets'], resourceNames: ['db-creds'], verbs: ['get', 'list', 'watch'] };

function world(o: { ns?: V1Namespace; synced?: boolean; role?: V1Role; binding?: V1RoleBinding }) {
  const writes: string[] = [];
  const d: ClaimedAccessDeps = {
    access: 'Object',
    getNamespace: () => o.ns,
    grants: () => grants,
    storageVersion: () => 'v1',
    objectsSynced: () => o.synced ?? true,
    objects: (group, resource) => objects[`${resource}.${group}`] ?? [],
    getRole: () => o.role,
    getRoleBinding: () => o.binding,
    applyRole: async (r) => void writes.push(`apply role ${r.metadata?.namespace}/${r.metadata?.name} ${JSON.stringify(r.rules?.[0])}`),
    applyRoleBinding: async (b) =>
      void writes.push(
        `apply rolebinding ${b.metadata?.namespace}/${b.metadata?.name} for ${b.subjects?.[0]?.namespace}/${b.subjects?.[0]?.name}`,
      ),
  };
  return { d, writes };
}

describe('reconcileClaimedAccess', () => {
  it('lets the consumer read exactly the claimed objects that belong to its objects (the -creds Secret), then binds it', async () => {
    const w = world({ ns: provider() });
    await reconcileClaimedAccess(w.d, ref);
    expect(w.writes).toEqual([
      `apply role cluster-x-app/klutch-binder-claimed ${JSON.stringify(secretRule)}`,
      'apply rolebinding cluster-x-app/klutch-binder-claimed for cluster-x/klutch-binder',
    ]);
  });

  it('applies nothing the cache already shows', async () => {
    const rules = [
      secretRule,
      {
        apiGroups: ['rbac.authorization.k8s.io'],
        resources: ['roles'],
        resourceNames: ['klutch-binder-claimed'],
        verbs: ['get', 'list', 'watch'],
      },
    ];
    const w = world({
      ns: provider(),
      role: claimedRole('cluster-x-app', 'cluster-x', rules),
      binding: claimedRoleBinding('cluster-x-app', 'cluster-x'),
    });
    await reconcileClaimedAccess(w.d, ref);
    expect(w.writes).toEqual([]);
  });

  it('waits until the informers it reads have listed (a missing object may not be there yet)', async () => {
    const w = world({ ns: provider(), synced: false });
    expect(await reconcileClaimedAccess(w.d, ref)).toEqual({ requeueAfterMs: RETRY_UNSYNCED_MS });
    expect(w.writes).toEqual([]);
  });

  it.each([
    ['gone', undefined],
    ['being deleted', provider({ deleting: true })],
    ['made for another cluster namespace than its label says', provider({ owner: 'cluster-y/app' })],
  ])('leaves a provider namespace %s alone', async (_what, ns) => {
    const w = world({ ns });
    await reconcileClaimedAccess(w.d, ref);
    expect(w.writes).toEqual([]);
  });
});
