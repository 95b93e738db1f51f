/**
 * Ctrl-C while `npm run sandbox` starts: what has started is stopped, nothing is left running, exit code 130. A file
 * of its own so it runs beside the long round trip (sandbox.test.ts) instead of after it. It starts with
 * `--crossplane v2`, as a user asks for the v2-native package: the package synth wrote for the control plane is the
 * v2 one, so the flag went through main.ts into the sandbox (sandbox.test.ts runs the default).
 *
 * The Ctrl-C comes while step 1 starts the clusters, once etcd and both API servers run: a moment the sandbox is
 * surely in. At the start of step 2, as before, it raced the step: when synth was done first, step 2 took a few
 * milliseconds and the nodes of step 3 started, which the stop then waited for (87 s of a full run).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlanes } from '../support/cluster';
import { eventually } from '../../harness/cluster/kube';
import { parseYaml } from '../../harness/crossplane/catalog';
import { leftOver, runSandbox, type SandboxRun } from '../support/sandbox-run';

let run: SandboxRun | undefined;
beforeAll(() => controlPlanes()); // the Kubernetes binary is built (on a new machine, first)
afterAll(() => run?.cleanup());

/** The harness binary's role (`kube etcd|kube-apiserver|...`) of a process, or undefined when it is another one. */
const kubeRole = (pid: number): string | undefined => {
  try {
    const [bin, role] = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return bin?.endsWith('/kube') ? role : undefined;
  } catch {
    return undefined; // gone meanwhile
  }
};

describe('npm run sandbox, interrupted', () => {
  it('stops what it started on Ctrl-C while it starts, and exits with 130', async () => {
    const sandbox = (run = runSandbox(['--crossplane', 'v2']));
    await eventually(
      'etcd and the API servers of both sandbox clusters running',
      async () => {
        const roles = [...sandbox.descendants].map(kubeRole);
        return roles.includes('etcd') && roles.filter((r) => r === 'kube-apiserver').length === 2 ? true : undefined;
      },
      120_000,
    );
    sandbox.child.kill('SIGINT');
    const { code } = await sandbox.exit;
    const output = sandbox.output();
    expect(output).toContain('[1] Two Kubernetes clusters');
    expect(output).toContain('Ctrl-C: stopping what has started');
    expect(output).not.toContain('\n[2] '); // no step starts after Ctrl-C
    expect(code).toBe(130);
    expect(await leftOver(sandbox)).toEqual([]);
    // synth started with the clusters and the stop let it finish: its PostgreSQL XRD is the v2-native one
    // (namespaced composites, no claims).
    const definition = join(sandbox.dir, 'synth', 'packages', 'dataservices', 'apis', 'postgresql', 'definition.yaml');
    const xrd = parseYaml(readFileSync(definition, 'utf8'))[0] as Record<string, any>;
    expect([xrd.apiVersion, xrd.spec.scope, xrd.spec.claimNames]).toEqual(['apiextensions.crossplane.io/v2', 'Namespaced', undefined]);
  }, 180_000);
});
