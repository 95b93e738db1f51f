import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import { BIND_API_VERSION, Kinds, type APIServiceNamespace } from '../../exports/bind-api';
import { reconcileNamespaceDeletion, type NamespaceDeletionDeps } from './namespacedeletion.reconcile';

const sn = (o: { deleting?: boolean } = {}): APIServiceNamespace => ({
  apiVersion: BIND_API_VERSION,
  kind: Kinds.APIServiceNamespace,
  metadata: { name: 'app', namespace: 'cluster-x', uid: 'u', ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}) },
  spec: {},
});

function world(o: { serviceNamespace?: APIServiceNamespace; exists: boolean | Error }) {
  const calls: string[] = [];
  const d: NamespaceDeletionDeps = {
    getServiceNamespace: (n) => (n === o.serviceNamespace?.metadata.name ? o.serviceNamespace : undefined),
    consumerNamespaceExists: async (n) => {
      calls.push(`exists ${n}`);
      if (o.exists instanceof Error) throw o.exists;
      return o.exists;
    },
    deleteServiceNamespace: async (n, uid) => void calls.push(`delete ${n} uid=${uid}`),
  };
  return { d, calls };
}

const ctx = { log: pino({ level: 'silent' }) };

describe('reconcileNamespaceDeletion', () => {
  it.each([
    ['the app namespace exists', { serviceNamespace: sn(), exists: true }, ['exists app']],
    ['the app namespace is gone', { serviceNamespace: sn(), exists: false }, ['exists app', 'delete app uid=u']],
    ['no APIServiceNamespace of that name', { exists: false }, []],
    ['the APIServiceNamespace is being deleted already', { serviceNamespace: sn({ deleting: true }), exists: false }, []],
  ])('%s: %j', async (_what, o, want) => {
    const w = world(o);
    expect(await reconcileNamespaceDeletion(w.d, { name: 'app' }, ctx)).toBeUndefined();
    expect(w.calls).toEqual(want);
  });

  it('deletes nothing while the app cluster cannot say whether the namespace is gone', async () => {
    const w = world({ serviceNamespace: sn(), exists: new Error('connection refused') });
    await expect(reconcileNamespaceDeletion(w.d, { name: 'app' }, ctx)).rejects.toThrow('connection refused');
    expect(w.calls).toEqual(['exists app']);
  });
});
