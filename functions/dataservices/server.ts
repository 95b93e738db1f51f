/**
 * The function's process: the SDK's FunctionRunner (a handler's throw becomes a Fatal result) behind the gRPC server of
 * grpc-server.ts with TLS as Crossplane's package manager sets it up, pino JSON logs, `/healthz` and prom-client
 * `/metrics`, and a clean shutdown on SIGTERM.
 *
 * Not the SDK's `serve()`: it reads `--tls-server-certs-dir` but not the spec's `--tls-certs-dir` or
 * `TLS_SERVER_CERTS_DIR`, and it falls back to an insecure server when the directory is missing. Here a missing
 * certificate is an error unless `--insecure` is given.
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  FunctionRunner,
  FunctionRunnerServiceService,
  Severity,
  type FunctionHandler,
  type RunFunctionRequest,
} from '@crossplane-org/function-sdk-typescript';
import type { Logger } from 'pino';
import { newLogger } from '../../lib/log';
import { Counter, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import { authorities, clientCertificateCheck } from './client-certificate';
import { decodeRequest, encodeResponse } from './codec';
import { dataServicesFunction } from './fn';
import { GrpcError, GrpcStatus, newGrpcServer } from './grpc-server';
import { addressFlag, flagHelp, HELP_FLAG, parseFlags, UsageError, VERSION_FLAG, type FlagTable } from '../../lib/flags';
import { VERSION } from '../../lib/version';
import { serveProbes, type Probes } from '../../lib/probes';

const DEFAULT_ADDRESS = '0.0.0.0:9443';
const DEFAULT_METRICS_ADDRESS = '0.0.0.0:8080';
export const DEFAULT_TLS_CERTS_DIR = '/tls/server';

export interface FunctionServerOptions {
  /** gRPC listen address, `host:port` (`:9443` means every interface). @default 0.0.0.0:9443 */
  readonly address: string;
  /** Serve without TLS; only when asked. @default false */
  readonly insecure: boolean;
  /** Holds tls.key, tls.crt and ca.crt. @default $TLS_SERVER_CERTS_DIR or /tls/server */
  readonly tlsCertsDir: string;
  /** `/healthz` and `/metrics`; empty disables. @default 0.0.0.0:8080 */
  readonly metricsAddress: string;
  readonly debug: boolean;
}

/** The function's flag table (lib/flags.ts): parsed, --help, and checked against the table of docs/function.md. */
export const FUNCTION_FLAGS: FlagTable = {
  flags: [
    { name: 'address', arg: 'host:port', default: DEFAULT_ADDRESS, help: 'gRPC listen address' },
    {
      name: 'tls-certs-dir',
      arg: 'dir',
      env: 'TLS_SERVER_CERTS_DIR',
      default: DEFAULT_TLS_CERTS_DIR,
      help: 'tls.key, tls.crt, ca.crt that Crossplane mounts; missing certificates are an error',
    },
    {
      name: 'tls-server-certs-dir',
      arg: 'dir',
      optional: true,
      help: "the same, under function-sdk-go's name (--tls-certs-dir wins)",
    },
    { name: 'insecure', boolean: true, default: 'false', help: 'serve without TLS (local development and crossplane render only)' },
    {
      name: 'metrics-address',
      arg: 'host:port',
      default: DEFAULT_METRICS_ADDRESS,
      help: '/healthz, /readyz and Prometheus /metrics (requests, errors, latency); empty: none',
    },
    { name: 'debug', short: 'd', boolean: true, default: 'false', help: 'debug logs (JSON, pino)' },
  ],
};

export const FUNCTION_HELP = `Usage: node function.mjs [flags]

The klutch-kit composition function (function-dataservices): composes every data service from the recipe in its input.

Flags:
${flagHelp(FUNCTION_FLAGS)}
${HELP_FLAG}
${VERSION_FLAG}
`;

/** Parses the flags; `env` supplies TLS_SERVER_CERTS_DIR. Throws UsageError on unknown flags. */
export function parseServerArgs(argv: readonly string[], env: NodeJS.ProcessEnv = {}): FunctionServerOptions | 'help' | 'version' {
  const f = parseFlags(FUNCTION_FLAGS, argv, env, { version: true });
  if (f.help) return 'help';
  if (f.version) return 'version';
  return {
    address: f.value('address') ?? DEFAULT_ADDRESS,
    insecure: f.value('insecure') === 'true',
    // The spec's flag, then the SDK's, then the spec's variable.
    tlsCertsDir:
      (f.given('tls-certs-dir') ? undefined : f.value('tls-server-certs-dir')) ?? f.value('tls-certs-dir') ?? DEFAULT_TLS_CERTS_DIR,
    metricsAddress: f.value('metrics-address') ?? DEFAULT_METRICS_ADDRESS,
    debug: f.value('debug') === 'true',
  };
}

export interface ServerTls {
  readonly key: Buffer;
  readonly cert: Buffer;
  readonly ca: Buffer;
}

/**
 * mTLS as function-sdk-go does it: the server's pair, and client certificates required and verified against ca.crt
 * (undefined with --insecure). The handshake only asks for the certificate; the server judges it before the first call
 * (client-certificate.ts says why OpenSSL cannot).
 */
