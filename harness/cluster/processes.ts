/**
 * Child processes for the test harness: started with their output in a log file, stopped with SIGTERM then SIGKILL,
 * and waited for with a readiness probe whose failure names the process, its log and the log's tail. Used by the
 * Kubernetes control planes (control-plane.ts) and by everything else the suites start (Crossplane, providers, the
 * bind backend, the konnector).
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, openSync, readFileSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { sleep } from '../../lib/abort';

/** A process of the harness. */
export interface Proc {
  /** What it is (`kube-apiserver`, `crossplane`), for messages. */
  readonly role: string;
  /** Which cluster (or other owner) it belongs to, for messages. */
  readonly owner: string;
  readonly pid: number;
  readonly logPath: string;
  /** Exit code or signal once it has exited, else undefined. */
  exited(): string | undefined;
  /** Resolves when it has exited, for whatever reason. */
  readonly done: Promise<void>;
  /** SIGTERM, then SIGKILL after `graceMs`; resolves once it has exited. */
  stop(graceMs?: number): Promise<void>;
  /** SIGKILL at once, as a crash would; resolves once it has exited. */
  kill(): Promise<void>;
}

export interface LaunchOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly role: string;
  readonly owner: string;
  /** Folder of the log file `<role>.log` (appended to, so a restart keeps the earlier run's lines). */
  readonly logDir: string;
  readonly env?: NodeJS.ProcessEnv;
  readonly cwd?: string;
}

const DEFAULT_STOP_GRACE_MS = 10_000;

/**
 * Children still running. The parent-death guards of the processes cover crashes; one exit handler (not one per
 * process: a run starts dozens) covers a plain process.exit() of the test runner.
 */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const c of running) c.kill('SIGKILL');
});

/** Starts a process with stdout and stderr in `<logDir>/<role>.log`. */
export function launch(o: LaunchOptions): Proc {
  mkdirSync(o.logDir, { recursive: true });
  const logPath = join(o.logDir, `${o.role}.log`);
  const fd = openSync(logPath, 'a');
  let child: ChildProcess;
  try {
    child = spawn(o.command, [...o.args], { stdio: ['ignore', fd, fd], env: o.env ?? process.env, cwd: o.cwd });
  } finally {
    closeSync(fd);
  }
  let exit: string | undefined;
  const done = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exit = signal ?? `code ${code}`;
      resolve();
    });
    // Failing to start (not executable, say) emits 'error' and no 'exit'.
    child.once('error', (err) => {
      exit ??= `not started: ${err.message}`;
      resolve();
    });
  });
  if (child.pid === undefined) {
    // spawn reports ENOENT asynchronously; the Proc is returned exited so waitReady names it.
    exit = `not started: cannot run ${o.command}`;
  }
  running.add(child);
  void done.then(() => running.delete(child));
  return {
    role: o.role,
    owner: o.owner,
    pid: child.pid ?? -1,
    logPath,
    exited: () => exit,
    done,
    stop: async (graceMs = DEFAULT_STOP_GRACE_MS) => {
      if (exit !== undefined) return;
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
      await done;
      clearTimeout(timer);
    },
    kill: async () => {
      if (exit !== undefined) return;
      child.kill('SIGKILL');
      await done;
    },
  };
}

