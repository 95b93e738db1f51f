import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { envName, FLAGS, parseOptions, usage } from './options';

const required = [
  '--oidc-issuer-url=https://issuer.example.com',
  '--oidc-issuer-client-id=klutch-bind',
  '--oidc-issuer-client-secret=s',
  '--oidc-callback-url=https://bind.example.com/callback',
  '--cookie-keys-file=/keys',
  '--external-address=https://api.example.com:6443',
];

describe('parseOptions', () => {
  it('applies defaults, and the environment twin of each flag (the flag wins)', () => {
    const o = parseOptions(required, {
      POD_NAMESPACE: 'ns',
      POD_NAME: 'pod-1',
      BACKEND_CONSUMER_SCOPE: 'Cluster',
      BACKEND_PRETTY_NAME: 'env',
    }) as Exclude<ReturnType<typeof parseOptions>, 'help'>;
    expect(o).toMatchObject({
      namespace: 'ns',
      identity: 'pod-1',
      consumerScope: 'Cluster',
      prettyName: 'env',
      tokenLifetimeMs: 3_600_000,
      tokenRefreshBeforeMs: 1_800_000,
      leaderElection: true,
    });
    const flagWins = parseOptions([...required, '--pretty-name=flag'], { BACKEND_PRETTY_NAME: 'env' });
    expect(flagWins).toMatchObject({ prettyName: 'flag' });
    const fromEnv = parseOptions(
      required.filter((a) => !a.startsWith('--oidc-issuer-client-secret')),
      { BACKEND_OIDC_ISSUER_CLIENT_SECRET: 'x' },
    );
    expect(fromEnv).toMatchObject({ oidcClientSecret: 'x' });
  });

  it.each([
    [[], '--oidc-issuer-url (or BACKEND_OIDC_ISSUER_URL) is required'],
    [['--oidc-issuer-url=http://issuer.example.com'], 'must be https (plain http only on a loopback address)'],
    [['--external-address=http://api:6443'], '--external-address: "http://api:6443/" must be https'],
    [['--token-lifetime=5m'], 'less than 10m, the shortest token Kubernetes issues'],
    [['--token-lifetime=1h', '--token-refresh-before=2h'], 'must be more than 0 and less than --token-lifetime'],
    [['--consumer-scope=Global'], '"Global" is not Namespaced or Cluster'],
    [['--tls-cert-file=/c'], '--tls-cert-file and --tls-key-file go together'],
    [['--oidc-callback-url=https://bind.example.com/cb'], 'must end in /callback'],
    [['--oidc-callback-url=http://bind.example.com/callback'], '--oidc-callback-url: "http://bind.example.com/callback" must be https'],
    [['--http-headers-timeout=1m'], '--http-headers-timeout: 1m is longer than --http-request-timeout (30s)'],
    [['--http-max-connections=0'], '--http-max-connections: "0" is not a whole number of 1 or more'],
    [['--login-rate-limit=lots'], '--login-rate-limit: "lots" is not a whole number of 0 or more'],
    [['--listen-address=nonsense'], '--listen-address: "nonsense" is not host:port'],
    [['--nope'], "Unknown option '--nope'"],
  ])('refuses %j, naming the flag', (args, message) => {
    const argv = args.length === 0 ? [] : [...required.filter((r) => !args.some((a) => a.split('=')[0] === r.split('=')[0])), ...args];
    expect(() => parseOptions(argv, {})).toThrow(message);
  });

  it('takes a loopback http callback (development), and has HTTP limits by default', () => {
    const o = parseOptions(
      [...required.filter((r) => !r.startsWith('--oidc-callback-url')), '--oidc-callback-url=http://127.0.0.1:8080/callback'],
      {},
    );
    expect(o).toMatchObject({
      oidcCallbackUrl: 'http://127.0.0.1:8080/callback',
      httpRequestTimeoutMs: 30_000,
      httpHeadersTimeoutMs: 10_000,
      httpKeepAliveTimeoutMs: 5_000,
      httpMaxConnections: 1000,
      loginRateLimit: 30,
      loginRateBurst: 20,
    });
  });

  it('documents every flag and its environment variable in --help', () => {
    const text = usage();
    for (const f of FLAGS) {
      expect(text).toContain(`--${f.name}`);
      expect(text).toContain(envName(f.name));
    }
    expect(parseOptions(['--help'], {})).toBe('help');
  });
});

describe('the README', () => {
  it('documents every flag with its variable and default in "The bind backend"', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', 'README.md'), 'utf8');
    const section = readme.slice(readme.indexOf('## The bind backend'), readme.indexOf('\n## ', readme.indexOf('## The bind backend') + 5));
    for (const f of FLAGS) {
      const row = section.split('\n').find((l) => l.startsWith(`| \`--${f.name}`));
      expect(row, `--${f.name}`).toBeDefined();
      expect(row).toContain(envName(f.name));
      if (f.default) expect(row).toContain(f.default);
    }
  });
});
