import { describe, expect, it } from 'vitest';
import { SANDBOX_HELP, parseSandboxFlags, SANDBOX_FLAGS } from './flags';
import { readme, section, undocumentedFlags } from '../test/support/docs';

describe('npm run sandbox flags', () => {
  it('defaults to a long-running sandbox in .sandbox/ with the v1 package', () => {
    expect(parseSandboxFlags([])).toEqual({ short: false, skipBackup: false });
  });

  it('reads each option', () => {
    expect(parseSandboxFlags(['--short', '--dir', '/tmp/x', '--user=ops', '--crossplane', 'v2', '--skip-backup'])).toEqual({
      short: true,
      skipBackup: true,
      dir: '/tmp/x',
      user: 'ops',
      crossplane: 'v2',
    });
  });

  it('refuses what it does not know, naming it', () => {
    expect(() => parseSandboxFlags(['--crossplane', 'v3'])).toThrow('--crossplane must be v1 or v2, not "v3"');
    expect(() => parseSandboxFlags(['--fast'])).toThrow("Unknown option '--fast'");
  });

  it('has --help, and the README documents every option with its default', () => {
    expect(parseSandboxFlags(['-h'])).toBe('help');
    for (const f of SANDBOX_FLAGS.flags) expect(SANDBOX_HELP).toContain(`--${f.name}`);
    expect(undocumentedFlags(section(readme(), '## Try it', 'README.md'), SANDBOX_FLAGS)).toEqual([]);
  });
});
