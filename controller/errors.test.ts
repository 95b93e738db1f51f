import { describe, expect, it } from 'vitest';
import { isTerminal, TerminalError } from './errors';

describe('isTerminal', () => {
  it('says a wrapped TerminalError is terminal, and a cycle of causes ends', () => {
    expect(isTerminal(new Error('ctx', { cause: new TerminalError('never valid') }))).toBe(true);
    const a = new Error('a');
    a.cause = a;
    expect(isTerminal(a)).toBe(false);
  });
});
