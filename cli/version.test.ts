import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { KONNECTOR_VERSION } from '../konnector/version';
import type { Io } from './io';
import { run } from './run';

function memoryIo(): Io & { out(): string } {
  const stdout = new PassThrough();
  let text = '';
  stdout.on('data', (d) => (text += String(d)));
  return {
    stdout,
    stderr: new PassThrough(),
    stdin: new PassThrough(),
    env: {},
    interactive: false,
    signal: new AbortController().signal,
    out: () => text,
  };
}

describe('kubectl bind version', () => {
  it.each([['version'], ['--version']])('%s prints the plugin version and the konnector image it installs', async (arg) => {
    const io = memoryIo();
    expect(await run([arg], io)).toBe(0);
    expect(io.out()).toBe(
      `kubectl-bind ${KONNECTOR_VERSION}\nkonnector image it installs: ghcr.io/klutch-kit/konnector:${KONNECTOR_VERSION}\n`,
    );
  });

  it.each([
    [['version', '-o', 'json'], JSON.parse],
    [['version', '--output=yaml'], (s: string) => parse(s)],
  ])('%j prints one document a script reads, as kubectl version -o does', async (argv, read) => {
    const io = memoryIo();
    expect(await run(argv, io)).toBe(0);
    expect(read(io.out())).toEqual({
      pluginVersion: KONNECTOR_VERSION,
      konnectorImage: `ghcr.io/klutch-kit/konnector:${KONNECTOR_VERSION}`,
    });
  });

  it('takes no other argument', async () => {
    for (const argv of [
      ['version', 'x'],
      ['version', '-o', 'wide'],
      ['version', '-o', 'json', 'x'],
    ])
      expect(await run(argv, memoryIo()), argv.join(' ')).toBe(2);
  });
});
