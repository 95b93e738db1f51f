import { describe, expect, it } from 'vitest';
import { durationFlag } from '../lib/flags';
import { tenantArgProblems, TENANT_KONNECTOR_ENV, TENANT_KONNECTOR_FLAGS } from '../lib/konnector-tuning';
import { KONNECTOR_RUNTIME_ENV } from '../lib/konnector-runtime';
import { KONNECTOR_HELP, KONNECTOR_FLAGS, parseKonnectorFlags, type KonnectorFlags } from './flags';
import { manual, undocumentedFlags } from '../test/support/docs';
import { describeKlutchFlags, type KlutchFlagCase } from '../test/support/klutch-flags';

describe('parseKonnectorFlags', () => {
  it('defaults as Klutch: lease klutch-bind in $POD_NAMESPACE, identity $POD_NAME, probes on :8080', () => {
    expect(parseKonnectorFlags([], { POD_NAMESPACE: 'klutch-bind', POD_NAME: 'konnector-abc' })).toMatchObject({
      leaseName: 'klutch-bind',
      leaseNamespace: 'klutch-bind',
      identity: 'konnector-abc',
      probeAddress: ':8080',
      leaderElect: true,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 2_000,
      heartbeatIntervalMs: 150_000,
    });
    expect(parseKonnectorFlags([], {})).toMatchObject({ leaseNamespace: 'kube-system', identity: 'konnector' });
  });

  it('has no client-side rate limit unless --kube-api-qps asks for one; the burst defaults to twice the qps', () => {
    expect((parseKonnectorFlags([]) as { rateLimit?: unknown }).rateLimit).toBeUndefined();
    expect(parseKonnectorFlags(['--kube-api-qps=5'])).toMatchObject({ rateLimit: { qps: 5, burst: 10 } });
    expect(parseKonnectorFlags(['--kube-api-qps=0.5', '--kube-api-burst=3'])).toMatchObject({ rateLimit: { qps: 0.5, burst: 3 } });
  });

  it.each([
    [['--workers=0'], '--workers: "0" is not a whole number of 1 or more'],
    [['--lease-duration=soon'], '--lease-duration: "soon" is not a duration'],
    [['--leader-elect=yes'], '--leader-elect: "yes" is not true or false'],
    [['--nope'], "Unknown option '--nope'"],
    [['--kube-api-qps=fast'], '--kube-api-qps: "fast" is not a number of requests per second (0: no limit)'],
    [['--kube-api-qps=-1'], '--kube-api-qps: "-1" is not a number'],
    [['--kube-api-burst=10'], '--kube-api-burst: only with --kube-api-qps above 0'],
    [['--kube-api-qps=5', '--kube-api-burst=0'], '--kube-api-burst: "0" is not a whole number of 1 or more'],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseKonnectorFlags(argv)).toThrow(message);
  });

  it('documents every flag it accepts in --help', () => {
    const flags = [
      'kubeconfig',
      'binding-namespace',
      'leader-elect',
      'lease-name',
      'lease-namespace',
      'identity',
      'lease-duration',
      'renew-deadline',
      'retry-period',
      'probe-address',
      'workers',
      'heartbeat-interval',
      'connections',
      'kube-api-qps',
      'kube-api-burst',
      'log-level',
      'v',
      'control-plane-mode',
      'app-cluster-kubeconfig-secret-name',
      'app-cluster-kubeconfig-secret-namespace',
      'app-cluster-kubeconfig-secret-key',
      'binding-root-namespace',
      'help',
      'version',
    ];
    for (const f of flags) expect(KONNECTOR_HELP, f).toContain(`--${f}`);
    expect(parseKonnectorFlags(['-h'])).toBe('help');
  });

  it('documents every flag with its default in docs/konnector.md', () => {
    expect(undocumentedFlags(manual('konnector'), KONNECTOR_FLAGS)).toEqual([]);
  });

  it.each([
    ['2m30s', 150_000],
    ['500ms', 500],
    ['1h', 3_600_000],
  ])('reads the duration %s', (text, ms) => expect(durationFlag('x', text)).toBe(ms));
});

