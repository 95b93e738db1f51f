import { describe, expect, it } from 'vitest';
import { UsageError } from '../../lib/flags';
import { parsePlatforms, PLUGIN_PLATFORMS } from './platforms';

describe('--plugin-executables', () => {
  it('takes all, or a list of os/arch in krew order', () => {
    expect(parsePlatforms('--plugin-executables', 'all')).toEqual(PLUGIN_PLATFORMS);
    expect(parsePlatforms('--plugin-executables', 'windows/arm64, linux/amd64')).toEqual([
      { os: 'linux', arch: 'amd64' },
      { os: 'windows', arch: 'arm64' },
    ]);
  });

  it('refuses a platform it cannot build, naming the flag and the ones it can', () => {
    expect(() => parsePlatforms('--plugin-executables', 'linux/amd64,darwin/x64')).toThrow(
      new UsageError(
        '--plugin-executables "linux/amd64,darwin/x64": darwin/x64 is not one of all, linux/amd64, linux/arm64, darwin/amd64, darwin/arm64, windows/amd64, windows/arm64',
      ),
    );
  });
});
