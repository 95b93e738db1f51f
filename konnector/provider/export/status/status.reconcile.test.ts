import { describe, expect, it } from 'vitest';
import { Annotations } from '../../../../exports/bind-api';
import type { Obj } from '../../../kube/objects';
import { reconcileStatus, type StatusDeps } from './status.reconcile';
import { bindingHold, type Hold } from '../../../../lib/claim-hold';

const obj = (namespace: string, o: { status?: unknown; annotations?: Record<string, string>; deleting?: boolean } = {}): Obj => ({
  apiVersion: 'anynines.com/v1',
  kind: 'PostgresqlInstance',
  metadata: {
    name: 'db',
    namespace,
    uid: `u-${namespace}`,
    annotations: o.annotations ?? { [Annotations.bound]: 'true' },
    ...(o.deleting ? { deletionTimestamp: 'now' } : {}),
  },
  spec: {},
  ...(o.status ? { status: o.status } : {}),
});

function world(o: { provider?: Obj; consumer?: Obj; live?: Obj; mapped?: boolean; claim?: boolean; bindingHold?: Hold }) {
  const writes: string[] = [];
  const deps: StatusDeps = {
    getProvider: () => o.provider,
    namespaces: { providerNamespace: () => ({ state: 'missing' }), consumerNamespace: () => (o.mapped === false ? undefined : 'app') },
    claim: o.claim,
    bindingHold: () => o.bindingHold,
    getConsumer: () => o.consumer,
    readConsumer: async () => o.live,
    writeConsumerStatus: async (c, s) => void writes.push(`status ${c.metadata.namespace}/${c.metadata.name} ${JSON.stringify(s)}`),
    deleteProvider: async (ns, name, uid) => void writes.push(`delete ${ns}/${name} uid=${uid}`),
  };
  return { deps, writes };
}

const ready = { conditions: [{ type: 'Ready', status: 'True' }] };

describe('reconcileStatus', () => {
  it('copies the provider status onto the consumer object', async () => {
    const w = world({ provider: obj('p', { status: ready }), consumer: obj('app') });
    await reconcileStatus(w.deps, 'p', 'db');
    expect(w.writes).toEqual([`status app/db ${JSON.stringify(ready)}`]);
  });

  it('writes nothing when the status already matches', async () => {
    const w = world({ provider: obj('p', { status: ready }), consumer: obj('app', { status: ready }) });
    await reconcileStatus(w.deps, 'p', 'db');
    expect(w.writes).toEqual([]);
  });

  it('deletes a copy whose consumer object is gone, as the API server confirms', async () => {
    const w = world({ provider: obj('p'), consumer: undefined, live: undefined });
    await reconcileStatus(w.deps, 'p', 'db');
    expect(w.writes).toEqual(['delete p/db uid=u-p']);
  });

  it('does not trust a cache that has not seen the consumer object yet', async () => {
    const w = world({ provider: obj('p', { status: ready }), consumer: undefined, live: obj('app') });
    await reconcileStatus(w.deps, 'p', 'db');
    expect(w.writes).toEqual([`status app/db ${JSON.stringify(ready)}`]);
  });

  it.each([
    ['an object without the bound annotation', { provider: obj('p', { annotations: {} }) }],
    ['a provider namespace no APIServiceNamespace maps', { provider: obj('p'), mapped: false }],
    ['a consumer object being deleted', { provider: obj('p', { status: ready }), consumer: obj('app', { deleting: true }) }],
  ])('leaves %s alone', async (_what, o) => {
    const w = world(o);
    await reconcileStatus(w.deps, 'p', 'db');
    expect(w.writes).toEqual([]);
  });

  describe('of a claim (a status with conditions)', () => {
    const synced = { type: 'Synced', status: 'False', reason: 'ReconcileError', message: 'cannot compose: plan "huge" is not offered' };
    const held = {
      conditions: [synced, { type: 'Ready', status: 'False', reason: 'Creating', lastTransitionTime: '2026-12-06T10:00:00Z' }],
    };

    it('names the hop that holds it in its Ready condition, what the control plane said and what to do', async () => {
      const w = world({ provider: obj('p', { status: held }), consumer: obj('app'), claim: true });
      await reconcileStatus(w.deps, 'p', 'db');
      expect(w.writes).toHaveLength(1);
      const written = JSON.parse(w.writes[0]!.replace(/^status app\/db /, '')) as { conditions: Record<string, string>[] };
      expect(written.conditions).toEqual([
        synced,
        {
          type: 'Ready',
          status: 'False',
          reason: 'ReconcileError',
          message: expect.stringMatching(
            /^held by the control plane: Synced False \(ReconcileError\): cannot compose: plan "huge" is not offered\. What to do: /,
          ),
          lastTransitionTime: '2026-12-06T10:00:00Z',
        },
      ]);
    });

    it('names the binding instead while the binding is not Ready', async () => {
      const lost = bindingHold('b', { type: 'Ready', status: 'False', reason: 'ProviderUnreachable', message: 'lost the provider' });
      const w = world({ provider: obj('p', { status: held }), consumer: obj('app'), claim: true, bindingHold: lost });
      await reconcileStatus(w.deps, 'p', 'db');
      expect(w.writes[0]).toMatch(
        /"reason":"ProviderUnreachable","message":"held by the binding: APIServiceBinding b is not Ready \(ProviderUnreachable\)/,
      );
    });

    it('writes the named status once: the next reconcile finds it there', async () => {
      const first = world({ provider: obj('p', { status: held }), consumer: obj('app'), claim: true });
      await reconcileStatus(first.deps, 'p', 'db');
      const shown = JSON.parse(first.writes[0]!.replace(/^status app\/db /, '')) as unknown;
      const again = world({ provider: obj('p', { status: held }), consumer: obj('app', { status: shown }), claim: true });
      await reconcileStatus(again.deps, 'p', 'db');
      expect(again.writes).toEqual([]);
    });

    it('copies a Ready claim as it is, and any status of a resource that is not a claim', async () => {
      const claim = world({ provider: obj('p', { status: ready }), consumer: obj('app'), claim: true });
      await reconcileStatus(claim.deps, 'p', 'db');
      expect(claim.writes).toEqual([`status app/db ${JSON.stringify(ready)}`]);
      const other = world({ provider: obj('p', { status: held }), consumer: obj('app') });
      await reconcileStatus(other.deps, 'p', 'db');
      expect(other.writes).toEqual([`status app/db ${JSON.stringify(held)}`]);
    });
  });
});
