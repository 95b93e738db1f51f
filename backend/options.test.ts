import { describe, expect, it } from 'vitest';
import { BACKEND_FLAGS, envName, FLAGS, parseOptions, usage, type BackendOptions } from './options';
import { describeKlutchFlags, type KlutchFlagCase } from '../test/support/klutch-flags';
import { manual, undocumentedFlags } from '../test/support/docs';
import { REQUIRED_BACKEND_FLAGS } from '../test/support/backend-flags';

const required = REQUIRED_BACKEND_FLAGS;

describe('parseOptions', () => {
  it('applies defaults, and the environment twin of each flag (the flag wins)', () => {
    const o = parseOptions(required, {
      POD_NAMESPACE: 'ns',
      POD_NAME: 'pod-1',
      BACKEND_CONSUMER_SCOPE: 'Cluster',
      BACKEND_PRETTY_NAME: 'env',
    }) as Exclude<ReturnType<typeof parseOptions>, 'help' | 'version'>;
    expect(o).toMatchObject({
      namespace: 'ns',
      identity: 'pod-1',
      consumerScope: 'Cluster',
      prettyName: 'env',
      tokenLifetimeMs: 3_600_000,
      tokenRefreshBeforeMs: 1_800_000,
      legacyTokenMaxAgeMs: 168 * 3_600_000,
      leaderElection: true,
    });
    expect(parseOptions([...required, '--legacy-token-max-age=10m'], { BACKEND_LEGACY_TOKEN_MAX_AGE: '1h' })).toMatchObject({
      legacyTokenMaxAgeMs: 600_000,
    });
    expect(parseOptions(required, { BACKEND_LEGACY_TOKEN_MAX_AGE: '1h' })).toMatchObject({ legacyTokenMaxAgeMs: 3_600_000 });
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
    [['--legacy-token-max-age=0s'], '--legacy-token-max-age: 0s must be more than 0'],
    [['--legacy-token-max-age=a week'], '--legacy-token-max-age'],
    [['--legacy-token-max-age=5m'], '--legacy-token-max-age: 5m is less than --legacy-token-grace (10m)'],
    [['--legacy-token-grace=2h', '--legacy-token-max-age=1h'], '--legacy-token-max-age: 1h is less than --legacy-token-grace (2h)'],
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

  it('answers --version with the release, before any required flag is asked for', () => {
    expect(parseOptions(['--version'], {})).toBe('version');
    expect(usage()).toContain('--version');
    // Not from the environment: BACKEND_VERSION is no flag's variable, and a Pod's env must not turn the server off.
    expect(() => parseOptions([], { BACKEND_VERSION: 'true' })).toThrow(/--oidc-issuer-url/);
  });
});

const KEY32 = Buffer.alloc(32, 1).toString('base64');
const KEY16 = Buffer.alloc(16, 2).toString('base64');
const without = (...names: string[]) => required.filter((r) => !names.some((n) => r.startsWith(`--${n}=`)));
const parse = (argv: readonly string[]) => parseOptions(argv, {}) as BackendOptions;

/**
 * Per Klutch flag: arguments that are accepted (with what they must become) and/or refused (with the message naming
 * the flag). Arguments replace the required ones of the same name.
 */
const KLUTCH_BACKEND: Record<string, KlutchFlagCase<BackendOptions>> = {
  kubeconfig: { accept: [['--kubeconfig=/etc/kc'], { kubeconfig: '/etc/kc' }] },
  'namespace-prefix': { accept: [['--namespace-prefix=mango'], { namespacePrefix: 'mango' }] },
  'pretty-name': { accept: [['--pretty-name=MangoDB'], { prettyName: 'MangoDB' }] },
  'consumer-scope': {
    accept: [['--consumer-scope=cluster'], { consumerScope: 'Cluster' }],
    refuse: [['--consumer-scope=Global'], '--consumer-scope: "Global"'],
  },
  'cluster-scoped-isolation': {
    accept: [['--cluster-scoped-isolation=prefixed'], { clusterScopedIsolation: 'Prefixed' }],
    refuse: [['--cluster-scoped-isolation=namespaced'], '--cluster-scoped-isolation: "namespaced" is not supported'],
  },
  'external-address': { accept: [['--external-address=https://api.mangodb.de'], { externalAddress: 'https://api.mangodb.de' }] },
  'external-ca-file': { accept: [['--external-ca-file=/etc/tls/ca.crt'], { externalCaFile: '/etc/tls/ca.crt' }] },
  'external-server-name': { accept: [['--external-server-name=api.internal'], { externalServerName: 'api.internal' }] },
  'testing-auto-select': {
    refuse: [
      ['--testing-auto-select=postgresqlinstances.anynines.com'],
      '--testing-auto-select: "postgresqlinstances.anynines.com" is not supported',
    ],
  },
  'control-plane-mode': {
    accept: [
      [
        '--oidc-issuer-url=',
        '--oidc-issuer-client-id=',
        '--oidc-issuer-client-secret=',
        '--oidc-callback-url=',
        '--cookie-keys-file=',
        '--control-plane-mode',
      ],
      { controlPlaneMode: true, oidcIssuerUrl: '', oidcCallbackUrl: '' },
    ],
    refuse: [['--control-plane-mode'], '--oidc-issuer-url (or BACKEND_OIDC_ISSUER_URL): has no meaning with --control-plane-mode'],
  },
  'oidc-issuer-client-id': { accept: [['--oidc-issuer-client-id=kube-bind'], { oidcClientId: 'kube-bind' }] },
  'oidc-issuer-client-secret': { accept: [['--oidc-issuer-client-secret=t0p'], { oidcClientSecret: 't0p' }] },
  'oidc-issuer-url': { accept: [['--oidc-issuer-url=https://mangodb.de/dex'], { oidcIssuerUrl: 'https://mangodb.de/dex' }] },
  'oidc-callback-url': {
    accept: [['--oidc-callback-url=https://mangodb.de/callback'], { oidcCallbackUrl: 'https://mangodb.de/callback' }],
  },
  'oidc-authorize-url': {
    accept: [['--oidc-authorize-url=https://bind.example.com/authorize'], { oidcCallbackUrl: 'https://bind.example.com/callback' }],
    refuse: [
      ['--oidc-authorize-url=https://elsewhere.example.com/authorize'],
      '--oidc-authorize-url: "https://elsewhere.example.com/authorize" is not https://bind.example.com/authorize',
    ],
  },
  'cookie-signing-key': {
    accept: [['--cookie-keys-file=', `--cookie-signing-key=${KEY32}`], { klutchCookieKeys: { signing: Buffer.from(KEY32, 'base64') } }],
    refuse: [
      ['--cookie-keys-file=', `--cookie-signing-key=${Buffer.alloc(31).toString('base64')}`],
      '--cookie-signing-key: is not base64 of 32 or 64 bytes',
    ],
  },
  'cookie-encryption-key': {
    accept: [
      ['--cookie-keys-file=', `--cookie-signing-key=${KEY32}`, `--cookie-encryption-key=${KEY16}`],
      { klutchCookieKeys: { signing: Buffer.from(KEY32, 'base64'), encryption: Buffer.from(KEY16, 'base64') } },
    ],
    refuse: [
      ['--cookie-keys-file=', `--cookie-signing-key=${KEY32}`, `--cookie-encryption-key=${Buffer.alloc(20).toString('base64')}`],
      '--cookie-encryption-key: is not base64 of 16, 24 or 32 bytes',
    ],
  },
  'listen-ip': { accept: [['--listen-ip=127.0.0.1', '--listen-port=9443'], { listenAddress: '127.0.0.1:9443' }] },
  'listen-port': {
    accept: [['--listen-port=9443'], { listenAddress: '0.0.0.0:9443' }],
    refuse: [['--listen-port=http'], '--listen-port: "http" is not a port'],
  },
  'listen-address': { accept: [['--listen-address=0.0.0.0:443'], { listenAddress: '0.0.0.0:443' }] },
  'tls-cert-file': {
    accept: [['--tls-cert-file=/tls/crt', '--tls-key-file=/tls/key'], { tlsCertFile: '/tls/crt', tlsKeyFile: '/tls/key' }],
  },
  'tls-key-file': { refuse: [['--tls-key-file=/tls/key'], '--tls-cert-file and --tls-key-file go together'] },
};

describe("Klutch's example-backend flags (test/fixtures/klutch-bind-deploy/flags.txt)", () => {
  describeKlutchFlags({
    sectionPrefix: 'bind/contrib/example-backend/',
    atLeast: 21,
    cases: KLUTCH_BACKEND,
    parse,
    // An empty `--x=` in a case removes that required flag.
    argv: (args) => [...without(...args.map((a) => a.slice(2).split('=')[0]!)), ...args.filter((a) => !/^--[a-z-]+=$/.test(a))],
  });

  it("takes Klutch's lower-case and capitalised scopes alike", () => {
    for (const [v, scope] of [
      ['namespaced', 'Namespaced'],
      ['Namespaced', 'Namespaced'],
      ['cluster', 'Cluster'],
      ['Cluster', 'Cluster'],
    ]) {
      expect(parse([...required, `--consumer-scope=${v}`]).consumerScope).toBe(scope);
    }
  });

  it("logs what a flag in Klutch's form became and what to prefer", () => {
    const o = parse([...without('cookie-keys-file', 'listen-address'), `--cookie-signing-key=${KEY32}`, '--listen-port=443', '-v', '2']);
    expect(o.mapped).toEqual([
      expect.objectContaining({
        flag: '--cookie-signing-key',
        prefer: expect.stringContaining('--cookie-keys-file from a mounted Secret'),
      }),
      { flag: '--listen-port', became: '--listen-address=0.0.0.0:443', prefer: '--listen-address' },
      { flag: '-v=2', became: '--log-level=info', prefer: '--log-level' },
    ]);
    expect(parse(required).mapped).toEqual([]);
  });

  it("runs Klutch's control-plane-mode arguments as they are (no OIDC or cookie flags), and refuses web flags with them", () => {
    const argv = ['--namespace-prefix=cluster', '--pretty-name=MangoDB', '--consumer-scope=Namespaced', '--control-plane-mode'];
    expect(parse(argv)).toMatchObject({
      controlPlaneMode: true,
      namespacePrefix: 'cluster',
      prettyName: 'MangoDB',
      oidcIssuerUrl: '',
      konnectorImage: 'ghcr.io/klutch-kit/konnector:v0.1.0',
    });
    expect(parse(argv)).not.toHaveProperty('cookieKeysFile');
    expect(() => parse([...argv, '--listen-address=0.0.0.0:8443'])).toThrow('--listen-address (or BACKEND_LISTEN_ADDRESS): has no meaning');
    expect(() => parseOptions(argv, { BACKEND_COOKIE_KEYS_FILE: '/k' })).toThrow('--cookie-keys-file (or BACKEND_COOKIE_KEYS_FILE)');
    expect(parse([...argv, '--konnector-image=registry.example.com/konnector:v1'])).toMatchObject({
      konnectorImage: 'registry.example.com/konnector:v1',
    });
    expect(parse([...required, '--control-plane-mode=false'])).toMatchObject({ prettyName: 'klutch-kit', controlPlaneMode: false });
    expect(parse([...required, '--leader-election=false'])).toMatchObject({ leaderElection: false });
  });

  it('reads the claims quota of provider namespaces; none by default; refuses what is not a ResourceQuota resource or quantity', () => {
    expect(parse(required).claimQuota).toEqual({});
    expect(
      parse([...required, '--claim-quota=count/postgresqlinstances.anynines.com=5, services.loadbalancers=2,requests.storage=100Gi'])
        .claimQuota,
    ).toEqual({ 'count/postgresqlinstances.anynines.com': '5', 'services.loadbalancers': '2', 'requests.storage': '100Gi' });
    expect(() => parse([...required, '--claim-quota=postgresqlinstances=5'])).toThrow(
      '--claim-quota: "postgresqlinstances" is not a ResourceQuota resource (count/<plural>.<group> for claims',
    );
    expect(() => parse([...required, '--claim-quota=pods=lots'])).toThrow('--claim-quota: pods: "lots" is not a quantity (e.g. 5, 100Gi)');
    expect(() => parse([...required, '--claim-quota=pods'])).toThrow('--claim-quota: "pods" is not resource=n');
  });

  it('reads the proxies whose X-Forwarded-For the login limit believes; none by default; refuses a malformed one', () => {
    expect(parse(required).loginRateTrustedProxies.cidrs).toEqual([]);
    const p = parse([...required, '--login-rate-trusted-proxies=10.0.0.0/8, fd00::/8']).loginRateTrustedProxies;
    expect([p.has('10.2.3.4'), p.has('::ffff:10.2.3.4'), p.has('fd00::1'), p.has('192.0.2.1')]).toEqual([true, true, true, false]);
    expect(() => parse([...required, '--login-rate-trusted-proxies=10.0.0.0/40'])).toThrow(
      '--login-rate-trusted-proxies: "10.0.0.0/40" is not an IP address or network (give one such as 10.0.0.0/8 or fd00::/8)',
    );
  });

  it('reads the monitoring namespace root konnectors may be scraped from (none by default); refuses a non-name', () => {
    expect(parse(required).monitoringNamespace).toBeUndefined();
    expect(parse([...required, '--monitoring-namespace=monitoring']).monitoringNamespace).toBe('monitoring');
    expect(parseOptions(required, { BACKEND_MONITORING_NAMESPACE: 'prom' })).toMatchObject({ monitoringNamespace: 'prom' });
    expect(() => parse([...required, '--monitoring-namespace=Mon'])).toThrow(
      '--monitoring-namespace: "Mon" is not a namespace name (a DNS label)',
    );
  });

  it('reads the backup store: none by default, its admin keys from the environment, and refuses what it cannot use', () => {
    expect(parse(required).backupStore).toBeUndefined();
    const env = { BACKEND_BACKUP_STORE_ADMIN_ACCESS_KEY: 'ROOT', BACKEND_BACKUP_STORE_ADMIN_SECRET_KEY: 'secret' };
    expect(
      parseOptions([...required, '--backup-store-endpoint=https://versitygw.store.svc:7070', '--backup-store-ca-file=/ca'], env),
    ).toMatchObject({
      backupStore: {
        endpoint: 'https://versitygw.store.svc:7070',
        adminAccessKey: 'ROOT',
        adminSecretKey: 'secret',
        caFile: '/ca',
        bucket: 'klutch-%s',
        secret: 'klutch-backup-store',
        keepDeletedMs: 720 * 3_600_000,
        sweepIntervalMs: 3_600_000,
      },
    });
    const store = '--backup-store-endpoint=https://s3.example.com';
    expect(
      (parseOptions([...required, store, '--backup-store-keep-deleted=2160h', '--backup-store-sweep-interval=10m'], env) as BackendOptions)
        .backupStore,
    ).toMatchObject({ keepDeletedMs: 2160 * 3_600_000, sweepIntervalMs: 600_000 });
    expect(() => parseOptions([...required, store, '--backup-store-keep-deleted=30d'], env)).toThrow(
      '--backup-store-keep-deleted: "30d" is not a duration such as 500ms, 90s, 10m, 2m30s or 1h',
    );
    expect(() => parseOptions([...required, store, '--backup-store-sweep-interval=0s'], env)).toThrow(
      '--backup-store-sweep-interval: 0s must be more than 0',
    );
    expect(() => parseOptions([...required, store], {})).toThrow(
      '--backup-store-admin-access-key (or BACKEND_BACKUP_STORE_ADMIN_ACCESS_KEY) is required with --backup-store-endpoint',
    );
    expect(() => parseOptions([...required, '--backup-store-ca-file=/ca'], {})).toThrow(
      '--backup-store-ca-file: given without --backup-store-endpoint',
    );
    expect(() => parseOptions([...required, '--backup-store-endpoint=https://s3.example.com/bucket'], env)).toThrow(
      "is not the URL of the store's S3 port",
    );
    expect(() => parseOptions([...required, store, '--backup-store-bucket=backups'], env)).toThrow(
      '--backup-store-bucket: "backups" is not a bucket name with one %s',
    );
    expect(() => parseOptions([...required, store, '--backup-store-secret=Store'], env)).toThrow(
      '--backup-store-secret: "Store" is not a Secret name',
    );
  });

  it("reads what an AppClusterBinding's konnector may be given and how many a namespace binds; refuses malformed ones", () => {
    expect(parse(required)).toMatchObject({
      konnectorMaxResources: { cpu: '2', memory: '1Gi', 'ephemeral-storage': '1Gi' },
      maxAppClusterBindings: 20,
    });
    // A resource named replaces its default; the others keep theirs.
    expect(parse([...required, '--konnector-max-resources=memory=4Gi, cpu=500m', '--max-app-cluster-bindings=5'])).toMatchObject({
      konnectorMaxResources: { cpu: '500m', memory: '4Gi', 'ephemeral-storage': '1Gi' },
      maxAppClusterBindings: 5,
    });
    expect(() => parse([...required, '--konnector-max-resources=nvidia.com/gpu=1'])).toThrow(
      '--konnector-max-resources: "nvidia.com/gpu" is not a resource a konnector is given (cpu, memory, ephemeral-storage)',
    );
    expect(() => parse([...required, '--konnector-max-resources=memory=1.5Gi'])).toThrow(
      '--konnector-max-resources: memory: "1.5Gi" is not a quantity this platform reads: write it as a whole number of its unit (1536Mi, 500m)',
    );
    expect(() => parse([...required, '--konnector-max-resources=memory'])).toThrow(
      '--konnector-max-resources: "memory" is not resource=quantity (e.g. cpu=2,memory=1Gi)',
    );
    expect(() => parse([...required, '--max-app-cluster-bindings=0'])).toThrow('--max-app-cluster-bindings');
  });

  it('reads the images an AppClusterBinding may name and the ports its root namespace opens; refuses malformed ones', () => {
    expect(parse(required)).toMatchObject({ konnectorAllowedImages: [], konnectorApiPorts: [443, 6443] });
    expect(
      parse([
        ...required,
        '--konnector-allowed-images=public.ecr.aws/w5n9a2g2/klutch/konnector:*, registry.example.com/k:v1',
        '--konnector-api-ports=443,8443,443',
      ]),
    ).toMatchObject({
      konnectorAllowedImages: ['public.ecr.aws/w5n9a2g2/klutch/konnector:*', 'registry.example.com/k:v1'],
      konnectorApiPorts: [443, 8443],
    });
    expect(() => parse([...required, '--konnector-allowed-images=*'])).toThrow(
      '--konnector-allowed-images: "*" is neither an image reference nor <repository>:*',
    );
    expect(() => parse([...required, '--konnector-api-ports=443,http'])).toThrow('--konnector-api-ports: "http" is not a TCP port');
    expect(() => parse([...required, '--konnector-image=not an image'])).toThrow(
      '--konnector-image: "not an image" is not an image reference',
    );
  });

  it.each([
    [['-v', '2'], 'info'],
    [['-v=4'], 'debug'],
    [['-v5'], 'debug'],
    [['--v=6'], 'trace'],
    [['--v', '0'], 'info'],
  ])("maps klog's %j to a log level", (args, level) => expect(parse([...required, ...args]).logLevel).toBe(level));

  it.each([
    [['-v=2', '--log-level=debug'], '-v and --log-level: give one'],
    [['-v=loud'], '-v: "loud" is not a klog verbosity'],
    [['--log-level=verbose'], '--log-level: "verbose" is not fatal, error, warn, info, debug or trace'],
    [[`--cookie-signing-key=${KEY32}`], '--cookie-keys-file and --cookie-signing-key: give one'],
    [['--listen-ip=127.0.0.1'], '--listen-ip/--listen-port and --listen-address: give --listen-address alone'],
  ])('refuses %j', (args, message) => {
    expect(() => parse([...required, '--listen-address=0.0.0.0:8080', ...args])).toThrow(message);
  });

  it('refuses --cookie-encryption-key alone, and asks for a cookie key when there is none', () => {
    expect(() => parse([...without('cookie-keys-file'), `--cookie-encryption-key=${KEY16}`])).toThrow(
      '--cookie-encryption-key: only with --cookie-signing-key',
    );
    expect(() => parse(without('cookie-keys-file'))).toThrow(
      "--cookie-keys-file (or BACKEND_COOKIE_KEYS_FILE) is required (or Klutch's --cookie-signing-key)",
    );
  });
});

describe('bind authorization flags', () => {
  it('default to allow-all, the groups claim and no extra scopes', () => {
    expect(parseOptions(required)).toMatchObject({ defaultBindPolicy: 'allow-all', oidcGroupsClaim: 'groups', oidcExtraScopes: [] });
  });

  it('take deny-all, another claim and extra scopes (flag or variable)', () => {
    expect(
      parseOptions([
        ...required,
        '--default-bind-policy=deny-all',
        '--oidc-groups-claim=roles',
        '--oidc-extra-scopes=groups, offline_access',
      ]),
    ).toMatchObject({ defaultBindPolicy: 'deny-all', oidcGroupsClaim: 'roles', oidcExtraScopes: ['groups', 'offline_access'] });
    expect(parseOptions(required, { BACKEND_DEFAULT_BIND_POLICY: 'deny-all' })).toMatchObject({ defaultBindPolicy: 'deny-all' });
  });

  it('refuse an unknown policy, an empty claim and a scope that is no scope, naming the flag', () => {
    expect(() => parseOptions([...required, '--default-bind-policy=deny'])).toThrow(
      '--default-bind-policy: "deny" is not allow-all or deny-all',
    );
    expect(() => parseOptions([...required, '--oidc-groups-claim= '])).toThrow('--oidc-groups-claim: is empty');
    expect(() => parseOptions([...required, '--oidc-extra-scopes=groups,"x"'])).toThrow('--oidc-extra-scopes: ""x"" is not an OAuth scope');
  });
});

describe('machine bind flags', () => {
  it("are off by default; --machine-bind (or its variable, or Go's =true) turns them on, with an optional resource", () => {
    const off = parseOptions(required) as BackendOptions;
    expect(off.machineBind).toBe(false);
    expect(off.machineBindResource).toBeUndefined();
    expect(parseOptions([...required, '--machine-bind'])).toMatchObject({ machineBind: true });
    expect(parseOptions([...required, '--machine-bind=true'])).toMatchObject({ machineBind: true });
    expect(parseOptions(required, { BACKEND_MACHINE_BIND: 'true' })).toMatchObject({ machineBind: true });
    expect(parseOptions([...required, '--machine-bind', '--machine-bind-resource=https://bind.example.com/api'])).toMatchObject({
      machineBind: true,
      machineBindResource: 'https://bind.example.com/api',
    });
  });

  it('refuse a resource without --machine-bind, one that is no URL and one with a fragment', () => {
    expect(() => parseOptions([...required, '--machine-bind-resource=https://x.example'])).toThrow(
      '--machine-bind-resource: only with --machine-bind',
    );
    expect(() => parseOptions([...required, '--machine-bind', '--machine-bind-resource=nope'])).toThrow(
      '--machine-bind-resource: "nope" is not a URL',
    );
    expect(() => parseOptions([...required, '--machine-bind', '--machine-bind-resource=https://x.example/#a'])).toThrow('has a fragment');
  });
});

describe('the defaults --help says', () => {
  // A default in words ("half the lifetime", "$POD_NAME, else the host name") is worked out at start, not a value.
  const literal = FLAGS.filter((f) => f.default !== undefined && !f.default.includes(' '));

  it.each(literal.map((f) => [f.name, f.default!]))('--%s: the default %s is what the backend runs with', (name, value) => {
    const given = parseOptions([...required.filter((r) => !r.startsWith(`--${name}=`)), `--${name}=${value}`]) as BackendOptions;
    expect({ ...given, mapped: [] }).toEqual({ ...(parseOptions(required) as BackendOptions), mapped: [] });
  });
});

describe('switches given as variables', () => {
  it.each([
    ['BACKEND_MACHINE_BIND', 'yes', '--machine-bind: "yes" is not true or false'],
    ['BACKEND_LEADER_ELECTION', 'off', '--leader-election: "off" is not true or false'],
    ['BACKEND_CONTROL_PLANE_MODE', '1', '--control-plane-mode: "1" is not true or false'],
  ])('refuse %s=%s instead of reading it as false', (variable, value, message) => {
    expect(() => parseOptions(required, { [variable]: value })).toThrow(message);
  });

  it('take true and false', () => {
    expect(parseOptions(required, { BACKEND_LEADER_ELECTION: 'false', BACKEND_MACHINE_BIND: 'true' })).toMatchObject({
      leaderElection: false,
      machineBind: true,
    });
  });
});

describe('the manual', () => {
  it('documents every flag with its variable and default in docs/backend.md', () => {
    expect(undocumentedFlags(manual('backend'), BACKEND_FLAGS)).toEqual([]);
  });
});
