/**
 * `npm run sandbox -- --short` as a user runs it (the same entry, in a process of its own): the whole round trip — a
 * PostgresqlInstance from the app cluster through the real Crossplane loop and back, Ready, with its ServiceBinding's
 * credentials — and it exits leaving no process behind. Ctrl-C: sandbox-interrupt.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlanes } from '../support/cluster';
import { ensureCrossplane } from '../tools/crossplane';
import { ensureProviderKubernetes } from '../tools/provider-kubernetes';
import { leftOver, runSandbox, type SandboxRun } from '../support/sandbox-run';

let run: SandboxRun | undefined;
// On a new machine the binaries are built first (once, by whichever suite asks first); the test's own time is the run.
beforeAll(async () => {
  await controlPlanes();
  await ensureCrossplane(undefined, 'v2');
  await ensureProviderKubernetes();
});
afterAll(() => run?.cleanup());

describe('npm run sandbox', () => {
  it('--short: the claim goes up, is composed by Crossplane, and its status and credentials come back; nothing is left', async () => {
    run = runSandbox(['--short']);
    const { code } = await run.exit;
    const out = run.output();
    expect(code, out).toBe(0);
    for (const step of [
      '[1] Two Kubernetes clusters',
      '[3] The control plane: Crossplane core, provider-kubernetes and our function',
      '[5] kubectl bind: PostgresqlInstance',
      '[6] kubectl bind: ServiceBinding',
      '[9] ServiceBinding default/demo-binding',
    ])
      expect(out).toContain(step);
    expect(out).not.toContain('✗');
    expect(out).toMatch(/postgresqlinstances\.anynines\.com +PostgresqlInstance \(anynines\.com\/v1\) +klutch-kit +True/);
    expect(out).toMatch(/Crossplane composed XPostgresqlInstance demo-postgresql-\w+ with our function/);
    expect(out).toContain('a8s PostgreSQL operator (stand-in): Postgresql');
    expect(out).toMatch(/a8s service-binding controller \(stand-in\): ServiceBinding \S+\/demo-binding implemented/);
    expect(out).not.toContain('a8s stand-in:');
    expect(out).toContain('status in the app cluster: Ready=True');
    expect(out).toContain('Secret default/demo-binding-creds holds database, instance_service, password, username');
    expect(out).toMatch(/export KUBECONFIG=\S+app\.kubeconfig/);
    expect(out).toMatch(/The round trip is done \([\d.]+ s in all\)/);
    expect(out).toContain('nothing is left running');
    expect(run.descendants.size).toBeGreaterThan(8);
    expect(await leftOver(run)).toEqual([]);
  }, 600_000);
});
