import { describe, expect, it } from 'vitest';
import { UsageError } from '../lib/flags';
import { RELEASE_SOURCE, VERSION } from '../lib/version';
import { manual, undocumentedFlags } from '../test/support/docs';
import { parseReleaseFlags, RELEASE_FLAGS, RELEASE_HELP } from './flags';

describe('npm run release flags', () => {
  it("defaults to the project's registries and this tree", () => {
    expect(parseReleaseFlags([])).not.toHaveProperty('registry');
    const f = parseReleaseFlags(['--registry', 'registry.example.com/platform/']);
    expect(f).not.toHaveProperty('pushHost');
    expect(f).toMatchObject({
      registry: 'registry.example.com/platform',
      version: VERSION,
      out: `dist-release/${VERSION}`,
      downloadUrl: `${RELEASE_SOURCE}/releases/download/${VERSION}`,
      sbom: true,
    });
    expect(f !== 'help' && f.platforms.length).toBe(6);
    expect(parseReleaseFlags(['--no-sbom'])).toMatchObject({ sbom: false });
  });

  it.each([
    ['https://registry.example.com/x', /has a scheme/],
    ['registry/x', /does not begin with a registry host/],
    ['Registry.example.com/x', /does not begin with a registry host/],
    ['registry.example.com/Platform', /"Platform" is not a repository path component/],
  ])('refuses the registry %s, naming the fix', (registry, message) => {
    const e = (() => {
      try {
        parseReleaseFlags(['--registry', registry]);
      } catch (x) {
        return x;
      }
    })();
    expect(e).toBeInstanceOf(UsageError);
    expect((e as Error).message).toMatch(message);
    expect((e as Error).message).toContain('host[:port]/path');
  });

  it('accepts a registry with a port, and a push host without a path', () => {
    expect(parseReleaseFlags(['--registry', '10.0.0.1:5000/k', '--push-registry', 'localhost:40123'])).toMatchObject({
      registry: '10.0.0.1:5000/k',
      pushHost: 'localhost:40123',
    });
    expect(() => parseReleaseFlags(['--push-registry', 'localhost:40123/k'])).toThrow(
      /--push-registry "localhost:40123\/k" has a path: give the host only/,
    );
  });

  it("refuses a version that is not this tree's: a tag and its tree cannot disagree", () => {
    expect(parseReleaseFlags(['--registry', 'r.example.com/k', '--version', VERSION.slice(1)])).toMatchObject({ version: VERSION });
    expect(() => parseReleaseFlags(['--registry', 'r.example.com/k', '--version', 'v9.9.9'])).toThrow(
      /this tree is v\d+\.\d+\.\d+ \(lib\/version.ts\); to release v9.9.9, set it there and in package.json's version/,
    );
  });

  it('refuses a download URL that is not http(s)', () => {
    expect(() => parseReleaseFlags(['--registry', 'r.example.com/k', '--download-url', 'ftp://x'])).toThrow(/--download-url "ftp:\/\/x"/);
  });

  it('has --help, and docs/releases.md documents every option with its default', () => {
    expect(parseReleaseFlags(['-h'])).toBe('help');
    for (const f of RELEASE_FLAGS.flags) expect(RELEASE_HELP).toContain(`--${f.name}`);
    expect(undocumentedFlags(manual('releases'), RELEASE_FLAGS)).toEqual([]);
  });
});
