import { describe, expect, it } from 'vitest';
import { causeOf, isTerminal, TerminalError } from './errors';

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

  it('says a wrapped TerminalError is terminal, and a cycle of causes ends', () => {
    expect(isTerminal(new Error('ctx', { cause: new TerminalError('never valid') }))).toBe(true);
    const a = new Error('a');
    a.cause = a;
    expect(isTerminal(a)).toBe(false);
  });
});
