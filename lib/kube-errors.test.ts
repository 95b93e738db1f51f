import { ApiException } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { isConflict, isForbidden, isNotFound, isUnauthorized, messageOf, statusOf } from './kube-errors';

const status = (code: number, message?: string) =>
  new ApiException(code, `HTTP-Code: ${code}`, JSON.stringify({ kind: 'Status', code, ...(message ? { message } : {}) }), {});

describe('Kubernetes API errors', () => {
  it('reads the status of client-node errors, of wraps that keep them as cause, and of nothing else', () => {
    const gone = status(404, 'secrets "a" not found');
    expect(statusOf(gone)).toBe(404);
    expect(isNotFound(new Error(`cannot read Secret x/a: ${messageOf(gone)}`, { cause: gone }))).toBe(true);
    expect(isNotFound(new Error('cannot read Secret x/a', { cause: new Error('twice', { cause: gone }) }))).toBe(true);
    expect([isConflict(status(409)), isForbidden(status(403)), isUnauthorized(status(401))]).toEqual([true, true, true]);
    expect(statusOf(new Error('connect ECONNREFUSED 127.0.0.1:6443'))).toBeUndefined();
    expect(statusOf(Object.assign(new Error('list'), { statusCode: 410 }))).toBe(410);
    expect(isNotFound(undefined)).toBe(false);
  });

  it.each([
    ["the API server's Status.message", status(404, 'secrets "a" not found'), 'secrets "a" not found'],
    ['a body that is not JSON', new ApiException(502, 'HTTP-Code: 502', 'Bad Gateway', {}), 'Bad Gateway'],
    [
      'a body already parsed',
      Object.assign(new Error('x'), { code: 409, body: { message: 'the object has been modified' } }),
      'the object has been modified',
    ],
    ['a 401 without a message', status(401), 'Unauthorized (401): the credentials were rejected'],
    ['any other error', new Error('socket hang up'), 'socket hang up'],
    ['a thrown string', 'plain', 'plain'],
  ])('says %s', (_what, e, want) => {
    expect(messageOf(e)).toBe(want);
  });
});
