/**
 * `npm run sandbox` in a process of its own, as a user runs it, for the suites that check it: its output, every
 * process that descended from it while it ran, and which of those are still alive after it exited.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from '../../harness/crossplane/catalog';
import { sleep } from '../../lib/abort';

export interface SandboxRun {
  readonly child: ChildProcess;
  /** Its `--dir`: logs, synth output, kubeconfigs. */
  readonly dir: string;
  cleanup(): void;
  output(): string;
  /** Every process that descended from it while it ran. */
  readonly descendants: Set<number>;
  printed(text: string, timeoutMs: number): Promise<void>;
  readonly exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/**
 * Adds every descendant of `pid` alive now to `into`, from the kernel's lists of each task's children
 * (/proc/<pid>/task/<tid>/children): only the run's own tree is read, and no `ps` is forked three times a second.
 */
function addDescendants(pid: number, into: Set<number>): void {
  let tasks: string[];
  try {
    tasks = readdirSync(`/proc/${pid}/task`);
  } catch {
    return; // gone meanwhile
  }
  for (const task of tasks) {
    let children = '';
    try {
      children = readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8');
    } catch {
      continue; // the thread or the process ended meanwhile
    }
    for (const c of children.split(' ').filter(Boolean).map(Number)) {
      into.add(c);
      addDescendants(c, into);
    }
  }
}

/** Starts `npm run sandbox -- --dir <new temporary folder> <args>`; `cleanup()` removes the folder. */
export function runSandbox(args: readonly string[]): SandboxRun {
  const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-sandbox-test-'));
  const child = spawn(process.execPath, [join(ROOT, 'scripts', 'run-ts.mjs'), join(ROOT, 'sandbox', 'main.ts'), '--dir', dir, ...args], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout!.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (out += d.toString()));
  const descendants = new Set<number>();
  const track = setInterval(() => addDescendants(child.pid!, descendants), 300);
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => (clearInterval(track), resolve({ code, signal }))),
  );
  return {
    child,
    dir,
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
    output: () => out,
    descendants,
    exit,
    printed: async (text, timeoutMs) => {
      const deadline = Date.now() + timeoutMs;
      while (!out.includes(text)) {
        if (child.exitCode !== null) throw new Error(`the sandbox exited before it printed "${text}":\n${out}`);
        if (Date.now() > deadline) throw new Error(`the sandbox did not print "${text}" within ${timeoutMs / 1000}s:\n${out}`);
        await sleep(200);
      }
    },
  };
}

/** Processes of the run still alive a moment after it exited (the parent-death signals need that moment). */
export async function leftOver(run: SandboxRun): Promise<number[]> {
  await sleep(1_000);
  return [...run.descendants].filter((pid) => existsSync(`/proc/${pid}`) && !/\) Z /.test(safeStat(pid)));
}

const safeStat = (pid: number): string => {
  try {
    return readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return ') Z '; // gone meanwhile
  }
};
