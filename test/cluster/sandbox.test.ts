/**
 * `npm run sandbox` as a user runs it (the same entry, in a process of its own): Ctrl-C while it starts stops what
 * has started, and the short mode does the whole round trip — a PostgresqlInstance from the app cluster through the
 * real Crossplane loop and back, Ready, with its ServiceBinding's credentials — and exits leaving no process behind.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../support/catalog';
import { controlPlanes } from '../support/cluster';

interface Run {
  readonly child: ChildProcess;
  output(): string;
  /** Every process that descended from it while it ran. */
  readonly descendants: Set<number>;
  printed(text: string, timeoutMs: number): Promise<void>;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const dirs: string[] = [];
afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function childrenOf(): Map<number, number[]> {
  const out = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' });
  const tree = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number) as [number, number];
    tree.set(ppid, [...(tree.get(ppid) ?? []), pid]);
  }
  return tree;
}

function sandbox(args: readonly string[]): Run {
  const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-sandbox-test-'));
  dirs.push(dir);
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-ts.mjs'), join(ROOT, 'sandbox', 'main.ts'), '--dir', dir, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const descendants = new Set<number>();
  const track = setInterval(() => {
    const tree = childrenOf();
    const walk = (pid: number): void => (tree.get(pid) ?? []).forEach((c) => (descendants.add(c), walk(c)));
    walk(child.pid!);
  }, 300);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => (clearInterval(track), resolve({ code, signal }))),
  );
  return {
    child,
    output: () => out,
    descendants,
    exit,
    printed: async (text, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (child.exitCode !== null) throw new Error(`the sandbox exited before it printed "${text}":\n${out}`);
        if (Date.now() > deadline) throw new Error(`the sandbox did not print "${text}" within ${timeoutMs / 1000}s:\n${out}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    },
  };
}

/** Processes of the run still alive a moment after it exited (the parent-death signals need that moment). */
async function leftOver(run: Run): Promise<number[]> {
  await new Promise((r) => setTimeout(r, 1_000));
  return [...run.descendants].filter((pid) => existsSync(`/proc/${pid}`) && !/\) Z /.test(safeStat(pid)));
}

const safeStat = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return ') Z '; // gone meanwhile
  }
};

describe('npm run sandbox', () => {
  it('stops what it started on Ctrl-C while it starts, and exits with 130', async () => {
    await controlPlanes(); // the Kubernetes binary is built
    const run = sandbox([]);
    await run.printed('[2] npm run synth', 120_000); // the clusters run: etcd, API servers, controller managers
    expect(run.descendants.size).toBeGreaterThanOrEqual(5);
    run.child.kill('SIGINT');
    const { code } = await run.exit;
    expect(run.output()).toContain('Ctrl-C: stopping what has started');
    expect(code).toBe(130);
    expect(await leftOver(run)).toEqual([]);
  }, 180_000);

  it('--short: the claim goes up, is composed by Crossplane, and its status and credentials come back; nothing is left', async () => {
    const run = sandbox(['--short']);
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
    expect(out).toContain('status in the app cluster: Ready=True');
    expect(out).toContain('Secret default/demo-binding-creds holds database, instance_service, password, username');
    expect(out).toMatch(/export KUBECONFIG=\S+app\.kubeconfig/);
    expect(out).toMatch(/The round trip is done \([\d.]+ s in all\)/);
    expect(out).toContain('nothing is left running');
    expect(run.descendants.size).toBeGreaterThan(8);
    expect(await leftOver(run)).toEqual([]);
  }, 600_000);
});