/** The smallest control-plane-mode command line; each case varies one flag. */
const CP = ['--control-plane-mode', '--binding-root-namespace=klutch-bind-team-a-app', '--app-cluster-kubeconfig-secret-name=app'];
/** Per Klutch flag: accepted (with what it must become) and/or refused (with the message naming it). */
const KLUTCH_KONNECTOR: Record<string, KlutchFlagCase<KonnectorFlags>> = {
  kubeconfig: { accept: [['--kubeconfig=/etc/app.kubeconfig'], { kubeconfig: '/etc/app.kubeconfig' }] },
  'control-plane-mode': {
    accept: [
      CP,
      {
        bindingNamespace: 'klutch-bind-team-a-app',
        controlPlane: { secretName: 'app', secretNamespace: 'klutch-bind-team-a-app', secretKey: 'kubeconfig' },
      },
    ],
    refuse: [['--control-plane-mode'], '--control-plane-mode needs --binding-root-namespace'],
  },
  'app-cluster-kubeconfig-secret-name': {
    accept: [
      [...CP.slice(0, 2), '--app-cluster-kubeconfig-secret-name=other'],
      { controlPlane: expect.objectContaining({ secretName: 'other' }) },
    ],
    refuse: [['--app-cluster-kubeconfig-secret-name=app'], '--app-cluster-kubeconfig-secret-name: only with --control-plane-mode'],
  },
  'app-cluster-kubeconfig-secret-namespace': {
    accept: [
      [...CP, '--app-cluster-kubeconfig-secret-namespace=root'],
      { controlPlane: expect.objectContaining({ secretNamespace: 'root' }) },
    ],
    refuse: [
      ['--app-cluster-kubeconfig-secret-namespace=root'],
      '--app-cluster-kubeconfig-secret-namespace: only with --control-plane-mode',
    ],
  },
  'app-cluster-kubeconfig-secret-key': {
    accept: [[...CP, '--app-cluster-kubeconfig-secret-key=config'], { controlPlane: expect.objectContaining({ secretKey: 'config' }) }],
    refuse: [['--app-cluster-kubeconfig-secret-key=kubeconfig'], '--app-cluster-kubeconfig-secret-key: only with --control-plane-mode'],
  },
  'binding-root-namespace': {
    accept: [[CP[0]!, CP[2]!, '--binding-root-namespace=root'], { bindingNamespace: 'root' }],
    refuse: [['--binding-root-namespace=root'], '--binding-root-namespace: only with --control-plane-mode'],
  },
  'lease-name': { accept: [['--lease-name=konnector-lock'], { leaseName: 'konnector-lock' }] },
  'lease-namespace': { accept: [['--lease-namespace=klutch-bind'], { leaseNamespace: 'klutch-bind' }] },
};

describe("Klutch's konnector flags (test/fixtures/klutch-bind-deploy/flags.txt)", () => {
  describeKlutchFlags({
    sectionPrefix: 'bind/pkg/konnector/',
    atLeast: 6,
    cases: KLUTCH_KONNECTOR,
    parse: (argv) => parseKonnectorFlags(argv, {}),
  });

  it("runs Klutch's Deployment as it is: no arguments, POD_NAME and POD_NAMESPACE", () => {
    expect(parseKonnectorFlags([], { POD_NAME: 'konnector-7d9f-x2', POD_NAMESPACE: 'klutch-bind' })).toMatchObject({
      kubeconfig: undefined,
      leaseName: 'klutch-bind',
      leaseNamespace: 'klutch-bind',
      identity: 'konnector-7d9f-x2',
      probeAddress: ':8080',
      mapped: [],
    });
    expect(parseKonnectorFlags(['--control-plane-mode=false'], {})).toMatchObject({ leaseName: 'klutch-bind' });
    expect(parseKonnectorFlags(['--control-plane-mode=false'], {})).not.toHaveProperty('controlPlane');
  });

  it("runs the konnector Deployment of Klutch's AppClusterBinding controller as it is written", () => {
    const root = 'klutch-bind-default-my-app-cluster';
    const args = [
      '--control-plane-mode',
      '--app-cluster-kubeconfig-secret-name=app-cluster-kubeconfig',
      `--app-cluster-kubeconfig-secret-namespace=${root}`,
      '--app-cluster-kubeconfig-secret-key=kubeconfig',
      `--binding-root-namespace=${root}`,
      `--lease-namespace=${root}`,
    ];
    expect(parseKonnectorFlags(args, { POD_NAME: 'konnector-my-app-cluster-x' })).toMatchObject({
      bindingNamespace: root,
      leaseNamespace: root,
      controlPlane: { secretName: 'app-cluster-kubeconfig', secretNamespace: root, secretKey: 'kubeconfig' },
    });
    expect(() => parseKonnectorFlags([...args, '--binding-namespace=elsewhere'], {})).toThrow('give --binding-root-namespace alone');
    expect(() => parseKonnectorFlags(['--control-plane-mode', `--binding-root-namespace=${root}`], {})).toThrow(
      'needs --app-cluster-kubeconfig-secret-name',
    );
  });

  it.each([
    [['-v', '2'], 'info'],
    [['-v=4'], 'debug'],
    [['-v5'], 'debug'],
    [['--v=6'], 'trace'],
    [['--v', '0'], 'info'],
  ])("maps klog's %j to a log level, and says so", (args, level) => {
    const f = parseKonnectorFlags(args, {}) as KonnectorFlags;
    expect(f.logLevel).toBe(level);
    expect(f.mapped).toEqual([{ flag: expect.stringMatching(/^-v=\d$/), became: `--log-level=${level}`, prefer: '--log-level' }]);
  });

  it.each([
    [['-v=2', '--log-level=debug'], '-v and --log-level: give one'],
    [['-v=loud'], '-v: "loud" is not a klog verbosity'],
    [['--log-level=loud'], '--log-level: "loud" is not fatal, error, warn, info, debug or trace'],
    [['--heartbeat-interval=500ms'], '--heartbeat-interval: "500ms" is less than 1s'],
  ])('refuses %j', (args, message) => expect(() => parseKonnectorFlags(args, {})).toThrow(message));
});

