import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { BIND_API_VERSION, Kinds, reduceProviderKubeconfig, type ClusterBinding } from '../../exports/bind-api';
import { reconcileHeartbeat, type ConsumerKubeconfig, type HeartbeatDeps } from './heartbeat.reconcile';
import { reconcileNamespaceDeletion } from './namespacedeletion.reconcile';

const kubeconfig = (token: string, o: { server?: string; namespace?: string; user?: Record<string, unknown> } = {}) =>
  stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'default', cluster: { server: o.server ?? 'https://p' } }],
    users: [{ name: 'default', user: { token, ...o.user } }],
    contexts: [{ name: 'default', context: { cluster: 'default', user: 'default', namespace: o.namespace ?? 'cluster-x' } }],
    'current-context': 'default',
  });
const cb = (status?: ClusterBinding['status']): ClusterBinding => ({
  apiVersion: BIND_API_VERSION,
  kind: Kinds.ClusterBinding,
  metadata: { name: 'cluster', namespace: 'cluster-x' },
  spec: { kubeconfigSecretRef: { name: 'kubeconfig', key: 'kubeconfig' }, providerPrettyName: 'p' },
  ...(status ? { status } : {}),
});

const canonical = (text: string) => (reduceProviderKubeconfig(text, 'x') as { yaml: string }).yaml;

function world(o: { binding?: ClusterBinding; provider?: string; consumer?: string; now?: string }) {
  const writes: string[] = [];
  const target: ConsumerKubeconfig = { namespace: 'klutch-bind', name: 'kubeconfig-a', key: 'kubeconfig', kubeconfig: o.consumer };
  const d: HeartbeatDeps = {
    providerNamespace: 'cluster-x',
    intervalMs: 150_000,
    version: 'v0.1.0',
    now: () => new Date(o.now ?? '2025-01-01T00:10:00Z'),
    endpoint: { server: 'https://p' },
    getClusterBinding: () => o.binding,
    readProviderSecret: async () =>
      o.provider ? ({ data: { kubeconfig: Buffer.from(o.provider).toString('base64') } } as V1Secret) : undefined,
    consumerKubeconfigs: () => [target],
    writeConsumerKubeconfig: async (t, k) => void writes.push(`copy to ${t.namespace}/${t.name}: ${k === canonical(o.provider!)}`),
    writeHeartbeat: async (s) => void writes.push(`heartbeat ${JSON.stringify(s)}`),
  };
  return { d, writes };
}

describe('reconcileHeartbeat', () => {
  it('writes time, interval (twice the period, as a Go duration) and version', async () => {
    const w = world({ binding: cb(), provider: kubeconfig('t1'), consumer: canonical(kubeconfig('t1')) });
    expect(await reconcileHeartbeat(w.d)).toEqual({ requeueAfterMs: 150_000, refused: [] });
    expect(w.writes).toEqual([
      'heartbeat {"lastHeartbeatTime":"2025-01-01T00:10:00Z","heartbeatInterval":"5m0s","konnectorVersion":"v0.1.0"}',
    ]);
  });

  it('does not beat again before the period is over', async () => {
    const w = world({
      binding: cb({ lastHeartbeatTime: '2025-01-01T00:09:00Z', heartbeatInterval: '5m0s', konnectorVersion: 'v0.1.0' }),
      provider: kubeconfig('t1'),
      consumer: canonical(kubeconfig('t1')),
    });
    expect(await reconcileHeartbeat(w.d)).toEqual({ requeueAfterMs: 90_000, refused: [] });
    expect(w.writes).toEqual([]);
  });

  const fresh = { lastHeartbeatTime: '2025-01-01T00:09:59Z', heartbeatInterval: '5m0s', konnectorVersion: 'v0.1.0' };

  it('copies a rotated provider kubeconfig into the app cluster as the canonical reduced YAML, and never a broken one', async () => {
    const rotated = world({ binding: cb(fresh), provider: kubeconfig('t2'), consumer: kubeconfig('t1') });
    expect((await reconcileHeartbeat(rotated.d)).refused).toEqual([]);
    expect(rotated.writes).toEqual(['copy to klutch-bind/kubeconfig-a: true']);
    const same = world({ binding: cb(fresh), provider: kubeconfig('t2'), consumer: canonical(kubeconfig('t2')) });
    await reconcileHeartbeat(same.d);
    expect(same.writes).toEqual([]);
    const broken = world({ binding: cb(fresh), provider: 'not: [a kubeconfig', consumer: kubeconfig('t1') });
    expect((await reconcileHeartbeat(broken.d)).refused).toMatchObject([{ reason: 'KubeconfigInvalid' }]);
    expect(broken.writes).toEqual([]);
  });

  it.each([
    ['an exec plugin', kubeconfig('t2', { user: { exec: { command: 'sh' } } }), 'KubeconfigUnsafe', 'users[default].user.exec'],
    ['a tokenFile', kubeconfig('t2', { user: { tokenFile: '/var/run/secrets/token' } }), 'KubeconfigUnsafe', 'tokenFile'],
    ['another server', kubeconfig('t2', { server: 'https://evil' }), 'KubeconfigMoved', 'https://evil'],
    ['another cluster namespace', kubeconfig('t2', { namespace: 'cluster-y' }), 'KubeconfigMoved', 'namespace "cluster-y"'],
  ])('refuses a provider kubeconfig with %s and keeps the old one', async (_what, provider, reason, text) => {
    const w = world({ binding: cb(fresh), provider, consumer: kubeconfig('t1') });
    const r = await reconcileHeartbeat(w.d);
    expect(w.writes).toEqual([]);
    expect(r.refused).toHaveLength(1);
    expect(r.refused[0]).toMatchObject({ reason, target: { name: 'kubeconfig-a' } });
    expect(r.refused[0]!.message).toContain("the provider's Secret cluster-x/kubeconfig");
    expect(r.refused[0]!.message).toContain(text);
  });

  it('names the missing ClusterBinding and the fix', async () => {
    await expect(reconcileHeartbeat(world({}).d)).rejects.toThrow(
      /no ClusterBinding "cluster" in provider namespace cluster-x.*kubectl bind again/,
    );
  });
});

describe('reconcileNamespaceDeletion', () => {
  const sn = { apiVersion: BIND_API_VERSION, kind: Kinds.APIServiceNamespace, metadata: { name: 'app', uid: 'u' }, spec: {} } as const;
  it.each([
    [true, []],
    [false, ['delete app uid=u']],
  ])('with the app namespace existing=%s deletes %j', async (exists, want) => {
    const writes: string[] = [];
    await reconcileNamespaceDeletion(
      {
        getServiceNamespace: () => sn as never,
        consumerNamespaceExists: async () => exists,
        deleteServiceNamespace: async (n, uid) => void writes.push(`delete ${n} uid=${uid}`),
      },
      'app',
    );
    expect(writes).toEqual(want);
  });
});
