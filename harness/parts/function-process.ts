/** A RunFunction client and a process running the bundled function, for the server test, the render tests and the bench. */
import { spawn, type ChildProcess } from 'node:child_process';
import { createInterface } from 'node:readline';
import * as grpc from '@grpc/grpc-js';
import { FunctionRunnerServiceService, type RunFunctionRequest, type RunFunctionResponse } from '@crossplane-org/function-sdk-typescript';

export interface FunctionClient {
  run(req: RunFunctionRequest): Promise<RunFunctionResponse>;
  close(): void;
}

const Client = grpc.makeGenericClientConstructor(FunctionRunnerServiceService, 'FunctionRunnerService');

/** A client for `host:port`; insecure (the function started with --insecure) unless credentials are given. */
export function functionClient(
  address: string,
  credentials: grpc.ChannelCredentials = grpc.credentials.createInsecure(),
  options: grpc.ClientOptions = {},
): FunctionClient {
  const c = new Client(address, credentials, options) as unknown as grpc.Client & {
    runFunction(req: RunFunctionRequest, cb: (e: grpc.ServiceError | null, r: RunFunctionResponse) => void): void;
  };
  return {
    run: (req) => new Promise((resolve, reject) => c.runFunction(req, (e, r) => (e ? reject(e) : resolve(r)))),
    close: () => c.close(),
  };
}

export interface FunctionProcess {
  readonly child: ChildProcess;
  /** The gRPC port the process bound. */
  readonly port: number;
  readonly metricsPort?: number;
  /** Every JSON log line so far. */
  readonly logs: Record<string, unknown>[];
  /** SIGTERM, and the exit code. */
  stop(): Promise<number | null>;
}

export interface FunctionProcessOptions {
  /** Without `--insecure` when false. @default true */
  readonly insecure?: boolean;
  readonly env?: NodeJS.ProcessEnv;
  /** The Node binary. @default this process's */
  readonly node?: string;
  /** Node and V8 flags before the bundle (the image's, synth/deployables.ts). */
  readonly nodeOptions?: readonly string[];
  /** Pins the process to these CPUs (`taskset -c`), for benches. */
  readonly cpus?: string;
}

/**
 * Runs `node <bundle> --insecure --address 127.0.0.1:0 ...` (without `--insecure` when `insecure` is false) and
 * waits until it logs its ports.
 */
export function startFunctionProcess(
  bundle: string,
  args: readonly string[] = ['--metrics-address', '127.0.0.1:0'],
  o: FunctionProcessOptions = {},
): Promise<FunctionProcess> {
  const flags = [...(o.insecure === false ? [] : ['--insecure']), '--address', '127.0.0.1:0', ...args];
  const argv = [...(o.nodeOptions ?? []), bundle, ...flags];
  const node = o.node ?? process.execPath;
  // taskset execs the program: the child's pid is the function's.
  const child = o.cpus
    ? spawn('taskset', ['-c', o.cpus, node, ...argv], { stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? process.env })
    : spawn(node, argv, { stdio: ['ignore', 'pipe', 'pipe'], env: o.env ?? process.env });
  const logs: Record<string, unknown>[] = [];
  let stderr = '';
  child.stderr?.on('data', (d) => (stderr += String(d)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    let port: number | undefined;
    let metricsPort: number | undefined;
    const wantMetrics = args.includes('--metrics-address') && args[args.indexOf('--metrics-address') + 1] !== '';
    const timer = setTimeout(() => reject(new Error(`function process did not start in 20s: ${stderr}`)), 20_000);
    const done = () => {
      clearTimeout(timer);
      resolve({
        child,
        port: port as number,
        metricsPort,
        logs,
        stop: () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          return exited;
        },
      });
    };
    void exited.then((code) => reject(new Error(`function process exited with ${code}: ${stderr}`)));
    createInterface({ input: child.stdout as NodeJS.ReadableStream }).on('line', (line) => {
      try {
        const l = JSON.parse(line) as Record<string, unknown>;
        logs.push(l);
        if (l.msg === 'serving RunFunction') port = l.port as number;
        if (l.msg === 'serving /healthz and /metrics') metricsPort = l.port as number;
        if (port !== undefined && (!wantMetrics || metricsPort !== undefined)) done();
      } catch {
        // not a log line
      }
    });
  });
}
