import type { V1Secret } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { BIND_API_VERSION, Kinds, reduceProviderKubeconfig, type ClusterBinding } from '../../exports/bind-api';
import { reconcileHeartbeat, type ConsumerKubeconfig, type HeartbeatDeps } from './heartbeat.reconcile';

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

function world(o: { binding?: ClusterBinding; provider?: string | Error; consumer?: string; now?: string; random?: number }) {
  const writes: string[] = [];
  const target: ConsumerKubeconfig = { namespace: 'klutch-bind', name: 'kubeconfig-a', key: 'kubeconfig', kubeconfig: o.consumer };
  const d: HeartbeatDeps = {
    providerNamespace: 'cluster-x',
    intervalMs: 150_000,
    random: () => o.random ?? 0,
    version: 'v0.1.0',
    now: () => new Date(o.now ?? '2025-01-01T00:10:00Z'),
    endpoint: { server: 'https://p' },
    getClusterBinding: () => o.binding,
    readProviderSecret: async () => {
      if (o.provider instanceof Error) throw o.provider;
      return o.provider ? ({ data: { kubeconfig: Buffer.from(o.provider).toString('base64') } } as V1Secret) : undefined;
    },
    consumerKubeconfigs: () => [target],
    writeConsumerKubeconfig: async (t, k) => void writes.push(`copy to ${t.namespace}/${t.name}: ${k === canonical(o.provider as string)}`),
    writeHeartbeat: async (s) => void writes.push(`heartbeat ${JSON.stringify(s)}`),
  };
  return { d, writes };
}

describe('reconcileHeartbeat', () => {
  it('writes time, interval (twice the period, as a Go duration) and version', async () => {
    const w = world({ binding: cb(), provider: kubeconfig('t1'), consumer: canonical(kubeconfig('t1')) });
    expect(await reconcileHeartbeat(w.d)).toEqual({ requeueAfterMs: 150_000, refused: [], beatAt: new Date('2025-01-01T00:10:00Z') });
    expect(w.writes).toEqual([
      'heartbeat {"lastHeartbeatTime":"2025-01-01T00:10:00Z","heartbeatInterval":"5m0s","konnectorVersion":"v0.1.0"}',
    ]);
  });

  it('beats again up to a tenth of the period late, at random, so that konnectors started together drift apart', async () => {
    const late = world({ binding: cb(), provider: kubeconfig('t1'), consumer: canonical(kubeconfig('t1')), random: 0.9999 });
    expect((await reconcileHeartbeat(late.d)).requeueAfterMs).toBe(164_998);
    // Still well within what the backend waits (the interval it is told: twice the period).
    expect(late.writes[0]).toContain('"heartbeatInterval":"5m0s"');
  });

  it('does not beat again before the period is over', async () => {
    const w = world({
      binding: cb({ lastHeartbeatTime: '2025-01-01T00:09:00Z', heartbeatInterval: '5m0s', konnectorVersion: 'v0.1.0' }),
      provider: kubeconfig('t1'),
      consumer: canonical(kubeconfig('t1')),
    });
    // The last beat is the ClusterBinding's: a restarted konnector need not wait a whole interval to say so.
    expect(await reconcileHeartbeat(w.d)).toEqual({ requeueAfterMs: 90_000, refused: [], beatAt: new Date('2025-01-01T00:09:00Z') });
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

  it('copies a rotation before the one status write, and still beats when the provider Secret cannot be read', async () => {
    const rotated = world({ binding: cb(), provider: kubeconfig('t2'), consumer: kubeconfig('t1') });
    await reconcileHeartbeat(rotated.d);
    expect(rotated.writes.map((w) => w.split(' ')[0])).toEqual(['copy', 'heartbeat']);
    const denied = world({ binding: cb(), provider: Object.assign(new Error('secrets "kubeconfig" is forbidden'), { code: 403 }) });
    const r = await reconcileHeartbeat(denied.d);
    expect(denied.writes).toHaveLength(1);
    expect(denied.writes[0]).toMatch(/^heartbeat /);
    expect(r).toMatchObject({ beatAt: new Date('2025-01-01T00:10:00Z'), refused: [] });
    expect(r.error?.message).toBe('secrets "kubeconfig" is forbidden');
  });

  it('names the missing ClusterBinding and the fix', async () => {
    await expect(reconcileHeartbeat(world({}).d)).rejects.toThrow(
      /no ClusterBinding "cluster" in provider namespace cluster-x.*kubectl bind again/,
    );
  });
});
