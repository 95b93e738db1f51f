import type { RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import { answer, claimLabels, demoComposites, demoInput, fatalMessages, requestOf } from '../../harness/crossplane/function-requests';
import { get } from '../../lib/fieldpath';
import { runFunction } from './fn';
import { composeRelated, RELATED_REQUIREMENT } from './related';
import { validateInput } from './validate-input';

type Obj = Record<string, any>;

/** A made-up backend: a Store wrapped in an Object, listing one grant per Ticket composite that names it. */
const input = demoInput('store', { apiVersion: 'demo.example.org/v1', kind: 'Store' }, 'kubernetes.crossplane.io/v1alpha2', {
  related: {
    apiVersion: 'example.org/v1',
    kind: 'XTicket',
    match: [
      { path: 'spec.storeRef', from: 'metadata.labels[crossplane.io/claim-name]' },
      { path: 'spec.compositionRef.name', equals: 'demo-ticket' },
    ],
    to: 'spec.grants',
    key: 'name',
    item: [
      { from: 'metadata.uid', to: 'name', required: true, transforms: [{ type: 'format', format: 'grant-%s' }] },
      { from: 'metadata.labels[crossplane.io/claim-name]', to: 'secret', required: true },
      { to: 'state', value: 'present' },
    ],
    gone: { state: 'absent' },
  },
});
const WHERE = '(composition demo-store)';
/** The instance's composite (v1), and the namespaced one (v2) with a tenant's labels that must not widen what it sees. */
const { v1: v1Store, v2: v2Store } = demoComposites('Store', claimLabels('shop', 'victim'));

function ticket(
  name: string,
  o: { ns?: string; namespaced?: boolean; store?: string; composition?: string; deleting?: boolean } = {},
): Obj {
  const ns = o.ns ?? 'team-a';
  return {
    apiVersion: 'example.org/v1',
    kind: o.namespaced ? 'Ticket' : 'XTicket',
    metadata: {
      name: o.namespaced ? name : `${name}-xyz`,
      uid: `uid-${name}`,
      ...(o.namespaced ? { namespace: ns } : { labels: claimLabels(name, ns) }),
      ...(o.deleting ? { deletionTimestamp: '2026-01-01T00:00:00Z' } : {}),
    },
    spec: { storeRef: o.store ?? 'shop', compositionRef: { name: o.composition ?? 'demo-ticket' } },
  };
}

function related(composite: Obj, found: Obj[] | undefined, observedGrants?: Obj[], own?: Obj[]): { grants: unknown; requirement: unknown } {
  const target: Obj = own ? { spec: { grants: own } } : {};
  const { requirement } = composeRelated(
    input,
    target,
    composite,
    observedGrants ? { spec: { grants: observedGrants } } : undefined,
    found,
    WHERE,
  );
  return { grants: get(target, 'spec.grants'), requirement };
}

describe('a related list (Recipe.related)', () => {
  it('the input schema takes it, and refuses a match with both equals and from', () => {
    expect(validateInput(input).ok).toBe(true);
    const bad = { ...input, related: { ...input.related!, match: [{ path: 'x', equals: 'a', from: 'b' }] } };
    expect(validateInput(bad)).toMatchObject({ ok: false, errors: [expect.stringContaining('set exactly one of equals and from')] });
  });

  it('v1: asks for the kind with the claim-namespace label Crossplane wrote; one item per matching composite, sorted', () => {
    const found = [
      ticket('b'),
      ticket('a'),
      ticket('other-store', { store: 'mall' }),
      ticket('other-backend', { composition: 'x-ticket' }),
    ];
    expect(related(v1Store, found)).toEqual({
      requirement: {
        apiVersion: 'example.org/v1',
        kind: 'XTicket',
        matchLabels: { labels: { 'crossplane.io/claim-namespace': 'team-a' } },
      },
      grants: [
        { name: 'grant-uid-a', secret: 'a', state: 'present' },
        { name: 'grant-uid-b', secret: 'b', state: 'present' },
      ],
    });
  });

  it("v2: its own namespace, whatever its labels say; another namespace's composites are ignored even if handed over", () => {
    const found = [ticket('mine', { namespaced: true }), ticket('theirs', { namespaced: true, ns: 'victim' }), ticket('cluster')];
    expect(related(v2Store, found)).toEqual({
      requirement: { apiVersion: 'example.org/v1', kind: 'XTicket', namespace: 'team-a', matchLabels: { labels: {} } },
      grants: [{ name: 'grant-uid-mine', secret: 'mine', state: 'present' }],
    });
  });

  it('v1: a composite labelled for another namespace is ignored even if handed over', () => {
    expect(related(v1Store, [ticket('x', { ns: 'team-b' })]).grants).toBeUndefined();
  });

  it('an item whose composite is gone, or being deleted, stays listed as gone; one composed as gone stays so', () => {
    const before = [
      { name: 'grant-uid-a', secret: 'a', state: 'present' },
      { name: 'grant-uid-b', secret: 'b', state: 'present' },
      { name: 'grant-uid-old', state: 'absent' },
    ];
    expect(related(v1Store, [ticket('b', { deleting: true })], before).grants).toEqual([
      { name: 'grant-uid-a', state: 'absent' },
      { name: 'grant-uid-b', state: 'absent' },
      { name: 'grant-uid-old', state: 'absent' },
    ]);
  });

  it('expiresAt: an expired composite is gone from then on, listed or not; the soonest time to come is returned', () => {
    const expiring = { ...input, related: { ...input.related!, expiresAt: 'spec.expiresAt' } };
    const at = (t: string, o: Obj) => ({ ...o, spec: { ...o.spec, expiresAt: t } });
    const now = Date.parse('2026-12-05T12:00:00Z');
    const found = [
      at('2026-12-05T11:59:59Z', ticket('a')),
      at('2026-12-05T12:00:00Z', ticket('new')),
      at('2026-12-05T13:00:00Z', ticket('b')),
      ticket('c'),
    ];
    const target: Obj = {};
    const before = { spec: { grants: [{ name: 'grant-uid-a', secret: 'a', state: 'present' }] } };
    const r = composeRelated(expiring, target, v1Store, before, found, WHERE, now);
    expect(get(target, 'spec.grants')).toEqual([
      { name: 'grant-uid-a', state: 'absent' },
      { name: 'grant-uid-b', secret: 'b', state: 'present' },
      { name: 'grant-uid-c', secret: 'c', state: 'present' },
      { name: 'grant-uid-new', state: 'absent' },
    ]);
    expect(r.nextExpiry).toBe(Date.parse('2026-12-05T13:00:00Z'));
    expect(() => composeRelated(expiring, {}, v1Store, undefined, [at('tomorrow', ticket('d'))], WHERE, now)).toThrow(
      'cannot read spec.expiresAt (related XTicket d-xyz): "tomorrow" is not an RFC 3339 time',
    );
  });

  it('before Crossplane answered, the observed list is kept as it is (never revoked for want of an answer)', () => {
    const before = [{ name: 'grant-uid-a', secret: 'a', state: 'present' }];
    expect(related(v1Store, undefined, before).grants).toEqual(before);
    expect(related(v1Store, undefined).grants).toBeUndefined();
  });

  it("the recipe's own items come first, whatever Crossplane answered, and are never a related one's or gone", () => {
    const own = [{ name: 'platform', state: 'present' }];
    const before = [...own, { name: 'grant-uid-a', secret: 'a', state: 'present' }];
    expect(related(v1Store, undefined, undefined, own).grants).toEqual(own);
    expect(related(v1Store, undefined, before, own).grants).toEqual(before);
    expect(related(v1Store, [], before, own).grants).toEqual([...own, { name: 'grant-uid-a', state: 'absent' }]);
    expect(related(v1Store, [ticket('b')], [], own).grants).toEqual([...own, { name: 'grant-uid-b', secret: 'b', state: 'present' }]);
    // A related composite whose item would take the platform's key fails the composition rather than replace it.
    const t = ticket('x');
    t.metadata.uid = 'x';
    const ownX = [{ name: 'grant-x', state: 'present' }];
    expect(() => related(v1Store, [t], [], ownX)).toThrow('its name "grant-x" is the platform\'s own; rename it');
  });

  it('revoke: the composites of the store this one was copied from are listed gone from the start; its own win', () => {
    const withRevoke = { ...input, related: { ...input.related!, revoke: [{ path: 'spec.storeRef', from: 'spec.copiedFrom' }] } };
    expect(validateInput(withRevoke).ok).toBe(true);
    const run = (composite: Obj, found: Obj[]) => {
      const target: Obj = {};
      composeRelated(withRevoke, target, composite, undefined, found, WHERE);
      return get(target, 'spec.grants');
    };
    const copy = { ...v1Store, spec: { copiedFrom: 'old-shop' } };
    const found = [
      ticket('mine'),
      ticket('source', { store: 'old-shop' }),
      ticket('source-leaving', { store: 'old-shop', deleting: true }),
      ticket('elsewhere', { store: 'old-shop', ns: 'team-b' }),
    ];
    expect(run(copy, found)).toEqual([
      { name: 'grant-uid-mine', secret: 'mine', state: 'present' },
      { name: 'grant-uid-source', state: 'absent' },
      { name: 'grant-uid-source-leaving', state: 'absent' },
    ]);
    // Not a copy: nothing is revoked for it.
    expect(run(v1Store, found)).toEqual([{ name: 'grant-uid-mine', secret: 'mine', state: 'present' }]);
    // A composite of its own with the same key keeps its item.
    const same = ticket('source', { store: 'old-shop' });
    expect(run(copy, [same, { ...ticket('source'), metadata: { ...ticket('source').metadata, name: 'source-2' } }])).toEqual([
      { name: 'grant-uid-source', secret: 'source', state: 'present' },
    ]);
  });

  it('a matching composite whose item has no key is an error naming it', () => {
    const t = ticket('a');
    delete t.metadata.uid;
    expect(() => related(v1Store, [t])).toThrow(
      'cannot set related.item[0] (metadata.uid → name) (composition demo-store): composite field metadata.uid is required but not set',
    );
  });

  it('a cluster-scoped composite without claim labels cannot say whose composites to see', () => {
    expect(() => related({ metadata: { name: 'x' } }, [])).toThrow('cannot select the related XTickets');
  });
});

describe('the related requirement through the function (the requirements loop)', () => {
  const grants = (r: RunFunctionResponse) => get(r.desired?.resources['demo-store']?.resource, 'spec.forProvider.manifest.spec.grants');

  it('asks as extra resources, then lists what Crossplane found; an empty answer revokes what was listed', () => {
    const observed = {
      spec: { forProvider: { manifest: { spec: { grants: [{ name: 'grant-uid-a', secret: 'a', state: 'present' }] } } } },
    };
    const req = requestOf(input, v1Store, { 'demo-store': observed });
    const first = runFunction(req);
    expect(fatalMessages(first)).toEqual([]);
    expect(first.requirements?.extraResources).toEqual({
      [RELATED_REQUIREMENT]: {
        apiVersion: 'example.org/v1',
        kind: 'XTicket',
        matchLabels: { labels: { 'crossplane.io/claim-namespace': 'team-a' } },
      },
    });
    expect(grants(first)).toEqual([{ name: 'grant-uid-a', secret: 'a', state: 'present' }]);
    const second = runFunction(answer(req, RELATED_REQUIREMENT, [ticket('c')]));
    expect(second.requirements).toEqual(first.requirements);
    expect(grants(second)).toEqual([
      { name: 'grant-uid-a', state: 'absent' },
      { name: 'grant-uid-c', secret: 'c', state: 'present' },
    ]);
    expect(grants(runFunction(answer(req, RELATED_REQUIREMENT, [])))).toEqual([{ name: 'grant-uid-a', state: 'absent' }]);
  });
});
