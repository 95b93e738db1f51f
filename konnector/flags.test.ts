import { describe, expect, it } from 'vitest';
import { HELP, parseDuration, parseFlags } from './flags';

describe('parseFlags', () => {
  it('defaults as Klutch: lease klutch-bind in $POD_NAMESPACE, identity $POD_NAME, probes on :8080', () => {
    expect(parseFlags([], { POD_NAMESPACE: 'klutch-bind', POD_NAME: 'konnector-abc' })).toMatchObject({
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
    expect(parseFlags([], {})).toMatchObject({ leaseNamespace: 'kube-system', identity: 'konnector' });
  });

  it('has no client-side rate limit unless --kube-api-qps asks for one; the burst defaults to twice the qps', () => {
    expect((parseFlags([]) as { rateLimit?: unknown }).rateLimit).toBeUndefined();
    expect(parseFlags(['--kube-api-qps=5'])).toMatchObject({ rateLimit: { qps: 5, burst: 10 } });
    expect(parseFlags(['--kube-api-qps=0.5', '--kube-api-burst=3'])).toMatchObject({ rateLimit: { qps: 0.5, burst: 3 } });
  });

  it.each([
    [['--workers=0'], '--workers "0": want a positive integer'],
    [['--lease-duration=soon'], '--lease-duration "soon": not a duration'],
    [['--leader-elect=yes'], '--leader-elect "yes": want true or false'],
    [['--nope'], "Unknown option '--nope'"],
    [['--kube-api-qps=fast'], '--kube-api-qps "fast": want a number of requests per second, 0 for no limit'],
    [['--kube-api-qps=-1'], '--kube-api-qps "-1": want a number'],
    [['--kube-api-burst=10'], '--kube-api-burst: only with --kube-api-qps above 0'],
    [['--kube-api-qps=5', '--kube-api-burst=0'], '--kube-api-burst "0": want a positive integer'],
  ])('refuses %j naming the flag', (argv, message) => {
    expect(() => parseFlags(argv)).toThrow(message);
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
      'help',
      'version',
    ];
    for (const f of flags) expect(HELP, f).toContain(`--${f}`);
    expect(parseFlags(['-h'])).toBe('help');
  });

  it.each([
    ['2m30s', 150_000],
    ['500ms', 500],
    ['1h', 3_600_000],
  ])('reads the duration %s', (text, ms) => expect(parseDuration('x', text)).toBe(ms));
});
