/**
 * The konnector's command line: Klutch's flags (`--kubeconfig`, `--lease-name`, `--lease-namespace`, identity from
 * `$POD_NAME`, klog's `-v`, and its control-plane mode's `--control-plane-mode`, `--app-cluster-kubeconfig-secret-*`,
 * `--binding-root-namespace`) and ours; no flag of Klutch's is ignored. One table (`KONNECTOR_FLAGS`, lib/flags.ts)
 * writes `--help` and is checked against docs/konnector.md.
 */
import { podNamespace, type RateLimit } from '../controller';
import { KONNECTOR_PROBE_PORT } from '../lib/konnector-runtime';
import {
  countFlag,
  durationFlag,
  flagDefault,
  flagHelp,
  HELP_FLAG,
  logLevelFlag,
  parseFlags,
  switchFlag,
  UsageError,
  type FlagTable,
  type MappedFlag,
} from '../lib/flags';

export interface KonnectorFlags {
  /** Kubeconfig of the app cluster; empty: in-cluster, else $KUBECONFIG, else ~/.kube/config. */
  readonly kubeconfig?: string;
  /** Only APIServiceBindings of this namespace; empty: all namespaces. */
  readonly bindingNamespace?: string;
  readonly leaderElect: boolean;
  readonly leaseName: string;
  readonly leaseNamespace: string;
  readonly identity: string;
  readonly leaseDurationMs: number;
  readonly renewDeadlineMs: number;
  readonly retryPeriodMs: number;
  readonly probeAddress: string;
  readonly workers: number;
  readonly heartbeatIntervalMs: number;
  readonly connections: number;
  /** Client-side request limit per cluster; undefined: none. */
  readonly rateLimit?: RateLimit;
  /**
   * Klutch's control-plane mode: the konnector runs on the control plane (`kubeconfig` is the control plane's), reads
   * the app cluster's kubeconfig from this Secret there, and serves the APIServiceBindings of `bindingNamespace` (the
   * binding root namespace). Undefined: the konnector runs in the app cluster.
   */
  readonly controlPlane?: { readonly secretName: string; readonly secretNamespace: string; readonly secretKey: string };
  readonly logLevel: string;
  /** Flags given in Klutch's form and what they became, for the log. */
  readonly mapped: readonly MappedFlag[];
}

