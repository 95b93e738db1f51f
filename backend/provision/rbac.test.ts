import { describe, expect, it } from 'vitest';
import { binderClusterRole, consumerClusterRole, consumerClusterRoleBinding, consumerListWatchClusterRole } from './rbac';

describe('ClusterRole klutch-binder', () => {
  it('never lets a consumer write the spec of its exports or ClusterBinding, only their status', () => {
    const rules = binderClusterRole().rules!;
    const verbsOn = (resource: string) => rules.filter((r) => r.resources?.includes(resource)).flatMap((r) => r.verbs);
    expect(verbsOn('apiserviceexports').sort()).toEqual(['get', 'list', 'watch']);
    expect(verbsOn('clusterbindings').sort()).toEqual(['get', 'list', 'watch']);
    expect(verbsOn('apiserviceexports/status').sort()).toEqual(['get', 'patch', 'update']);
    expect(verbsOn('clusterbindings/status').sort()).toEqual(['get', 'patch', 'update']);
  });

  it("reads only the cluster namespace's kubeconfig Secret, by name; every Secret there for Klutch's konnector", () => {
    const secrets = (access?: 'Object' | 'Namespace') => binderClusterRole(access).rules!.filter((r) => r.resources?.includes('secrets'));
    expect(secrets()).toEqual([{ apiGroups: [''], resources: ['secrets'], resourceNames: ['kubeconfig'], verbs: ['get'] }]);
    expect(secrets('Namespace')).toEqual([{ apiGroups: [''], resources: ['secrets'], verbs: ['get', 'watch', 'list'] }]);
  });
});

describe('ClusterRole klutch-binder-<cluster ns>', () => {
  it('holds the exported resources only, once each', () => {
    const ns = { metadata: { name: 'cluster-x', uid: 'u' } };
    const role = consumerClusterRole(ns, [
      { group: 'anynines.com', resource: 'servicebindings' },
      { group: 'anynines.com', resource: 'postgresqlinstances' },
      { group: 'anynines.com', resource: 'servicebindings' },
    ]);
    expect(role.rules!.map((r) => `${r.resources![0]}.${r.apiGroups![0]}`)).toEqual([
      'postgresqlinstances.anynines.com',
      'servicebindings.anynines.com',
    ]);
  });
});

describe('ClusterRole and ClusterRoleBinding klutch-binder-<cluster ns>:list-watch (consumer scope Cluster)', () => {
  const ns = { metadata: { name: 'cluster-x', uid: 'u' } };
  it('reads the exported resources in every namespace (list, watch) and writes nothing', () => {
    const role = consumerListWatchClusterRole(ns, [{ group: 'anynines.com', resource: 'postgresqlinstances' }]);
    expect(role.rules).toEqual([{ apiGroups: ['anynines.com'], resources: ['postgresqlinstances'], verbs: ['list', 'watch'] }]);
  });

  it('binds the list-watch role, never the role that writes, under a name no cluster namespace can take', () => {
    const binding = consumerClusterRoleBinding(ns);
    expect(binding.roleRef.name).toBe(consumerListWatchClusterRole(ns, []).metadata!.name);
    expect(binding.roleRef.name).not.toBe(consumerClusterRole(ns, []).metadata!.name);
    // A namespace name has no ':', so no klutch-binder-<namespace> is ever this one.
    expect(binding.metadata!.name).toBe('klutch-binder-cluster-x:list-watch');
  });
});
