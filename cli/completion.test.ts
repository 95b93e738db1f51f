import { describe, expect, it } from 'vitest';
import { complete } from './completion';
import { parseCommand } from './flags';

const lines = (...words: string[]) => complete(words).split('\n').filter(Boolean);

describe('complete', () => {
  it('offers the commands first, then for `help` the commands it explains', () => {
    expect(lines('').map((l) => l.split('\t')[0])).toEqual(['apiservice', 'list', 'remove', 'why', 'version', 'help', ':4']);
    expect(lines('re')).toEqual(["remove\tunbind: deletes the API's objects here and on the provider", ':4']);
    expect(lines('help', '').map((l) => l.split('\t')[0])).toEqual(['apiservice', 'list', 'remove', 'why', ':4']);
  });

  it("offers a command's own flags, with --help, and no command after the URL or a flag's value", () => {
    expect(lines('remove', '-')).toEqual(expect.arrayContaining([expect.stringMatching(/^--yes\t/), expect.stringMatching(/^--help\t/)]));
    expect(lines('remove', '-')).not.toContainEqual(expect.stringMatching(/^--dry-run/));
    expect(lines('https://bind.example.com/export', '--client-s')).toEqual([
      expect.stringMatching(/^--client-secret-file\t/),
      expect.stringMatching(/^--client-secret-env\t/),
      ':4',
    ]);
    // `-n list`: "list" is the namespace, not the command.
    expect(lines('-n', 'list', '')).toEqual([
      expect.stringMatching(/^apiservice\t/),
      expect.anything(),
      expect.anything(),
      expect.anything(),
      expect.anything(),
      expect.anything(),
      ':4',
    ]);
    expect(lines('https://bind.example.com/export', '')).toEqual([':4']);
  });

  it("offers a flag's choices, after a space, after = or after its short form; files for a file; nothing for a free value", () => {
    expect(lines('list', '--output', '')).toEqual(['yaml', 'json', 'name', ':4']);
    expect(lines('list', '-o', 'n')).toEqual(['name', ':4']);
    expect(lines('apiservice', '--output=y')).toEqual(['--output=yaml', ':4']);
    expect(lines('version', '-o', '')).toEqual(['yaml', 'json', ':4']);
    expect(lines('apiservice', '-f', '')).toEqual([':0']);
    expect(lines('--kubeconfig', '')).toEqual([':0']);
    expect(lines('--timeout', '')).toEqual([':4']);
  });

  it('answers `kubectl-bind __complete <words>`, the words as kubectl passes them, flags included', () => {
    expect(parseCommand(['__complete', 'list', '--output', ''])).toEqual({ command: 'complete', words: ['list', '--output', ''] });
  });
});
