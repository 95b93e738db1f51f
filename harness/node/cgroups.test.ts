import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { isAlive } from '../cluster/processes';
import { createNodeCgroup, sweepScript } from './cgroups';
import { inCgroup } from './netns';

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) {
    spawnSync('sh', ['-c', sweepScript(d)]);
    rmSync(d, { recursive: true, force: true });
  }
});

describe('the node cgroup', () => {
  it('holds what is started in it, children included, below the runner own cgroup, and the sweep ends and removes it all', async () => {
    const run = mkdtempSync(join(tmpdir(), 'klutch-kit-cgroup-test-'));
    dirs.push(run);
    const cg = createNodeCgroup(`t${process.pid}`, run);
    const mine = readFileSync('/proc/self/cgroup', 'utf8');
    for (const d of cg.dirs) expect(existsSync(d)).toBe(true);
    // A shell that starts a detached grandchild, as containerd starts its shims.
    const { command, args } = inCgroup(cg, '/bin/sh', ['-c', 'setsid sleep 300 & echo $!; wait']);
    const p = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'] });
    const grandchild = await new Promise<number>((resolve) => p.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))));
    const pids = cg.processDirs.map((d) => readFileSync(join(d, 'cgroup.procs'), 'utf8'));
    expect(pids[0]).toContain(String(grandchild));
    expect(pids.every((x) => x === pids[0])).toBe(true);
    expect(readFileSync('/proc/self/cgroup', 'utf8')).toBe(mine);

    const sweep = spawnSync('sh', ['-c', sweepScript(run)], { encoding: 'utf8' });
    expect(sweep.status, sweep.stderr).toBe(0);
    await new Promise((r) => p.once('exit', r));
    expect(isAlive(grandchild)).toBe(false);
    expect(cg.dirs.filter((d) => existsSync(d))).toEqual([]);
  });
});
