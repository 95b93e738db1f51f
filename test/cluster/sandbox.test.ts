/**
 * `npm run sandbox -- --short` as a user runs it (the same entry, in a process of its own): the platform on Pods in
 * two clusters with a node each — Crossplane from its Helm chart with our packages from the run's registry, the bind
 * backend from the install bundle, CloudNativePG — the app cluster bound by kubectl bind (the konnector as Pods), an
 * a8s and a cnpg PostgresqlInstance from the app cluster Ready with their credentials, a Pod of the app cluster
 * answered by PostgreSQL on the control plane through those credentials, the Pods of both clusters printed; and it
 * exits leaving no process, node mount or node run behind. Ctrl-C: sandbox-interrupt.test.ts.
 */
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { controlPlanes } from '../support/cluster';
import { leftOver, runSandbox, type SandboxRun } from '../support/sandbox-run';

let run: SandboxRun | undefined;
// On a new machine the Kubernetes binary is built first (once, by whichever suite asks first); the test's own time is the run.
beforeAll(() => controlPlanes());
afterAll(() => run?.cleanup());

describe('npm run sandbox', () => {
  it('--short: the platform on Pods, claims from the app cluster Ready, a query answered through the creds; nothing is left', async () => {
    run = runSandbox(['--short']);
    const { code } = await run.exit;
    const out = run.output();
    expect(code, out).toBe(0);
    for (const step of [
      '[1] Two Kubernetes clusters',
      '[3] A node for each cluster',
      '[4] The control plane as deployed: a registry, Crossplane from its Helm chart',
      '[5] CloudNativePG',
      '[6] The OpenID provider, and the install bundle',
      '[7] kubectl bind: PostgresqlInstance',
      '[8] kubectl bind: ServiceBinding',
      '[11] ServiceBindings default/demo-binding and default/demo-cnpg-binding',
      '[12] A Pod in the app cluster connects with Secret demo-cnpg-binding-creds',
      '[13] The Pods of both clusters',
    ])
      expect(out).toContain(step);
    expect(out).not.toContain('✗');
    expect(out).toMatch(/postgresqlinstances\.anynines\.com +PostgresqlInstance \(anynines\.com\/v1\) +klutch-kit +True/);
    expect(out).toMatch(
      /demo-postgresql \(composition a8s-postgresql\): Crossplane composed XPostgresqlInstance demo-postgresql-\w+ with our function/,
    );
    expect(out).toMatch(
      /demo-cnpg \(composition cnpg-postgresql\): Crossplane composed XPostgresqlInstance demo-cnpg-\w+ with our function/,
    );
    // The stand-ins say what they are.
    expect(out).toContain('a8s PostgreSQL operator (stand-in): Postgresql');
    expect(out).toMatch(/load balancer \(stand-in\): Service \S+\/demo-cnpg-external gets 10\.96\.200\.\d+/);
    expect(out).not.toMatch(/(a8s|load balancer) stand-in:/);
    expect(out).toContain('demo-cnpg in the app cluster: Ready=True');
    expect(out).toMatch(
      /Secret default\/demo-cnpg-binding-creds holds database, instance_service, password, username \(instance_service 10\.96\.200\.\d+\)/,
    );
    // psql's answer, from a Pod in the app cluster, printed in the step and in the summary.
    expect(out).toMatch(
      /PostgreSQL answered a Pod of the app cluster[^\n]*\n {2}CREATE TABLE\n {2}INSERT 0 1\n {2}hello from the app cluster\n/,
    );
    // The Pods of both clusters: the platform's and the app's, Running.
    const table = (name: string) => out.slice(out.indexOf(`    ${name}:\n`));
    expect(out.indexOf('    control-plane:\n'), out).toBeGreaterThan(0);
    for (const [cluster, ns, pod] of [
      ['control-plane', 'crossplane-system', 'crossplane-'],
      ['control-plane', 'crossplane-system', 'klutch-kit-function-dataservices-'],
      ['control-plane', 'klutch-bind-backend', 'klutch-bind-backend-'],
      ['control-plane', 'cnpg-system', 'cnpg-controller-manager-'],
      ['control-plane', '\\S+', 'demo-cnpg-1 '],
      ['app', 'klutch-bind', 'konnector-'],
    ] as const)
      expect(table(cluster)).toMatch(new RegExp(`\\n +${ns} +${pod}\\S* +1/1 +Running`));
    expect(out).toMatch(/export KUBECONFIG=\S+app\.kubeconfig/);
    expect(out).toMatch(/The round trip is done \([\d.]+ s in all\)/);
    expect(out).toContain('nothing is left running');
    expect(run.descendants.size).toBeGreaterThan(8);
    expect(await leftOver(run)).toEqual([]);
    // Both nodes stopped: their runs finished, none of their mounts left.
    const nodeRuns = [...out.matchAll(/starting node \S+ for cluster \S+; logs in (\S+)/g)].map((m) => m[1]!);
    expect(nodeRuns).toHaveLength(2);
    for (const d of nodeRuns) expect(existsSync(join(d, 'finished')), d).toBe(true);
    const mounts = readFileSync('/proc/mounts', 'utf8');
    expect(nodeRuns.filter((d) => mounts.includes(d))).toEqual([]);
  }, 1_200_000);
});
