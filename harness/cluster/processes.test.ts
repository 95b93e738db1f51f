import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it, onTestFinished } from 'vitest';
import { freePorts, runCommand } from './processes';

describe('freePorts', () => {
  it('hands out distinct ports below the ephemeral range, which a listener can bind at once', async () => {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    const ports = await freePorts(20);
    expect(new Set(ports).size).toBe(20);
    for (const p of ports) expect(p).toBeLessThan(low);
    const s = createServer();
    await new Promise<void>((resolve, reject) => (s.once('error', reject), s.listen(ports[0], '127.0.0.1', () => resolve())));
    await new Promise((r) => s.close(r));
  });
});

describe('runCommand', () => {
  it('gives the exit code, stdout alone and both streams together, while the event loop runs on', async () => {
    // The command ends only once a timer of this process has run while it waits: were runCommand to block the event
    // loop, it would never end (the test's timeout). No wall-clock bound: under a full run's load ticks come late.
    const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-run-'));
    onTestFinished(() => rmSync(dir, { recursive: true, force: true }));
    const flag = join(dir, 'ticked');
    const timer = setTimeout(() => writeFileSync(flag, ''), 20);
    const r = await runCommand('sh', ['-c', `echo out; echo err >&2; while [ ! -e ${flag} ]; do sleep 0.01; done; exit 3`]);
    clearTimeout(timer);
    expect([r.code, r.stdout, r.output.split('\n').sort().join(' ').trim()]).toEqual([3, 'out\n', 'err out']);
  });

  it('kills a command that outlives its timeout, and says why a command could not start', async () => {
    const started = Date.now();
    expect((await runCommand('sleep', ['5'], { timeoutMs: 100 })).code).toBe(-1);
    expect(Date.now() - started).toBeLessThan(3_000);
    const missing = await runCommand('/nonexistent/klutch-kit-command', []);
    expect([missing.code, missing.output]).toEqual([-1, expect.stringContaining('ENOENT')]);
  });
});
