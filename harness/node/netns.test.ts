import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { networkInterfaces, tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createNodeCgroup, sweepScript } from './cgroups';
import { execInNode, type NodeNetwork, startNamespaces } from './netns';
import { program } from '../tools/programs';

const NET: NodeNetwork = { nodeIp: '10.244.0.1', podCidr: '10.244.0.0/24', serviceCidr: '10.0.0.0/24', bridge: 'kk0' };
const runs: string[] = [];
afterEach(() => {
  for (const d of runs.splice(0)) {
    spawnSync('sh', ['-c', sweepScript(d)]);
    rmSync(d, { recursive: true, force: true });
  }
});

describe("the node's namespaces", () => {
  it('put the node address, bridge and Service route only inside, keep kernel settings the kubelet writes off the machine, and end with their owner', async () => {
    const run = mkdtempSync(join(tmpdir(), 'klutch-kit-netns-test-'));
    runs.push(run);
    const cg = createNodeCgroup(`n${process.pid}`, run);
    // The owner the holder watches: a process this test can end, as a killed test runner would.
    const owner = spawn('sleep', ['300']);
    const ns = await startNamespaces(run, cg, NET, String(owner.pid));

    expect(execInNode(ns.holder.pid, program('ip'), ['-4', 'addr', 'show', 'kk0']).output).toContain('inet 10.244.0.1/24');
    expect(execInNode(ns.holder.pid, program('ip'), ['route', 'get', '10.0.0.10']).output).toContain('dev kk0 src 10.244.0.1');
    expect(execInNode(ns.holder.pid, program('ip'), ['route', 'get', '8.8.8.8']).output).toMatch(/unreachable/);
    expect(execInNode(ns.holder.pid, 'cat', ['/proc/sys/kernel/panic_on_oops']).output.trim()).toBe('1');
    expect(
      Object.values(networkInterfaces())
        .flat()
        .map((a) => a?.address),
    ).not.toContain(NET.nodeIp);
    expect(readFileSync('/proc/sys/kernel/panic_on_oops', 'utf8').trim()).not.toBe('1');
    expect(readFileSync('/proc/mounts', 'utf8')).not.toContain('klutch-kit-node-run');

    owner.kill('SIGKILL');
    await ns.holder.done;
    expect(ns.holder.exited()).toBe('code 0');
  });
});
