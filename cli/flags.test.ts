import { describe, expect, it } from 'vitest';
import { COMMAND_FLAGS, parseCommand } from './flags';
import { manual, undocumentedFlags } from '../test/support/docs';

describe('the command line', () => {
  it('parses kubectl bind <url> with Klutch’s flags and ours, defaults applied', () => {
    const c = parseCommand(['https://bind.example/export', '--skip-konnector', '-d', '-o', 'json', '--login-timeout', '90s']);
    expect(c).toMatchObject({
      command: 'bind',
      flags: { url: 'https://bind.example/export', skipKonnector: true, dryRun: true, output: 'json', loginTimeoutMs: 90_000 },
    });
    expect(parseCommand(['https://x/export'])).toMatchObject({
      flags: { namespace: 'klutch-bind', timeoutMs: 600_000, waitMs: 120_000, browser: true, acceptPermissionClaims: false },
    });
  });

  it('parses apiservice, list, remove and why', () => {
    expect(parseCommand(['apiservice', '-f', 'r.yaml', '--remote-kubeconfig-name', 'kubeconfig-abc'])).toMatchObject({
      command: 'apiservice',
      flags: { file: 'r.yaml', remoteKubeconfigName: 'kubeconfig-abc' },
    });
    expect(parseCommand(['list', '-A'])).toMatchObject({ command: 'list', flags: { allNamespaces: true, noHeaders: false } });
    expect(parseCommand(['list', '-o', 'name'])).toMatchObject({ command: 'list', flags: { output: 'name' } });
    expect(parseCommand(['list', '--no-headers'])).toMatchObject({ command: 'list', flags: { noHeaders: true } });
    expect(parseCommand(['remove', 'pgs.anynines.com', '-y', '-n', 'x'])).toMatchObject({
      command: 'remove',
      flags: { binding: 'pgs.anynines.com', yes: true, namespace: 'x' },
    });
    // As kubectl names an object: <resource>/<name>, or the two apart.
    for (const argv of [
      ['why', 'postgresqlinstance/orders', '-n', 'team-a'],
      ['why', 'postgresqlinstance', 'orders', '-n', 'team-a'],
    ])
      expect(parseCommand(argv)).toMatchObject({
        command: 'why',
        flags: { resource: 'postgresqlinstance', name: 'orders', namespace: 'team-a', konnectorNamespace: 'klutch-bind' },
      });
    expect(parseCommand(['why', 'pg/orders', '--konnector-namespace', 'kb'])).toMatchObject({ flags: { konnectorNamespace: 'kb' } });
    // Without -n, the claim's namespace is the kubeconfig context's (kubectl's), not the konnector's default.
    expect(parseCommand(['why', 'postgresqlinstance/orders'])).not.toHaveProperty('flags.namespace');
  });

  it('documents every flag of every command with its default in docs/kubectl-bind.md', () => {
    for (const [command, table] of Object.entries(COMMAND_FLAGS))
      expect(undocumentedFlags(manual('kubectl-bind'), table), `kubectl bind ${command}`).toEqual([]);
  });

  it("takes Go's boolean forms and --no-browser", () => {
    expect(parseCommand(['https://x/export', '--no-browser', '--dry-run=true', '--skip-konnector=false'])).toMatchObject({
      flags: { browser: false, dryRun: true, skipKonnector: false },
    });
  });

  it('takes the pull secret from KUBECTL_BIND_KONNECTOR_IMAGE_PULL_SECRET, the flag first', () => {
    const env = { KUBECTL_BIND_KONNECTOR_IMAGE_PULL_SECRET: 'team-mirror' };
    expect(parseCommand(['https://x/export'], env)).toMatchObject({ flags: { konnectorImagePullSecret: 'team-mirror' } });
    expect(parseCommand(['https://x/export', '--konnector-image-pull-secret=other'], env)).toMatchObject({
      flags: { konnectorImagePullSecret: 'other' },
    });
    expect(parseCommand(['https://x/export'])).not.toHaveProperty('flags.konnectorImagePullSecret');
  });

  it('takes the konnector image from KUBECTL_BIND_KONNECTOR_IMAGE, the flag first, and reads no other variable', () => {
    const env = { KUBECTL_BIND_KONNECTOR_IMAGE: 'mirror.example.com/konnector:v0.1.0', KUBECTL_BIND_NAMESPACE: 'elsewhere' };
    expect(parseCommand(['https://x/export'], env)).toMatchObject({
      flags: { konnectorImage: 'mirror.example.com/konnector:v0.1.0', namespace: 'klutch-bind' },
    });
    expect(parseCommand(['https://x/export', '--konnector-image', 'other.example.com/k:v1'], env)).toMatchObject({
      flags: { konnectorImage: 'other.example.com/k:v1' },
    });
  });

  it("takes kubectl's --dry-run=client and --dry-run=none", () => {
    expect(parseCommand(['https://x/export', '--dry-run=client', '-o', 'json'])).toMatchObject({ flags: { dryRun: true, output: 'json' } });
    expect(parseCommand(['apiservice', '-f', 'r.yaml', '--remote-kubeconfig', 'k', '--dry-run=client'])).toMatchObject({
      flags: { dryRun: true },
    });
    expect(parseCommand(['https://x/export', '--dry-run=none'])).toMatchObject({ flags: { dryRun: false } });
  });

  it('--help everywhere; no argument is the help with a usage exit', () => {
    for (const argv of [['--help'], ['apiservice', '-h'], ['list', '--help'], ['remove', '--help'], ['help', 'remove']])
      expect(parseCommand(argv)).toMatchObject({ command: 'help', ok: true });
    expect(parseCommand([])).toMatchObject({ command: 'help', ok: false });
  });

  it.each([
    [['https://x/export', '--bogus'], "Unknown option '--bogus'"],
    [['bogus'], '"bogus" is neither a command (apiservice, list, remove, why, version, help) nor an http(s) URL'],
    [['https://x/export', '--dry-run=server'], '--dry-run=server: the plugin renders what it would create on the client'],
    [['https://x/export', '--timeout', '10 minutes'], '--timeout: "10 minutes" is not a duration'],
    [['https://x/export', '-o', 'yaml'], '--output goes with --dry-run'],
    [['apiservice', '-f', 'r.yaml'], 'give the provider kubeconfig'],
    [['remove'], 'name exactly one binding'],
    [['why'], 'name one claim: kubectl bind why <resource>/<name>'],
    [['why', 'postgresqlinstance'], 'name one claim'],
    [['why', 'a/b/c'], 'name one claim'],
    [['why', 'a', 'b', 'c'], 'name one claim'],
    [['list', '-o', 'wide'], '--output: "wide" is not yaml, json or name'],
    [['list', '-o', 'name', '--no-headers'], '--no-headers goes with the table'],
  ])('%j is a usage error: %s', (argv, message) => {
    expect(() => parseCommand(argv)).toThrow(expect.objectContaining({ exitCode: 2, message: expect.stringContaining(message) }));
  });

  it('parses a machine bind: client id, the secret’s file or variable, the APIs, a request file, the pinned issuer', () => {
    expect(
      parseCommand([
        'https://x/export',
        '--client-id',
        'ci',
        '--client-secret-file',
        '/run/secrets/ci',
        '--api',
        'postgresqlinstances.anynines.com',
        '--api=configmaps',
        '-f',
        'requests.yaml',
        '--oidc-issuer',
        'https://idp.example',
      ]),
    ).toMatchObject({
      command: 'bind',
      flags: {
        machine: {
          clientId: 'ci',
          secret: { file: '/run/secrets/ci' },
          apis: [
            { group: 'anynines.com', resource: 'postgresqlinstances' },
            { group: '', resource: 'configmaps' },
          ],
          file: 'requests.yaml',
          issuer: 'https://idp.example',
        },
      },
    });
    expect(parseCommand(['https://x/export', '--client-id=ci', '--client-secret-env=CI_SECRET'])).toMatchObject({
      flags: { machine: { clientId: 'ci', secret: { env: 'CI_SECRET' }, apis: [] } },
    });
    expect((parseCommand(['https://x/export']) as { flags: object }).flags).not.toHaveProperty('machine');
  });

  it.each([
    [['--client-secret', 's3cret'], '--client-secret is refused: a secret on the command line is readable by every user'],
    [['--client-secret=s3cret'], '--client-secret is refused'],
    [['--client-id', 'ci'], 'give its secret with exactly one of --client-secret-file FILE or --client-secret-env VARIABLE'],
    [['--client-id', 'ci', '--client-secret-file', 'f', '--client-secret-env', 'V'], 'exactly one of'],
    [['--client-secret-file', 'f'], '--client-secret-file: only with --client-id'],
    [['--api', 'postgresqlinstances.anynines.com'], '--api: only with --client-id'],
    [['--client-id', 'ci', '--client-secret-env', 'V', '--api', 'Not An API'], '--api: "Not An API" is not <resource>.<group>'],
    [['--client-id', 'ci', '--client-secret-env', 'V', '--oidc-issuer', 'idp'], '--oidc-issuer: "idp" is not an http(s) URL'],
  ])('machine flags %j are a usage error: %s', (args, message) => {
    const e = (() => {
      try {
        parseCommand(['https://x/export', ...args]);
      } catch (x) {
        return x as Error & { exitCode: number };
      }
    })();
    expect(e).toMatchObject({ exitCode: 2, message: expect.stringContaining(message) });
    // The refusal never repeats the secret.
    expect(e!.message).not.toContain('s3cret');
  });
});