/** Whether a process runs; a zombie (exited, not yet reaped by its new parent) runs nothing and counts as gone. */
export function isAlive(pid: number): boolean {
  const stat = `/proc/${pid}/stat`;
  if (existsSync('/proc/self/stat')) return existsSync(stat) && !/^\d+ \(.*\) Z/.test(readFileSync(stat, 'utf8'));
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The last lines of a log file, for error messages. */
export function tail(path: string, lines = 25): string {
  try {
    return readFileSync(path, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/**
 * Polls `ready` every 100 ms until it returns true. Fails when the process exits first or `timeoutMs` passes; the
 * error names the process, its log file and the log's tail.
 */
export async function waitReady(p: Proc, ready: () => Promise<boolean>, timeoutMs = 120_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exit = p.exited();
    if (exit !== undefined) {
      throw new Error(`${p.role} of ${p.owner} exited (${exit}) before it was ready; its log is ${p.logPath}:\n${tail(p.logPath)}`);
    }
    if (await ready().catch(() => false)) return;
    if (Date.now() > deadline) {
      throw new Error(`${p.role} of ${p.owner} was not ready after ${timeoutMs / 1000}s; its log is ${p.logPath}:\n${tail(p.logPath)}`);
    }
    await sleep(100);
  }
}

/**
 * Where listening ports are chosen: below the kernel's ephemeral range (ip_local_port_range), which outgoing
 * connections draw from. A port picked from that range and bound a moment later could meanwhile become the local
 * port of some client's connection (seen: the OpenID provider's listen failing with EADDRINUSE on a loaded machine);
 * below it only another listener can take it.
 */
function listenRange(): readonly [number, number] | undefined {
  try {
    const low = Number(readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').trim().split(/\s+/)[0]);
    if (Number.isInteger(low) && low > 12_000) return [10_000, low - 1];
  } catch {
    // no procfs: the kernel's choice below
  }
  return undefined;
}

function bindOn(port: number): Promise<ReturnType<typeof createServer> | undefined> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', (e: NodeJS.ErrnoException) => (e.code === 'EADDRINUSE' || e.code === 'EACCES' ? resolve(undefined) : reject(e)));
    s.listen(port, '127.0.0.1', () => resolve(s));
  });
}

/** `n` distinct free TCP ports on 127.0.0.1, from below the ephemeral range where there is one. */
export async function freePorts(n: number): Promise<number[]> {
  const range = listenRange();
  // Hold every port until all are chosen, so the same one is never handed out twice.
  const servers: ReturnType<typeof createServer>[] = [];
  try {
    for (let tries = 0; servers.length < n; tries++) {
      if (tries > 200 * n) throw new Error(`freePorts: no ${n} free ports below the ephemeral range ${range?.join('-')}`);
      const port = range ? range[0] + Math.floor(Math.random() * (range[1] - range[0] + 1)) : 0;
      const s = await bindOn(port);
      if (s) servers.push(s);
    }
    return servers.map((s) => (s.address() as { port: number }).port);
  } finally {
    await Promise.all(servers.map((s) => new Promise((r) => s.close(r))));
  }
}

export interface ProbeResponse {
  readonly code: number;
  readonly body: string;
}

/** A GET for readiness probes: plain HTTP, or HTTPS without verifying the server (its CA may not exist yet). */
export function probe(url: string, bearer?: string): Promise<ProbeResponse> {
  return new Promise((resolve, reject) => {
    const headers = bearer ? { Authorization: `Bearer ${bearer}` } : {};
    const onResponse = (res: http.IncomingMessage) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ code: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
    };
    const req = url.startsWith('https:')
      ? https.get(url, { timeout: 2000, rejectUnauthorized: false, headers }, onResponse)
      : http.get(url, { timeout: 2000, headers }, onResponse);
    req.on('error', reject).on('timeout', () => req.destroy(new Error('timeout')));
  });
}

export interface CommandResult {
  /** Exit code, or -1 when it was killed or could not start. */
  readonly code: number;
  /** stdout and stderr, in the order they came. */
  readonly output: string;
  readonly stdout: string;
}

/**
 * Runs a command to its end without blocking the event loop (what spawnSync does): the global setup runs the shared
 * Pod platform's steps side by side, and its stand-ins and its socket answer meanwhile. `timeoutMs` kills it.
 */
export function runCommand(
  command: string,
  args: readonly string[],
  o: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs?: number } = {},
): Promise<CommandResult> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const out: Buffer[] = [];
    const child = spawn(command, [...args], { stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? process.env, cwd: o.cwd });
    running.add(child);
    const timer = o.timeoutMs ? setTimeout(() => child.kill('SIGKILL'), o.timeoutMs) : undefined;
    child.stdout.on('data', (c: Buffer) => (chunks.push(c), out.push(c)));
    child.stderr.on('data', (c: Buffer) => chunks.push(c));
    const end = (code: number, extra = '') => {
      clearTimeout(timer);
      running.delete(child);
      resolve({ code, output: Buffer.concat(chunks).toString() + extra, stdout: Buffer.concat(out).toString() });
    };
    child.once('error', (e) => end(-1, e.message));
    child.once('close', (code) => end(code ?? -1));
  });
}

/**
 * Runs a command to its end, blocking — for set-up steps nothing waits beside (an image's layout, a package's file
 * list) — and answers its stdout; when it fails, the error names `what`, the command line and what it printed.
 */
export function runSync(
  what: string,
  command: string,
  args: readonly string[],
  o: { readonly env?: NodeJS.ProcessEnv; readonly cwd?: string; readonly timeoutMs?: number } = {},
): string {
  const r = spawnSync(command, args, { encoding: 'utf8', cwd: o.cwd, env: o.env, timeout: o.timeoutMs, maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0)
    throw new Error(`${what} failed: ${command} ${args.join(' ')}:\n${r.error?.message ?? ''}${r.stdout ?? ''}${r.stderr ?? ''}`);
  return r.stdout;
}