export function serverCredentials(o: Pick<FunctionServerOptions, 'insecure' | 'tlsCertsDir'>): ServerTls | undefined {
  if (o.insecure) return undefined;
  try {
    const read = (f: string) => readFileSync(join(o.tlsCertsDir, f));
    const tls = { key: read('tls.key'), cert: read('tls.crt'), ca: read('ca.crt') };
    authorities(tls.ca);
    return tls;
  } catch (e) {
    throw new Error(
      `cannot load TLS certificates from ${o.tlsCertsDir}: ${(e as Error).message}; mount tls.key, tls.crt and ca.crt there, or pass --insecure for local development`,
      { cause: e },
    );
  }
}

/** RunFunction's bytes through codec.ts and the runner; a request that does not decode ends the call INTERNAL. */
function runFunctionMethod(runner: FunctionRunner, logger: Logger): (request: Uint8Array) => Promise<Uint8Array> {
  return async (bytes) => {
    let req: RunFunctionRequest;
    try {
      req = decodeRequest(bytes);
    } catch (e) {
      throw new GrpcError(GrpcStatus.INTERNAL, `cannot decode RunFunctionRequest: ${(e as Error).message}`, { cause: e });
    }
    return encodeResponse(await runner.RunFunction(req, logger));
  };
}

export interface FunctionMetrics {
  readonly registry: Registry;
  readonly handler: FunctionHandler;
}

/** Wraps a handler with a run counter (by result) and a duration histogram. */
function instrument(handler: FunctionHandler, registry = new Registry()): FunctionMetrics {
  const runs = new Counter({
    name: 'klutch_function_run_function_total',
    help: 'RunFunction calls by outcome.',
    labelNames: ['result'],
    registers: [registry],
  });
  const seconds = new Histogram({
    name: 'klutch_function_run_function_duration_seconds',
    help: 'RunFunction duration.',
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.5],
    registers: [registry],
  });
  return {
    registry,
    handler: {
      async RunFunction(req: RunFunctionRequest, logger?: Logger) {
        const end = seconds.startTimer();
        try {
          const rsp = await handler.RunFunction(req, logger);
          const sev = rsp.results.map((r) => r.severity);
          runs.inc({
            result: sev.includes(Severity.SEVERITY_FATAL) ? 'fatal' : sev.includes(Severity.SEVERITY_WARNING) ? 'warning' : 'ok',
          });
          return rsp;
        } catch (e) {
          runs.inc({ result: 'error' });
          throw e;
        } finally {
          end();
        }
      },
    },
  };
}

export interface RunningFunctionServer {
  /** The bound gRPC port (useful with port 0). */
  readonly port: number;
  /** The bound metrics port, when metrics are served. */
  readonly metricsPort?: number;
  /** Stops accepting calls, finishes running ones (up to `graceMs`), closes metrics. */
  close(graceMs?: number): Promise<void>;
}

/**
 * Starts the gRPC server (and the metrics server) running `fn` (bench/function runs its floor through it); resolves
 * once both listen.
 */
export async function startFunctionServer(
  o: FunctionServerOptions,
  logger: Logger = newLogger({ level: o.debug ? 'debug' : 'info' }),
  fn: FunctionHandler = dataServicesFunction,
): Promise<RunningFunctionServer> {
  const tls = serverCredentials(o);
  const { host, port: wantPort } = addressFlag('address', o.address);
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const { handler } = instrument(fn, registry);
  const server = newGrpcServer({
    methods: { [FunctionRunnerServiceService.runFunction.path]: runFunctionMethod(new FunctionRunner(handler, logger), logger) },
    logger,
    ...(tls ? { tls, authorize: clientCertificateCheck(authorities(tls.ca)) } : {}),
  });
  const port = await server.listen(host, wantPort);
  const target = host.includes(':') ? `[${host}]:${port}` : `${host}:${port}`;
  logger.info({ address: target, port, tls: !o.insecure }, 'serving RunFunction');

  // The listener the backend and the konnector serve their probes on (lib/probes.ts): /healthz, /readyz, /metrics.
  let probes: Probes | undefined;
  if (o.metricsAddress) {
    addressFlag('metrics-address', o.metricsAddress);
    probes = await serveProbes({ address: o.metricsAddress, registry });
    logger.info({ port: probes.port }, 'serving /healthz and /metrics');
  }

  return {
    port,
    metricsPort: probes?.port,
    async close(graceMs = 10_000) {
      await server.close(graceMs);
      await probes?.close();
    },
  };
}

/** The process entrypoint: parse flags, serve, shut down cleanly on SIGTERM/SIGINT. Exit code 2 on bad flags. */
export async function main(argv: readonly string[] = process.argv.slice(2), env: NodeJS.ProcessEnv = process.env): Promise<void> {
  let opts: FunctionServerOptions | 'help' | 'version';
  try {
    opts = parseServerArgs(argv, env);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`function-dataservices: ${e.message}\n\n${FUNCTION_HELP}`);
    process.exit(2);
  }
  if (opts === 'help') return void process.stdout.write(FUNCTION_HELP);
  if (opts === 'version') return void process.stdout.write(`${VERSION}\n`);
  const logger = newLogger({ level: opts.debug ? 'debug' : 'info', base: { function: 'dataservices' } });
  let running: RunningFunctionServer;
  try {
    running = await startFunctionServer(opts, logger);
  } catch (e) {
    logger.fatal({ err: e }, 'cannot start the function server');
    process.exit(1);
  }
  let stopping = false;
  const stop = (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    running.close().then(
      () => {
        logger.info('shut down');
        process.exit(0);
      },
      (e: unknown) => {
        logger.error({ err: e }, 'unclean shutdown');
        process.exit(1);
      },
    );
  };
  process.on('SIGTERM', () => stop('SIGTERM'));
  process.on('SIGINT', () => stop('SIGINT'));
}
