/**
 * Ctrl-C while `npm run sandbox` starts: what has started is stopped, nothing is left running, exit code 130. A file
 * of its own so it runs beside the long round trip (sandbox.test.ts) instead of after it. It starts with
 * `--crossplane v2`, as a user asks for the v2-native package: before the interrupt, the package synth wrote for the
 * control plane is the v2 one, so the flag went through main.ts into the sandbox (sandbox.test.ts runs the default).
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlanes } from '../support/cluster';
import { eventually } from '../../harness/kube';
import { parseYaml } from '../../harness/catalog';
import { leftOver, runSandbox, type SandboxRun } from '../support/sandbox-run';

let run: SandboxRun | undefined;
beforeAll(() => controlPlanes()); // the Kubernetes binary is built (on a new machine, first)
afterAll(() => run?.cleanup());

describe('npm run sandbox, interrupted', () => {
  it('stops what it started on Ctrl-C while it starts, and exits with 130', async () => {
    run = runSandbox(['--crossplane', 'v2']);
    await run.printed('[2] npm run synth', 120_000); // the clusters run: etcd, API servers, controller managers
    expect(run.descendants.size).toBeGreaterThanOrEqual(5);
    // synth started with the clusters; its PostgreSQL XRD is the v2-native one: namespaced composites, no claims.
    const definition = join(run.dir, 'synth', 'packages', 'dataservices', 'apis', 'postgresql', 'definition.yaml');
    const xrd = await eventually(
      `${definition} written by synth`,
      async () => (existsSync(definition) ? (parseYaml(readFileSync(definition, 'utf8'))[0] as Record<string, any>) : undefined),
      120_000,
    );
    expect([xrd.apiVersion, xrd.spec.scope, xrd.spec.claimNames]).toEqual(['apiextensions.crossplane.io/v2', 'Namespaced', undefined]);
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(run.output()).toContain('Ctrl-C: stopping what has started');
    expect(code).toBe(130);
    expect(await leftOver(run)).toEqual([]);
  }, 180_000);
});
