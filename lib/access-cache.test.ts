import { describe, expect, it } from 'vitest';
import { missingAccess, type AccessCheck, type SelfSubjectReviewer } from './app-cluster-access';
import { AccessCache } from './access-cache';

const get: AccessCheck = { group: 'anynines.com', resource: 'postgresqlinstances', verb: 'get' };
const status: AccessCheck = { ...get, verb: 'patch', subresource: 'status' };
const crd: AccessCheck = { group: 'apiextensions.k8s.io', resource: 'customresourcedefinitions', verb: 'delete', name: 'x.anynines.com' };

/** An API server's answers by verb: what is granted, and every question it was asked. */
function server(granted: Set<string>) {
  const asked: string[] = [];
  let hold: Promise<void> | undefined;
  const reviewer: SelfSubjectReviewer = {
    async createSelfSubjectAccessReview(p) {
      const a = p.body.spec.resourceAttributes;
      const what = `${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ''}`;
      asked.push(what);
      await hold;
      if (granted.has('fail')) throw new Error('connection refused');
      return { status: { allowed: granted.has(what) } };
    },
  };
  return {
    reviewer,
    asked,
    granted,
    /** Answers wait until the returned function is called. */
    holdAnswers: () => {
      let release!: () => void;
      hold = new Promise((r) => (release = r));
      return () => {
        hold = undefined;
        release();
      };
    },
  };
}

describe('AccessCache', () => {
  it('answers an allowed check from memory until it expires, then asks the API server again', async () => {
    const s = server(new Set(['get postgresqlinstances', 'patch postgresqlinstances/status', 'delete customresourcedefinitions']));
    let now = 1_000;
    const cache = new AccessCache({ reviewer: s.reviewer, ttlMs: 60_000, now: () => now });
    expect(await missingAccess(cache, [get, status, crd])).toEqual([]);
    expect(s.asked).toHaveLength(3);
    now += 59_999;
    expect(await missingAccess(cache, [get, status, crd])).toEqual([]);
    expect(s.asked, 'within the TTL nothing is asked').toHaveLength(3);
    s.granted.delete('get postgresqlinstances');
    now += 1;
    expect(await missingAccess(cache, [get, status, crd])).toEqual(['get postgresqlinstances.anynines.com']);
    expect(s.asked).toHaveLength(6);
  });

  it('holds a denial only for deniedTtlMs, so a grant is seen by the next look 10 s later', async () => {
    const s = server(new Set());
    let now = 0;
    const cache = new AccessCache({ reviewer: s.reviewer, deniedTtlMs: 5_000, now: () => now });
    expect(await missingAccess(cache, [get])).toEqual(['get postgresqlinstances.anynines.com']);
    now = 4_999;
    expect(await missingAccess(cache, [get]), 'reconciles in between ask nothing').toEqual(['get postgresqlinstances.anynines.com']);
    expect(s.asked).toHaveLength(1);
    s.granted.add('get postgresqlinstances');
    now = 5_000;
    expect(await missingAccess(cache, [get])).toEqual([]);
    expect(s.asked).toEqual(['get postgresqlinstances', 'get postgresqlinstances']);
    expect(cache.size).toBe(1);
  });

  it('forgets the checks it is told to (a failing watch), and only those', async () => {
    const s = server(new Set(['get postgresqlinstances', 'patch postgresqlinstances/status']));
    const cache = new AccessCache({ reviewer: s.reviewer, now: () => 0 });
    await missingAccess(cache, [get, status]);
    s.granted.delete('get postgresqlinstances');
    cache.forget([get]);
    expect(await missingAccess(cache, [get, status])).toEqual(['get postgresqlinstances.anynines.com']);
    expect(s.asked).toEqual(['get postgresqlinstances', 'patch postgresqlinstances/status', 'get postgresqlinstances']);
  });

  it('sends a question being asked once, however many reconciles ask it; one forgotten meanwhile is not remembered', async () => {
    const s = server(new Set(['get postgresqlinstances']));
    const cache = new AccessCache({ reviewer: s.reviewer, now: () => 0 });
    let release = s.holdAnswers();
    const both = Promise.all([missingAccess(cache, [get]), missingAccess(cache, [get])]);
    release();
    expect(await both).toEqual([[], []]);
    expect(s.asked).toEqual(['get postgresqlinstances']);
    expect(cache.asked).toBe(1);

    cache.forget([get]);
    release = s.holdAnswers();
    const first = missingAccess(cache, [get]);
    cache.forget([get]);
    release();
    expect(await first).toEqual([]);
    await missingAccess(cache, [get]);
    expect(s.asked, 'the answer to a forgotten question is not trusted later').toHaveLength(3);
  });

  it('remembers no error, and says it to the caller', async () => {
    const s = server(new Set(['fail']));
    const cache = new AccessCache({ reviewer: s.reviewer, now: () => 0 });
    await expect(missingAccess(cache, [get])).rejects.toThrow('connection refused');
    s.granted.clear();
    s.granted.add('get postgresqlinstances');
    expect(await missingAccess(cache, [get])).toEqual([]);
    expect(s.asked).toHaveLength(2);
  });

  it('drops expired answers as new ones come, so it holds only live checks', async () => {
    const s = server(new Set(['get postgresqlinstances', 'patch postgresqlinstances/status']));
    let now = 0;
    const cache = new AccessCache({ reviewer: s.reviewer, ttlMs: 10, now: () => now });
    await missingAccess(cache, [get]);
    now = 20;
    await missingAccess(cache, [status]);
    expect(cache.size).toBe(1);
  });

  it('refuses a negative TTL, naming it', () => {
    expect(() => new AccessCache({ reviewer: server(new Set()).reviewer, ttlMs: -1 })).toThrow('ttlMs must be 0 or more, got -1');
    expect(() => new AccessCache({ reviewer: server(new Set()).reviewer, deniedTtlMs: -1 })).toThrow(
      'deniedTtlMs must be 0 or more, got -1',
    );
  });
});
