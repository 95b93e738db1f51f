/**
 * The konnector's source of claimed Secrets on the provider (konnector/provider/export/claims/claimed-source.ts)
 * against a real API server, as an identity that may not list Secrets in the namespace and so reads only the ones the
 * Role `CLAIMED_ROLE` names. A name the konnector cannot read yet (the provider's RBAC lags its Role) must not hold
 * the source unsynced once the Role stops naming it: the binding's sync, and a binding's deletion, wait on it.
 */
import { AuthorizationV1Api } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { CLAIMED_ROLE } from '../../exports/bind-api';
import { claimedSource } from '../../konnector/provider/export/claims/claimed-source';
import { admin, cluster, testNamespace } from '../support/cluster';
import { eventually, kubeFor } from '../../harness/cluster/kube';
import { sleep } from '../../lib/abort';

const USER = 'developer'; // a static-token user RBAC grants nothing outside what a test binds

describe('claimed Secrets read by name', () => {
  it('is synced once the Role no longer names a Secret the konnector could never read', async () => {
    const kube = await admin();
    const ns = await testNamespace(kube, 'claimed');
    const names = (...n: string[]) => [{ apiGroups: [''], resources: ['secrets'], resourceNames: n, verbs: ['get', 'list', 'watch'] }];
    for (const name of ['a-creds', 'b-creds'])
      await kube.core.createNamespacedSecret({ namespace: ns, body: { metadata: { name }, stringData: { password: name } } });
    // The konnector may read the Role and a-creds; b-creds it may not (yet): the provider's RBAC lags its Role.
    const grant = async (name: string, rules: object[]) => {
      await kube.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name }, rules } as never });
      await kube.rbac.createNamespacedRoleBinding({
        namespace: ns,
        body: {
          metadata: { name },
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
          subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name: USER }],
        },
      });
    };
    await grant('konnector-reads', [
      { apiGroups: ['rbac.authorization.k8s.io'], resources: ['roles'], resourceNames: [CLAIMED_ROLE], verbs: ['get', 'list', 'watch'] },
      ...names('a-creds'),
    ]);
    await kube.rbac.createNamespacedRole({ namespace: ns, body: { metadata: { name: CLAIMED_ROLE }, rules: names('a-creds', 'b-creds') } });

    const konnector = kubeFor(await cluster(), USER);
    const source = claimedSource({
      kc: konnector.config,
      authz: konnector.config.makeApiClient(AuthorizationV1Api),
      namespace: ns,
      resource: 'secrets',
      retryMs: 200,
    });
    try {
      await source.start();
      await eventually('a-creds in the cache', async () => source.get('a-creds', ns));
      await sleep(1_000);
      expect(source.hasSynced()).toBe(false); // b-creds is named and refused: not everything shared is listed
      expect(source.lastError()).toMatch(/b-creds/);

      await kube.rbac.replaceNamespacedRole({
        name: CLAIMED_ROLE,
        namespace: ns,
        body: { metadata: { name: CLAIMED_ROLE }, rules: names('a-creds') },
      });
      await eventually('the source synced', async () => source.hasSynced() || undefined, 10_000);
      await source.synced;
      expect(source.list(ns).map((s) => s.metadata?.name)).toEqual(['a-creds']);
    } finally {
      await source.stop();
    }
  });
});
