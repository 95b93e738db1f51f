import { describe, expect, it } from 'vitest';
import { printable, table } from './table';

describe('table', () => {
  it("prints a provider's message with an escape sequence as text: it moves no cursor and sets no clipboard", () => {
    // OSC 52 (write the clipboard), a cursor-up and clear-line, a carriage return and a C1 CSI.
    const evil = 'deprecated\x1b]52;c;Y3VybCBldmlsfHNo\x07\x1b[1A\x1b[2K\rall fine\x9b2J';
    const out = table(['NAME', 'MESSAGE'], [['pg', evil]]);
    expect(out).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/);
    expect(out).toContain('deprecated\\x1b]52;c;Y3VybCBldmlsfHNo\\x07\\x1b[1A\\x1b[2K\\x0dall fine\\x9b2J');
    // Columns still line up on the escaped text, and plain text is left as it is.
    expect(out.split('\n')[0]).toBe('NAME   MESSAGE');
    expect(printable('v1 (deprecated): use v2 — ünïcode')).toBe('v1 (deprecated): use v2 — ünïcode');
  });
});
