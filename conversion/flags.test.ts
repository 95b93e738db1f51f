import { describe, expect, it } from 'vitest';
import { manual, undocumentedFlags } from '../test/support/docs';
import { CONVERSION_FLAGS, CONVERSION_HELP } from './flags';

describe("the conversion server's flags", () => {
  it('are in --help and documented with their variables and defaults in docs/conversion.md', () => {
    for (const f of CONVERSION_FLAGS.flags) expect(CONVERSION_HELP).toContain(`--${f.name}`);
    expect(undocumentedFlags(manual('conversion'), CONVERSION_FLAGS)).toEqual([]);
  });
});
