import type { RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';
import { describe, expect, it } from 'vitest';
import { answer, demoInput, fatalMessages, requestOf } from '../../harness/crossplane/function-requests';
import { get } from '../../lib/fieldpath';
import { runFunction } from './fn';
import { LIVE_REQUIREMENT } from './live';

type Obj = Record<string, any>;

/** A made-up backend: a Secret in an Object, its password generated and kept from the Secret as it exists. */
const input = demoInput('login', { apiVersion: 'v1', kind: 'Secret' }, 'kubernetes.m.crossplane.io/v1alpha1', {
  generated: [{ to: 'stringData.password', live: { from: 'data.password', base64: true } }],
});
const PASSWORD = 'stringData.password';
const at = (r: RunFunctionResponse) => get(r.desired?.resources['demo-login']?.resource, `spec.forProvider.manifest.${PASSWORD}`);
const v2Composite: Obj = { apiVersion: 'example.org/v1', kind: 'Login', metadata: { name: 'app', namespace: 'team-a' } };
const secret = (namespace: string, password: string): Obj => ({
  apiVersion: 'v1',
  kind: 'Secret',
  metadata: { name: 'app', namespace },
  data: { password: Buffer.from(password).toString('base64') },
});

describe('a generated value kept from the object as it exists (GeneratedValue.live)', () => {
  it('v2, first composition: asks for the object by name in its own namespace and keeps its value', () => {
    const req = requestOf(input, v2Composite);
    const first = runFunction(req);
    expect(fatalMessages(first)).toEqual([]);
    expect(first.requirements?.extraResources).toEqual({
      [LIVE_REQUIREMENT]: { apiVersion: 'v1', kind: 'Secret', matchName: 'app', namespace: 'team-a' },
    });
    const second = runFunction(answer(req, LIVE_REQUIREMENT, [secret('team-a', 's3cret')]));
    expect(second.requirements).toEqual(first.requirements);
    expect(at(second)).toBe('s3cret');
  });

  it('an answer of nothing, or of an object elsewhere, generates a new value', () => {
    const req = requestOf(input, v2Composite);
    expect(at(runFunction(answer(req, LIVE_REQUIREMENT, [])))).toMatch(/^[A-Za-z0-9_-]{43}$/);
    expect(at(runFunction(answer(req, LIVE_REQUIREMENT, [secret('victim', 'theirs')])))).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('renewed after it expired (its last run said Expired), keeps nothing of the old object, stamped or not', () => {
    // The old Secret may outlive the expiry without its expiry stamp, when it expired before provider-kubernetes
    // applied the stamp.
    const expired = {
      ...v2Composite,
      status: { conditions: [{ type: 'DataServiceReady', status: 'False', reason: 'Expired', message: 'expired at ...' }] },
    };
    const req = requestOf(input, expired);
    const renewal = runFunction(answer(req, LIVE_REQUIREMENT, [secret('team-a', 'expired-password')]));
    expect(fatalMessages(renewal)).toEqual([]);
    expect(renewal.requirements?.extraResources?.[LIVE_REQUIREMENT]).toBeUndefined();
    expect(at(renewal)).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // Any other state of the condition still takes the object over.
    const ready = { ...expired, status: { conditions: [{ type: 'DataServiceReady', status: 'True', reason: 'Available' }] } };
    expect(at(runFunction(answer(requestOf(input, ready), LIVE_REQUIREMENT, [secret('team-a', 's3cret')])))).toBe('s3cret');
  });

  it('once observed, or on a cluster-scoped (v1) composite, asks nothing', () => {
    const observed = { spec: { forProvider: { manifest: { stringData: { password: 'kept' } } } } };
    const seen = runFunction(requestOf(input, v2Composite, { 'demo-login': observed }));
    expect([seen.requirements, at(seen)]).toEqual([undefined, 'kept']);
    const v1 = {
      ...v2Composite,
      metadata: { name: 'app-x1', labels: { 'crossplane.io/claim-name': 'app', 'crossplane.io/claim-namespace': 'team-a' } },
    };
    const legacy = { ...input, wrapper: { ...input.wrapper!, apiVersion: 'kubernetes.crossplane.io/v1alpha2' } };
    const r = runFunction(requestOf(legacy, v1));
    expect(fatalMessages(r)).toEqual([]);
    expect(r.requirements).toBeUndefined();
    expect(at(r)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});