/** The konnector's flag table (lib/flags.ts): parsed, --help, and checked against the table of docs/konnector.md. */
export const KONNECTOR_FLAGS: FlagTable = {
  flags: [
    {
      name: 'kubeconfig',
      arg: 'PATH',
      default: 'in-cluster, else $KUBECONFIG, else ~/.kube/config',
      help: 'kubeconfig of the app cluster (the control plane with --control-plane-mode)',
    },
    {
      name: 'binding-namespace',
      arg: 'NS',
      default: 'all namespaces',
      help: 'serve only the APIServiceBindings of this namespace (several konnectors can share a cluster)',
    },
    { name: 'leader-elect', arg: 'BOOL', default: 'true', help: 'elect a leader on a Lease; only the leader syncs' },
    { name: 'lease-name', arg: 'NAME', default: 'klutch-bind', help: 'the Lease' },
    {
      name: 'lease-namespace',
      arg: 'NS',
      default: "$POD_NAMESPACE, else the Pod's (its ServiceAccount's namespace file), else kube-system",
      help: 'where the Lease lives',
    },
    { name: 'identity', arg: 'NAME', default: '$POD_NAME, else the host name', help: 'this replica in the election' },
    { name: 'lease-duration', arg: 'DURATION', default: '15s', help: "how long a lease lasts without renewal (client-go's)" },
    { name: 'renew-deadline', arg: 'DURATION', default: '10s', help: 'a leader that cannot renew within this stops leading' },
    { name: 'retry-period', arg: 'DURATION', default: '2s', help: 'how often candidates try and leaders renew' },
    {
      name: 'probe-address',
      arg: 'HOST:PORT',
      default: `:${KONNECTOR_PROBE_PORT}`,
      help: '/healthz, /readyz (informers listed; with leader election, the API server answered within --renew-deadline) and Prometheus /metrics',
    },
    { name: 'workers', arg: 'N', default: '16', help: 'objects synced at once per direction and API' },
    {
      name: 'heartbeat-interval',
      arg: 'DURATION',
      default: '2m30s',
      help: "heartbeat into the ClusterBinding and kubeconfig copy period (Klutch's); it reports twice this as heartbeatInterval",
    },
    { name: 'connections', arg: 'N', default: '32', help: 'keep-alive HTTP connections per cluster' },
    {
      name: 'kube-api-qps',
      arg: 'N',
      default: '0',
      help: "requests per second to each cluster (app cluster and every provider), as client-go's limiter, for every read and write the syncers make (not the informers' lists and watches); 0: no client-side limit, the API servers' priority and fairness decide. Klutch's konnector is held to client-go's 5",
    },
    { name: 'kube-api-burst', arg: 'N', default: 'twice the qps', help: 'requests at once under --kube-api-qps' },
    { name: 'log-level', arg: 'LEVEL', default: 'info', help: 'fatal, error, warn, info, debug or trace; logs are JSON (pino)' },
    {
      name: 'v',
      short: 'v',
      arg: 'N',
      optional: true,
      help: "klog's verbosity (Klutch's): 0-3 becomes --log-level=info, 4-5 debug, 6 or more trace; not with --log-level; prefer --log-level",
    },
    {
      name: 'control-plane-mode',
      boolean: true,
      default: 'false',
      help: "Klutch's control-plane mode (an AppClusterBinding's konnector): run on the control plane; --kubeconfig (or in-cluster) is the control plane's, the app cluster's kubeconfig comes from the Secret below (and is followed when it changes), and the APIServiceBindings, their kubeconfig Secrets and the Lease are in the binding root namespace there",
    },
    {
      name: 'app-cluster-kubeconfig-secret-name',
      arg: 'NAME',
      default: 'required with --control-plane-mode',
      help: "the Secret holding the app cluster's kubeconfig",
    },
    {
      name: 'app-cluster-kubeconfig-secret-namespace',
      arg: 'NS',
      default: '--binding-root-namespace',
      help: 'with --control-plane-mode: its namespace',
    },
    { name: 'app-cluster-kubeconfig-secret-key', arg: 'KEY', default: 'kubeconfig', help: 'with --control-plane-mode: its key' },
    {
      name: 'binding-root-namespace',
      arg: 'NS',
      default: 'required with --control-plane-mode',
      help: 'where the APIServiceBindings are (replaces --binding-namespace)',
    },
    { name: 'version', boolean: true, optional: true, help: 'the version it reports in heartbeats' },
  ],
};

export const KONNECTOR_HELP = `konnector: syncs bound APIs between an app cluster and a Klutch-style control plane.

Claims go up (spec), status and claimed Secrets/ConfigMaps come down, per APIServiceBinding
(klutch.anynines.com/v1alpha1). Runs as a Deployment in the app cluster; only the leader syncs.

Usage: node konnector.mjs [flags]

Flags:
${flagHelp(KONNECTOR_FLAGS)}
${HELP_FLAG}

Durations are Go-style: 500ms, 15s, 2m30s, 1h.
SIGTERM or SIGINT: stop syncing new changes, finish the ones in flight, release the Lease, exit 0.
`;

/** The table's default of a flag whose default is a value (not a description such as "all namespaces"). */
const tableDefault = (name: string): string => flagDefault(KONNECTOR_FLAGS, name);

/** `--kube-api-qps` and `--kube-api-burst`: no limit unless a qps is given. */
function rateLimitFlags(qpsText: string | undefined, burstText: string | undefined): { rateLimit?: RateLimit } {
  const qps = Number(qpsText ?? '0');
  if (!Number.isFinite(qps) || qps < 0)
    throw new UsageError(`--kube-api-qps: "${qpsText}" is not a number of requests per second (0: no limit)`);
  if (qps === 0) {
    if (burstText !== undefined) throw new UsageError('--kube-api-burst: only with --kube-api-qps above 0');
    return {};
  }
  const burst = burstText === undefined ? Math.max(1, Math.ceil(qps * 2)) : countFlag('kube-api-burst', burstText);
  return { rateLimit: { qps, burst } };
}