describe('what an AppClusterBinding may tune of its konnector (lib/konnector-tuning.ts)', () => {
  const controlPlane = ['--control-plane-mode', '--app-cluster-kubeconfig-secret-name=s', '--binding-root-namespace=klutch-bind-r'];
  /** One value each flag's check accepts, and one it refuses. */
  const samples: Record<string, [string, string]> = {
    // Each refused value beside the floors and ceilings of a shared control plane, which the konnector itself takes.
    workers: ['4', '1000'],
    connections: ['8', '1000'],
    'kube-api-qps': ['2.5', 'fast'],
    'kube-api-burst': ['10', '0'],
    'heartbeat-interval': ['1m', '10s'],
    'lease-duration': ['30s', '5s'],
    'renew-deadline': ['12s', '1s'],
    'retry-period': ['5s', '10ms'],
    'log-level': ['debug', 'loud'],
    v: ['4', '-1'],
  };

  it('names only flags of KONNECTOR_FLAGS, each sampled here', () => {
    const names = new Set(KONNECTOR_FLAGS.flags.map((f) => f.name));
    expect(Object.keys(TENANT_KONNECTOR_FLAGS).filter((f) => !names.has(f))).toEqual([]);
    expect(Object.keys(samples).sort()).toEqual(Object.keys(TENANT_KONNECTOR_FLAGS).sort());
  });

  it.each(Object.entries(samples))(
    '--%s: what the backend accepts, the konnector parses; what it refuses, it does not pass',
    (flag, [good, bad]) => {
      const arg = (v: string) => (flag === 'v' ? `-v=${v}` : `--${flag}=${v}`);
      const extra = flag === 'kube-api-burst' ? ['--kube-api-qps=5'] : [];
      expect(tenantArgProblems([...extra, arg(good)])).toEqual([]);
      expect(() => parseKonnectorFlags([...controlPlane, ...extra, arg(good)])).not.toThrow();
      expect(tenantArgProblems([...extra, arg(bad)])).not.toEqual([]);
    },
  );

  it('keeps the konnector on its own namespace, Secret, Lease, probe port and trust: none of those flags may be set', () => {
    const fixed = KONNECTOR_FLAGS.flags.map((f) => f.name).filter((f) => !(f in TENANT_KONNECTOR_FLAGS));
    expect(fixed.sort()).toEqual(
      [
        'kubeconfig',
        'binding-namespace',
        'leader-elect',
        'lease-name',
        'lease-namespace',
        'identity',
        'probe-address',
        'control-plane-mode',
        'app-cluster-kubeconfig-secret-name',
        'app-cluster-kubeconfig-secret-namespace',
        'app-cluster-kubeconfig-secret-key',
        'binding-root-namespace',
        'version',
      ].sort(),
    );
  });

  it('lets every runtime variable a konnector Deployment runs with be tuned, with the values it runs with', () => {
    for (const [name, value] of Object.entries(KONNECTOR_RUNTIME_ENV)) expect(TENANT_KONNECTOR_ENV[name]?.(value), name).toBeUndefined();
  });
});
