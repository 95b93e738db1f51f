import { readdirSync, readFileSync } from 'node:fs';
import { basename, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ensurePrograms, NODE_PROGRAMS, program, PROGRAMS } from './programs';

const root = join(import.meta.dirname, '..', '..');
const SKIP = new Set(['node_modules', 'dist', '.git', '.sandbox']);
const OWN = new Set(['harness/tools/programs.ts', 'harness/tools/programs.test.ts']);

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name) || e.name.startsWith('.')) return [];
    const p = join(dir, e.name);
    return e.isDirectory() ? sources(p) : /\.(ts|mts|mjs|cjs)$/.test(e.name) ? [p] : [];
  });
}

/** Every name a program of the table goes by in code: its key, its file name and its path. */
const NAMES = new Map<string, string>();
for (const [key, p] of Object.entries(PROGRAMS)) for (const n of [key, basename(p.path), p.path]) NAMES.set(n, key);

// A spawn-family call, or a process description, whose command is a string literal (an optional first argument
// before it: runSync's description, a node handle).
const CALL =
  /\b(?:spawn|spawnSync|execFile|execFileSync|exec|execInNode|runCommand|inNode|inCgroup|startProcess|run)\(\s*(?:[\w.!]+,\s*)?['"`]([^'"`\s$]+)['"`]|\brunSync\(\s*(?:'[^']*'|`[^`]*`),\s*['"`]([^'"`\s$]+)['"`]/g;
const COMMAND = /\bcommand:\s*['"`]([^'"`\s$]+)['"`]/g;
// A shell command line in a string: a program's name after `&&`, `;`, `|` or `exec`, or at the string's start with an
// argument after it (`ip link ...`; not a message such as `buildah failed: ...`).
const SHELL = (name: string) => {
  const n = name.replace(/[.+]/g, '\\$&');
  return new RegExp(`(?:&&|;|\\||\\bexec)\\s+${n}\\s|['"\`]${n}\\s+(?:-|[a-z]+(?:\\s|['"\`]))`);
};
/** Lines that show a command to a person (a step's output, a log line, an error), not run it. */
const SHOWN = /\b(?:say|log|Error)\(/;
const command = (m: RegExpMatchArray) => (m[1] ?? m[2])!;

/** Places in the code that run a Debian program by name instead of through program()/ensurePrograms(). */
function byName(): string[] {
  const found: string[] = [];
  for (const file of sources(root)) {
    const rel = relative(root, file);
    if (OWN.has(rel)) continue;
    readFileSync(file, 'utf8')
      .split('\n')
      .forEach((line, i) => {
        if (/^\s*(\/\/|\*|\/\*)/.test(line)) return;
        const names = [...line.matchAll(CALL), ...line.matchAll(COMMAND)].map(command).filter((n) => NAMES.has(n));
        if (!SHOWN.test(line)) for (const key of new Set(NAMES.values())) if (SHELL(key).test(line)) names.push(key);
        for (const n of new Set(names)) found.push(`${rel}:${i + 1}: runs ${n} by name; use program('${NAMES.get(n)}')`);
      });
  }
  return found;
}

const finds = (line: string) =>
  [...line.matchAll(CALL), ...line.matchAll(COMMAND)].some((m) => NAMES.has(command(m))) ||
  (!SHOWN.test(line) && [...NAMES.values()].some((k) => SHELL(k).test(line)));

describe('the programs the harness takes from Debian', () => {
  it('are run only through program() or ensurePrograms(), which install their package first', () => {
    expect(byName()).toEqual([]);
  });

  it('the check finds a program run by name, in a call, a process description or a shell line', () => {
    const lines = [
      "runSync('building', 'buildah', ['bud'])",
      "node.exec('/bin/busybox', ['wget'])",
      "launch({ command: 'docker-registry', args })",
      '\'mount -t tmpfs x /var/lib && exec buildah "$@"\'',
      '`ip link set lo up`',
    ];
    for (const line of lines) {
      expect(finds(line), line).toBe(true);
    }
    for (const line of [
      "runSync('listing', 'dpkg', ['-L'])",
      "runSync('buildah', c.command, c.args)",
      "log('building the image with buildah ...')",
      '`${ip} link set lo up`',
      'new Error(`buildah failed: ${c.command}`)',
    ])
      expect(finds(line), line).toBe(false);
  });

  it('names runc, not crun, among what the node needs', () => {
    const packages = NODE_PROGRAMS.map((n) => PROGRAMS[n].package);
    expect(packages).toEqual(expect.arrayContaining(['containerd', 'runc', 'containernetworking-plugins', 'iptables', 'buildah']));
    expect(packages).not.toContain('crun');
  });

  it('hands out the path of a program whose package is there, installing nothing', async () => {
    const lines: string[] = [];
    // iproute2 is on every machine of this kind, and the node's network is made with it.
    expect(await ensurePrograms(['ip'], (l) => lines.push(l))).toEqual({ ip: '/usr/sbin/ip' });
    expect(program('ip')).toBe('/usr/sbin/ip');
    expect(lines).toEqual([]);
  });
});
