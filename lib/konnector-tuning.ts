/**
 * What the author of an AppClusterBinding may tune of the konnector the backend runs for it on the control plane
 * (`spec.konnector.overrides`): a few flags and environment variables, each value checked. The konnector runs there as
 * `klutch-binder` of its binding root namespace, beside the app cluster's kubeconfig, so nothing a tenant sets may
 * change what it runs, what it trusts, where it connects or which namespace it serves. Here, not in konnector/,
 * because the backend checks it and may not import the konnector; konnector/flags.test.ts holds each name to
 * KONNECTOR_FLAGS and each accepted value to the konnector's own parser.
 */
import { parseGoDuration } from './duration';

/** A value's problem, or undefined when it is fine. */
type Check = (value: string) => string | undefined;

const count: Check = (v) => (/^[1-9]\d{0,5}$/.test(v) ? undefined : 'is not a whole number from 1 to 999999');
const countUpTo =
  (most: number): Check =>
  (v) =>
    /^[1-9]\d{0,5}$/.test(v) && Number(v) <= most ? undefined : `is not a whole number from 1 to ${most}`;
const duration =
  (minMs = 1): Check =>
  (v) => {
    const ms = parseGoDuration(v);
    return ms === undefined || ms < minMs
      ? `is not a Go duration of ${minMs < 1000 ? 'more than 0' : `${minMs / 1000}s or more`} (15s, 2m30s)`
      : undefined;
  };
const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * The konnector flags a tenant may set: how hard it works (workers, connections, its request rate), how often it
 * reports and elects, how much it logs. Every konnector of the control plane shares its API server and etcd: the
 * connections it holds there and how often it writes its Lease and heartbeat have bounds (a Lease renewed every
 * millisecond is a thousand etcd writes a second); the API server's priority and fairness share out the rest. Not:
 * where it connects or what it trusts (--kubeconfig, the control-plane Secret and namespace flags), whose objects it
 * serves (--binding-namespace, --binding-root-namespace), which Lease it holds (--lease-name, --lease-namespace,
 * --identity, --leader-elect), nor --probe-address (the probes and the NetworkPolicy name its port).
 */
export const TENANT_KONNECTOR_FLAGS: Readonly<Record<string, Check>> = {
  workers: countUpTo(256),
  connections: countUpTo(128),
  'kube-api-qps': (v) => (/^\d{1,6}(\.\d{1,3})?$/.test(v) ? undefined : 'is not a number of requests per second (0: no limit)'),
  'kube-api-burst': count,
  'heartbeat-interval': duration(30_000),
  'lease-duration': duration(10_000),
  'renew-deadline': duration(5_000),
  'retry-period': duration(1_000),
  'log-level': (v) => (LOG_LEVELS.includes(v) ? undefined : `is not ${LOG_LEVELS.join(', ')}`),
  v: (v) => (/^\d{1,2}$/.test(v) ? undefined : "is not klog's verbosity (0-99)"),
};

/** NODE_OPTIONS may hold only V8's heap and thread-pool sizes: any other option could load code (--require, --import). */
const NODE_OPTIONS = ['--max-old-space-size', '--max-semi-space-size', '--v8-pool-size'];

/**
 * The environment variables a tenant may set (as a plain `value`): the node and malloc settings every konnector
 * Deployment runs with (lib/konnector-runtime.ts). Not the Pod's identity (POD_NAME, POD_NAMESPACE), nor anything
 * that changes trust or routing (NODE_TLS_REJECT_UNAUTHORIZED, NODE_EXTRA_CA_CERTS, *_PROXY, KUBECONFIG).
 */
export const TENANT_KONNECTOR_ENV: Readonly<Record<string, Check>> = {
  NODE_OPTIONS: (v) => {
    const bad = v.split(/\s+/).filter((o) => o && !NODE_OPTIONS.some((n) => new RegExp(`^${n}=[1-9]\\d{0,5}$`).test(o)));
    return bad.length ? `holds ${bad.join(' ')}: only ${NODE_OPTIONS.map((n) => `${n}=<n>`).join(', ')}` : undefined;
  },
  MALLOC_ARENA_MAX: count,
  UV_THREADPOOL_SIZE: (v) => (/^[1-9]\d{0,3}$/.test(v) && Number(v) <= 1024 ? undefined : 'is not a whole number from 1 to 1024'),
};

/**
 * The problems of an argument list (empty when every argument is a tenant flag with a good value), each naming its
 * index. Only `--flag=value` (and klog's `-v=N`): a separate value would be read as a flag of its own.
 */
export function tenantArgProblems(args: readonly string[]): string[] {
  const problems: string[] = [];
  const seen = new Set<string>();
  args.forEach((a, i) => {
    const m = /^(--?)([a-z][-a-z]*)=(.*)$/.exec(a);
    const check = m && (m[1] === '--' || m[2] === 'v') ? TENANT_KONNECTOR_FLAGS[m[2]!] : undefined;
    if (!m || !check)
      return void problems.push(
        `args[${i}] "${a}" is not one of ${Object.keys(TENANT_KONNECTOR_FLAGS)
          .map((f) => `--${f}=…`)
          .join(', ')}`,
      );
    const why = check(m[3]!);
    if (why) problems.push(`args[${i}] "${a}": "${m[3]}" ${why}`);
    seen.add(m[2]!);
  });
  // What the konnector would refuse at start: better said here than a crash-looping Pod.
  if (seen.has('v') && seen.has('log-level')) problems.push('args: -v and --log-level: give one');
  if (seen.has('kube-api-burst') && !args.some((a) => /^--kube-api-qps=(?!0+(\.0*)?$)/.test(a)))
    problems.push('args: --kube-api-burst only with --kube-api-qps above 0');
  problems.push(...leaseProblems(args));
  return problems;
}

/** client-go's leader election defaults, the konnector's (konnector/flags.ts): lease, renew deadline, retry period. */
const LEASE_DEFAULTS = { 'lease-duration': '15s', 'renew-deadline': '10s', 'retry-period': '2s' } as const;

/**
 * What client-go's leader election requires of the three (leaseDuration > renewDeadline > 1.2 × retryPeriod): a
 * renew deadline past the lease lets a second konnector lead while the first still does.
 */
function leaseProblems(args: readonly string[]): string[] {
  const given = (name: keyof typeof LEASE_DEFAULTS) =>
    [...args]
      .reverse()
      .find((a) => a.startsWith(`--${name}=`))
      ?.slice(name.length + 3);
  const ms = Object.fromEntries(
    Object.entries(LEASE_DEFAULTS).map(([k, d]) => [k, parseGoDuration(given(k as keyof typeof LEASE_DEFAULTS) ?? d)]),
  ) as Record<keyof typeof LEASE_DEFAULTS, number | undefined>;
  const [lease, renew, retry] = [ms['lease-duration'], ms['renew-deadline'], ms['retry-period']];
  if (lease === undefined || renew === undefined || retry === undefined) return []; // each is refused by its check
  const problems: string[] = [];
  if (lease <= renew)
    problems.push(
      `args: --lease-duration (${given('lease-duration') ?? LEASE_DEFAULTS['lease-duration']}) must be longer than --renew-deadline (${given('renew-deadline') ?? LEASE_DEFAULTS['renew-deadline']})`,
    );
  if (renew <= 1.2 * retry)
    problems.push(
      `args: --renew-deadline (${given('renew-deadline') ?? LEASE_DEFAULTS['renew-deadline']}) must be longer than 1.2 times --retry-period (${given('retry-period') ?? LEASE_DEFAULTS['retry-period']})`,
    );
  return problems;
}