/** Klutch's konnector flags of its control-plane mode. */
const CONTROL_PLANE_FLAGS = [
  'control-plane-mode',
  'app-cluster-kubeconfig-secret-name',
  'app-cluster-kubeconfig-secret-namespace',
  'app-cluster-kubeconfig-secret-key',
  'binding-root-namespace',
] as const;

export function parseKonnectorFlags(
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  hostname = 'konnector',
): KonnectorFlags | 'help' | 'version' {
  const parsed = parseFlags(KONNECTOR_FLAGS, argv);
  const values = Object.fromEntries(
    KONNECTOR_FLAGS.flags.map((f) => [f.name, f.boolean ? parsed.value(f.name) === 'true' : parsed.value(f.name)]),
  ) as Record<string, string | undefined> & Record<'control-plane-mode' | 'version', boolean>;
  if (parsed.help) return 'help';
  // A default is written once, in the table (and so in --help and the manual).
  const or = (name: string): string => values[name] ?? tableDefault(name);
  if (values.version) return 'version';
  const controlPlane = controlPlaneFlags(values as Record<string, string | boolean | undefined>);
  const mapped: MappedFlag[] = [];
  const level = logLevelFlag(values['log-level'], values.v, mapped, tableDefault('log-level'));
  const flags: KonnectorFlags = {
    kubeconfig: values.kubeconfig || undefined,
    bindingNamespace: controlPlane?.root ?? (values['binding-namespace'] || undefined),
    leaderElect: switchFlag('leader-elect', or('leader-elect')),
    leaseName: or('lease-name'),
    leaseNamespace: values['lease-namespace'] ?? podNamespace(env) ?? 'kube-system',
    identity: values.identity ?? env.POD_NAME ?? hostname,
    leaseDurationMs: durationFlag('lease-duration', or('lease-duration')),
    renewDeadlineMs: durationFlag('renew-deadline', or('renew-deadline')),
    retryPeriodMs: durationFlag('retry-period', or('retry-period')),
    probeAddress: or('probe-address'),
    workers: countFlag('workers', or('workers')),
    heartbeatIntervalMs: durationFlag('heartbeat-interval', or('heartbeat-interval')),
    connections: countFlag('connections', or('connections')),
    ...rateLimitFlags(values['kube-api-qps'], values['kube-api-burst']),
    ...(controlPlane ? { controlPlane: controlPlane.secret } : {}),
    logLevel: level,
    mapped,
  };
  if (flags.heartbeatIntervalMs < 1000) throw new UsageError(`--heartbeat-interval: "${or('heartbeat-interval')}" is less than 1s`);
  return flags;
}

/** The control-plane-mode flags: all or nothing, each required one named when missing. */
function controlPlaneFlags(
  v: Record<string, string | boolean | undefined>,
): { root: string; secret: NonNullable<KonnectorFlags['controlPlane']> } | undefined {
  const str = (f: string) => (typeof v[f] === 'string' && v[f] !== '' ? (v[f] as string) : undefined);
  if (!v['control-plane-mode']) {
    const given = CONTROL_PLANE_FLAGS.filter((f) => f !== 'control-plane-mode' && v[f] !== undefined);
    if (given.length)
      throw new UsageError(
        `--${given[0]}: only with --control-plane-mode (the konnector on the control plane for an AppClusterBinding); drop it, or add --control-plane-mode`,
      );
    return undefined;
  }
  const root = str('binding-root-namespace');
  const name = str('app-cluster-kubeconfig-secret-name');
  if (!root)
    throw new UsageError(
      "--control-plane-mode needs --binding-root-namespace: the namespace on the control plane holding the APIServiceBindings (the AppClusterBinding's status.rootNamespace)",
    );
  if (!name)
    throw new UsageError(
      "--control-plane-mode needs --app-cluster-kubeconfig-secret-name: the Secret holding the app cluster's kubeconfig",
    );
  if (v['binding-namespace'] !== undefined && v['binding-namespace'] !== root)
    throw new UsageError('--binding-namespace and --binding-root-namespace: in control-plane mode give --binding-root-namespace alone');
  return {
    root,
    secret: {
      secretName: name,
      secretNamespace: str('app-cluster-kubeconfig-secret-namespace') ?? root,
      secretKey: str('app-cluster-kubeconfig-secret-key') ?? tableDefault('app-cluster-kubeconfig-secret-key'),
    },
  };
}
