import { describe, expect, it } from 'vitest';
import { causeOf, findCause } from './errors';

class Refusal extends Error {}

describe('causeOf', () => {
  it('finds an error of a kind beneath wraps that only added context, and nothing where there is none', () => {
    const refusal = new Refusal('the template forbids it');
    const wrapped = new Error('cannot reconcile x: the template forbids it', { cause: new Error('derive', { cause: refusal }) });
    expect(causeOf(wrapped, Refusal)).toBe(refusal);
    expect(causeOf(refusal, Refusal)).toBe(refusal);
    expect(causeOf(new Error('other', { cause: 'not an error' }), Refusal)).toBeUndefined();
    expect(causeOf('a string', Refusal)).toBeUndefined();
  });
});

describe('findCause', () => {
  it('walks causes that are not Errors (an API exception is any object with a code), and ends on a cycle', () => {
    const api = { code: 404, body: '{}' };
    expect(findCause(new Error('ctx', { cause: api }), (c) => (c as { code?: unknown }).code === 404)).toBe(api);
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(findCause(a, () => false)).toBeUndefined();
  });
});
