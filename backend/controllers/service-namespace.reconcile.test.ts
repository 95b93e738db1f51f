import type { V1Namespace } from '@kubernetes/client-node';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { Annotations, type APIServiceNamespace } from '../../exports/bind-api';
import { BACKUP_TENANT_RECHECK_MS, reconcileServiceNamespace, type ServiceNamespaceDeps } from './service-namespace.reconcile';

const ref = { namespace: 'cluster-x', name: 'app' };
const ctx = { log: pino({ level: 'silent' }) };
const sn = (o: { status?: string; deleting?: boolean } = {}): APIServiceNamespace => ({
  apiVersion: 'klutch.anynines.com/v1alpha1',
  kind: 'APIServiceNamespace',
  metadata: { name: 'app', namespace: 'cluster-x', ...(o.deleting ? { deletionTimestamp: 'now' } : {}) },
  spec: {},
  ...(o.status ? { status: { namespace: o.status } } : {}),
});
const ns = (name: string, owner?: string, deleting = false): V1Namespace => ({
  metadata: {
    name,
    ...(owner ? { annotations: { [Annotations.apiServiceNamespace]: owner } } : {}),
    ...(deleting ? { deletionTimestamp: new Date() } : {}),
  },
});

function world(o: { sn?: APIServiceNamespace; cached?: V1Namespace[]; live?: V1Namespace }) {
  const writes: string[] = [];
  const cached = o.cached ?? [];
  const d: ServiceNamespaceDeps = {
    ours: (ns) => ns.startsWith('cluster-'),
    getServiceNamespace: () => o.sn,
    getNamespace: (name) => cached.find((n) => n.metadata?.name === name),
    namespacesFor: (key) => cached.filter((n) => n.metadata?.annotations?.[Annotations.apiServiceNamespace] === key),
    createNamespace: async (n) => {
      writes.push(
        `create namespace ${n.metadata?.name} for ${n.metadata?.annotations?.[Annotations.apiServiceNamespace]} pss=${n.metadata?.labels?.['pod-security.kubernetes.io/enforce']}`,
      );
      return o.live;
    },
    deleteNamespace: async (name) => void writes.push(`delete namespace ${name}`),
    createRoleBinding: async (rb) =>
      void writes.push(
        `create rolebinding ${rb.metadata?.namespace}/${rb.metadata?.name} → ${rb.roleRef.name} for ${rb.subjects?.[0]?.namespace}/${rb.subjects?.[0]?.name}`,
      ),
    applyClaimQuota: async (n, created) => void writes.push(`quota ${n}${created ? ' (new namespace)' : ''}`),
    writeStatus: async (r, n) => void writes.push(`status ${r.namespace}/${r.name} namespace=${n}`),
  };
  return { d, writes };
}

describe('reconcileServiceNamespace', () => {
  it('makes the provider namespace and its RoleBinding, then reports it in one status write', async () => {
    const w = world({ sn: sn() });
    expect(await reconcileServiceNamespace(w.d, ref, ctx)).toBeUndefined();
    expect(w.writes).toEqual([
      'create namespace cluster-x-app for cluster-x/app pss=baseline',
      'create rolebinding cluster-x-app/klutch-binder → klutch-binder-cluster-x for cluster-x/klutch-binder',
      // Made just now: the quota's first status counts nothing.
      'quota cluster-x-app (new namespace)',
      'status cluster-x/app namespace=cluster-x-app',
    ]);
  });

  it('writes no status that is already there', async () => {
    const w = world({ sn: sn({ status: 'cluster-x-app' }), cached: [ns('cluster-x-app', 'cluster-x/app')] });
    await reconcileServiceNamespace(w.d, ref, ctx);
    expect(w.writes).toEqual([
      'create rolebinding cluster-x-app/klutch-binder → klutch-binder-cluster-x for cluster-x/klutch-binder',
      'quota cluster-x-app',
    ]);
  });

  it('makes the namespace a backup tenant once it is read back, last, and looks at it again every 10 minutes', async () => {
    const tenant = (w: ReturnType<typeof world>): ServiceNamespaceDeps => ({
      ...w.d,
      ensureBackupTenant: async (n) => (w.writes.push(`backup tenant ${n.metadata?.name}`), 'made'),
    });
    const fresh = world({ sn: sn() });
    expect(await reconcileServiceNamespace(tenant(fresh), ref, ctx)).toBeUndefined();
    expect(fresh.writes.some((x) => x.startsWith('backup tenant'))).toBe(false);
    const made = world({ sn: sn({ status: 'cluster-x-app' }), cached: [ns('cluster-x-app', 'cluster-x/app')] });
    expect(await reconcileServiceNamespace(tenant(made), ref, ctx)).toEqual({ requeueAfterMs: BACKUP_TENANT_RECHECK_MS });
    expect(made.writes.at(-1)).toBe('backup tenant cluster-x-app');
    expect(BACKUP_TENANT_RECHECK_MS).toBe(600_000);
  });

  it('leaves a namespace of the same name that is not its own, whether cached or found on create (terminal)', async () => {
    const cached = world({ sn: sn(), cached: [ns('cluster-x-app')] });
    await expect(reconcileServiceNamespace(cached.d, ref, ctx)).rejects.toMatchObject({
      name: 'TerminalError',
      message: expect.stringContaining('belongs to something else'),
    });
    const raced = world({ sn: sn(), live: ns('cluster-x-app', 'cluster-y/app') });
    await expect(reconcileServiceNamespace(raced.d, ref, ctx)).rejects.toMatchObject({ name: 'TerminalError' });
    expect(raced.writes).toEqual(['create namespace cluster-x-app for cluster-x/app pss=baseline']);
  });

  it('waits for a namespace still going from an earlier life', async () => {
    const w = world({ sn: sn(), cached: [ns('cluster-x-app', 'cluster-x/app', true)] });
    expect(await reconcileServiceNamespace(w.d, ref, ctx)).toEqual({ requeueAfterMs: 1000 });
    expect(w.writes).toEqual([]);
  });

  it('refuses a provider namespace name longer than 63 characters (terminal)', async () => {
    const long = { namespace: 'cluster-x', name: 'a'.repeat(60) };
    const w = world({ sn: { ...sn(), metadata: { name: long.name, namespace: 'cluster-x' } } });
    await expect(reconcileServiceNamespace(w.d, long, ctx)).rejects.toMatchObject({
      name: 'TerminalError',
      message: expect.stringContaining('longer than 63'),
    });
  });

  it('deletes the namespaces made for a removed APIServiceNamespace, never a namespace of the same name that is not', async () => {
    const w = world({ cached: [ns('cluster-x-app', 'cluster-x/app'), ns('cluster-x-app2', 'cluster-x/app2'), ns('other')] });
    await reconcileServiceNamespace(w.d, ref, ctx);
    expect(w.writes).toEqual(['delete namespace cluster-x-app']);
  });

  it("leaves another backend's APIServiceNamespaces alone (another --namespace-prefix): neither made nor, when gone, deleted", async () => {
    const other = { namespace: 'team-b-x', name: 'app' };
    const made = world({ sn: { ...sn(), metadata: { name: 'app', namespace: 'team-b-x' } } });
    expect(await reconcileServiceNamespace(made.d, other, ctx)).toBeUndefined();
    const gone = world({ cached: [ns('team-b-x-app', 'team-b-x/app')] });
    expect(await reconcileServiceNamespace(gone.d, other, ctx)).toBeUndefined();
    expect([...made.writes, ...gone.writes]).toEqual([]);
  });
});
