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

  it.each([
    [['--workers=0'], '--workers "0": want a positive integer'],
    [['--lease-duration=soon'], '--lease-duration "soon": not a duration'],
    [['--leader-elect=yes'], '--leader-elect "yes": want true or false'],
    [['--nope'], "Unknown option '--nope'"],
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
