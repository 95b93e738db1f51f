/**
 * Ctrl-C while `npm run sandbox` starts: what has started is stopped, nothing is left running, exit code 130. A file
 * of its own so it runs beside the long round trip (sandbox.test.ts) instead of after it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlanes } from '../support/cluster';
import { leftOver, runSandbox, type SandboxRun } from '../support/sandbox-run';

let run: SandboxRun | undefined;
beforeAll(() => controlPlanes()); // the Kubernetes binary is built (on a new machine, first)
afterAll(() => run?.cleanup());

describe('npm run sandbox, interrupted', () => {
  it('stops what it started on Ctrl-C while it starts, and exits with 130', async () => {
    run = runSandbox([]);
    await run.printed('[2] npm run synth', 120_000); // the clusters run: etcd, API servers, controller managers
    expect(run.descendants.size).toBeGreaterThanOrEqual(5);
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(run.output()).toContain('Ctrl-C: stopping what has started');
    expect(code).toBe(130);
    expect(await leftOver(run)).toEqual([]);
  }, 180_000);
});
