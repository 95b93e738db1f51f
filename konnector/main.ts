/**
 * The konnector's process: flags, JSON logs, probes and metrics, leader election, graceful shutdown. What
 * dist/konnector/konnector.mjs runs (synth/deployables.ts bundles it).
 */
import { hostname } from 'node:os';
import { KubeConfig } from '@kubernetes/client-node';
import { newLogger } from '../lib/log';
import { collectDefaultMetrics, Registry } from 'prom-client';
import { LeaderElector, onShutdown, serveProbes } from '../controller';
import { followAppCluster } from './app-cluster';
import { UsageError } from '../lib/flags';
import { messageOf } from '../lib/kube-errors';
import { KONNECTOR_HELP, parseKonnectorFlags, type KonnectorFlags } from './flags';
import { KonnectorRuntime } from './konnector';
import { KONNECTOR_VERSION } from './version';
import { setUserAgent } from '../lib/user-agent';

async function main(): Promise<void> {
  setUserAgent('klutch-konnector');
  let flags: KonnectorFlags | 'help' | 'version';
  try {
    flags = parseKonnectorFlags(process.argv.slice(2), process.env, hostname());
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`konnector: ${e.message}\nRun with --help for the flags.\n`);
    process.exit(2);
  }
  if (flags === 'help') return void process.stdout.write(KONNECTOR_HELP);
  if (flags === 'version') return void process.stdout.write(`${KONNECTOR_VERSION}\n`);
  const f = flags;
  const log = newLogger({ level: f.logLevel, base: { component: 'konnector', identity: f.identity } });
  for (const m of f.mapped) log.warn(m, `${m.flag} (Klutch's form) became ${m.became}; prefer ${m.prefer}`);
  const kc = new KubeConfig();
  try {
    if (f.kubeconfig) kc.loadFromFile(f.kubeconfig);
    else kc.loadFromDefault();
    if (!kc.getCurrentCluster()) throw new Error('it names no current cluster');
  } catch (e) {
    log.fatal(
      { kubeconfig: f.kubeconfig ?? '(default)' },
      f.controlPlane
        ? `cannot load the control plane's kubeconfig: ${messageOf(e)}; pass --kubeconfig or run in a Pod`
        : `cannot load the app cluster's kubeconfig: ${messageOf(e)}; pass --kubeconfig`,
    );
    process.exit(1);
  }
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const shutdown = onShutdown((signal) => log.info({ signal }, 'shutting down: finishing the work in flight'));
  let current: KonnectorRuntime | undefined;
  // Control-plane mode: `kc` is the control plane's; the app cluster's comes from a Secret there (app-cluster.ts).
  const appCluster: { problem?: string } = {};
  let elector: LeaderElector | undefined;
  const probes = await serveProbes({
    address: f.probeAddress,
    registry,
    // A standby replica is ready: it has nothing to sync until it leads.
    ready: {
      informers: () => !current || current.hasSynced() || 'the leader has not listed the app cluster yet',
      // Informers that listed once stay "synced" while the API server is gone; the Lease requests every retry period
      // notice. Not ready then, so a Service or rollout stops counting on this replica until it answers again.
      apiServer: () => {
        const silent = elector?.silentForMs() ?? 0;
        return silent < f.renewDeadlineMs || `the API server has not answered for ${Math.round(silent / 1000)}s`;
      },
      ...(f.controlPlane ? { appCluster: () => !appCluster.problem || appCluster.problem } : {}),
    },
  });
  log.info({ address: f.probeAddress, port: probes.port, version: KONNECTOR_VERSION }, 'serving /healthz, /readyz and /metrics');
  const sync = async (app: KubeConfig, signal: AbortSignal) => {
    current = new KonnectorRuntime({
      kc: app,
      ...(f.controlPlane ? { home: kc } : {}),
      log,
      registry,
      version: KONNECTOR_VERSION,
      bindingNamespace: f.bindingNamespace,
      workers: f.workers,
      heartbeatIntervalMs: f.heartbeatIntervalMs,
      connections: f.connections,
      ...(f.rateLimit ? { rateLimit: f.rateLimit } : {}),
    });
    try {
      await current.run(signal);
    } finally {
      current = undefined;
    }
  };
  const cp = f.controlPlane;
  const lead = (signal: AbortSignal) =>
    cp ? followAppCluster({ home: kc, secret: cp, log, run: sync, state: appCluster }, signal) : sync(kc, signal);
  try {
    if (f.leaderElect) {
      elector = new LeaderElector({
        kc,
        namespace: f.leaseNamespace,
        name: f.leaseName,
        identity: f.identity,
        leaseDurationMs: f.leaseDurationMs,
        renewDeadlineMs: f.renewDeadlineMs,
        retryPeriodMs: f.retryPeriodMs,
        onStartedLeading: lead,
        log,
        registry,
      });
      await elector.run(shutdown.signal);
    } else await lead(shutdown.signal);
  } finally {
    await probes.close();
  }
  log.info('shut down');
}

main().then(
  () => process.exit(0),
  (e: unknown) => {
    console.error(e);
    process.exit(1);
  },
);
