/** The command line of each command (node:util parseArgs, strict), with defaults applied once. */
import { parseArgs } from 'node:util';
import { DEFAULT_KONNECTOR_NAMESPACE } from '../konnector/deploy/konnector';
import { parseDuration } from './duration';
import { UsageError } from './errors';

const str = { type: 'string' } as const;
const bool = { type: 'boolean' } as const;
const CLUSTER = { kubeconfig: str, context: str, namespace: { ...str, short: 'n' }, help: { ...bool, short: 'h' } } as const;
const BIND = {
  'skip-konnector': bool,
  'konnector-image': str,
  'downgrade-konnector': bool,
  'accept-permission-claims': bool,
  'dry-run': { ...bool, short: 'd' },
  output: { ...str, short: 'o' },
  timeout: str,
  wait: str,
} as const;

export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace: string;
}

export interface BindFlags extends ClusterFlags {
  readonly skipKonnector: boolean;
  readonly konnectorImage?: string;
  readonly downgradeKonnector: boolean;
  readonly acceptPermissionClaims: boolean;
  readonly dryRun: boolean;
  readonly output: 'yaml' | 'json';
  readonly timeoutMs: number;
  readonly waitMs: number;
}

export interface LoginFlags extends BindFlags {
  readonly url: string;
  readonly loginTimeoutMs: number;
  readonly browser: boolean;
  /** A machine identity instead of a browser login (--client-id; docs/decisions/machine-bind.md). */
  readonly machine?: MachineFlags;
}

/** Where the client secret comes from: never the command line, which every user of the machine can read. */
export type SecretSource = { readonly file: string } | { readonly env: string };

export interface MachineFlags {
  readonly clientId: string;
  readonly secret: SecretSource;
  /** The APIs to bind (--api <resource>.<group>, and the resources of -f's export requests). */
  readonly apis: readonly { readonly group: string; readonly resource: string }[];
  /** APIServiceExportRequest file(s) (-f), as `kubectl bind apiservice -f` takes them. */
  readonly file?: string;
  /** The OpenID provider expected (--oidc-issuer): a backend naming another is refused before the secret is sent. */
  readonly issuer?: string;
}

export interface ApiServiceFlags extends BindFlags {
  readonly file: string;
  readonly remoteKubeconfigName?: string;
  readonly remoteKubeconfigNamespace?: string;
  readonly remoteKubeconfig?: string;
  readonly remoteNamespace?: string;
}

export interface ListFlags extends ClusterFlags {
  readonly allNamespaces: boolean;
  readonly output?: 'yaml' | 'json';
}

export interface RemoveFlags extends ClusterFlags {
  readonly binding: string;
  readonly yes: boolean;
  readonly timeoutMs: number;
}

/** Machine binding: the OAuth2 client-credentials grant instead of a browser login. */
const MACHINE = {
  'client-id': str,
  'client-secret-file': str,
  'client-secret-env': str,
  'oidc-issuer': str,
  api: { ...str, multiple: true },
  file: { ...str, short: 'f' },
} as const;

type Parsed = { values: Record<string, string | boolean | string[] | undefined>; positionals: string[] };

function parse(
  command: string,
  argv: readonly string[],
  options: Record<string, { type: 'string' | 'boolean'; short?: string; multiple?: boolean }>,
): Parsed {
  try {
    return parseArgs({ args: [...argv], options, allowPositionals: true, strict: true }) as Parsed;
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional[\s\S]*$/, ''), command);
  }
}

function duration(command: string, flag: string, v: unknown, fallback: string): number {
  try {
    return parseDuration(`--${flag}`, typeof v === 'string' ? v : fallback);
  } catch (e) {
    throw new UsageError((e as Error).message, command);
  }
}

function cluster(v: Parsed['values']): ClusterFlags {
  return {
    ...(typeof v.kubeconfig === 'string' ? { kubeconfig: v.kubeconfig } : {}),
    ...(typeof v.context === 'string' ? { context: v.context } : {}),
    namespace: typeof v.namespace === 'string' ? v.namespace : DEFAULT_KONNECTOR_NAMESPACE,
  };
}

function output(command: string, v: unknown): 'yaml' | 'json' | undefined {
  if (v === undefined) return undefined;
  if (v !== 'yaml' && v !== 'json') throw new UsageError(`--output: "${String(v)}" is not yaml or json`, command);
  return v;
}

function bind(command: string, v: Parsed['values']): BindFlags {
  if (typeof v.output === 'string' && !v['dry-run']) throw new UsageError('--output goes with --dry-run', command);
  return {
    ...cluster(v),
    skipKonnector: v['skip-konnector'] === true,
    ...(typeof v['konnector-image'] === 'string' ? { konnectorImage: v['konnector-image'] } : {}),
    downgradeKonnector: v['downgrade-konnector'] === true,
    acceptPermissionClaims: v['accept-permission-claims'] === true,
    dryRun: v['dry-run'] === true,
    output: output(command, v.output) ?? 'yaml',
    timeoutMs: duration(command, 'timeout', v.timeout, '10m'),
    waitMs: duration(command, 'wait', v.wait, '2m'),
  };
}

export type Command =
  | { readonly command: 'help'; readonly topic: string; readonly ok: boolean }
  | { readonly command: 'version' }
  | { readonly command: 'bind'; readonly flags: LoginFlags }
  | { readonly command: 'apiservice'; readonly flags: ApiServiceFlags }
  | { readonly command: 'list'; readonly flags: ListFlags }
  | { readonly command: 'remove'; readonly flags: RemoveFlags };

export const COMMANDS = ['apiservice', 'list', 'remove'] as const;

export function parseCommand(argv: readonly string[]): Command {
  const [first, ...rest] = argv;
  if (first === 'help') return { command: 'help', topic: rest[0] ?? '', ok: true };
  if (first === 'version' || first === '--version') {
    if (rest.length) throw new UsageError(`unexpected argument "${rest[0]}"`, 'version');
    return { command: 'version' };
  }
  if (first === 'apiservice') {
    const { values: v, positionals } = parse(first, rest, {
      ...CLUSTER,
      ...BIND,
      file: { ...str, short: 'f' },
      'remote-kubeconfig-name': str,
      'remote-kubeconfig-namespace': str,
      'remote-kubeconfig': str,
      'remote-namespace': str,
    });
    if (v.help) return { command: 'help', topic: first, ok: true };
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`, first);
    if (typeof v.file !== 'string') throw new UsageError('-f <request.yaml> is required', first);
    if (typeof v['remote-kubeconfig-name'] !== 'string' && typeof v['remote-kubeconfig'] !== 'string')
      throw new UsageError('give the provider kubeconfig: --remote-kubeconfig-name <secret> or --remote-kubeconfig <file>', first);
    if (typeof v['remote-kubeconfig-name'] === 'string' && typeof v['remote-kubeconfig'] === 'string')
      throw new UsageError('give either --remote-kubeconfig-name or --remote-kubeconfig, not both', first);
    const opt = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
    return {
      command: 'apiservice',
      flags: {
        ...bind(first, v),
        file: v.file,
        ...(opt('remote-kubeconfig-name') ? { remoteKubeconfigName: opt('remote-kubeconfig-name') } : {}),
        ...(opt('remote-kubeconfig-namespace') ? { remoteKubeconfigNamespace: opt('remote-kubeconfig-namespace') } : {}),
        ...(opt('remote-kubeconfig') ? { remoteKubeconfig: opt('remote-kubeconfig') } : {}),
        ...(opt('remote-namespace') ? { remoteNamespace: opt('remote-namespace') } : {}),
      },
    };
  }
  if (first === 'list') {
    const { values: v, positionals } = parse(first, rest, {
      ...CLUSTER,
      'all-namespaces': { ...bool, short: 'A' },
      output: { ...str, short: 'o' },
    });
    if (v.help) return { command: 'help', topic: first, ok: true };
    if (positionals.length) throw new UsageError(`unexpected argument "${positionals[0]}"`, first);
    const o = output(first, v.output);
    return { command: 'list', flags: { ...cluster(v), allNamespaces: v['all-namespaces'] === true, ...(o ? { output: o } : {}) } };
  }
  if (first === 'remove') {
    const { values: v, positionals } = parse(first, rest, { ...CLUSTER, yes: { ...bool, short: 'y' }, timeout: str });
    if (v.help) return { command: 'help', topic: first, ok: true };
    if (positionals.length !== 1) throw new UsageError('name exactly one binding: kubectl bind remove <resource>.<group>', first);
    return {
      command: 'remove',
      flags: { ...cluster(v), binding: positionals[0]!, yes: v.yes === true, timeoutMs: duration(first, 'timeout', v.timeout, '10m') },
    };
  }
  refuseLiteralSecret(argv);
  const { values: v, positionals } = parse('', argv, { ...CLUSTER, ...BIND, ...MACHINE, 'login-timeout': str, 'no-browser': bool });
  if (v.help) return { command: 'help', topic: '', ok: true };
  if (positionals.length === 0) return { command: 'help', topic: '', ok: false };
  if (positionals.length > 1) throw new UsageError(`one URL, not ${positionals.length} arguments: ${positionals.join(' ')}`, '');
  const url = positionals[0]!;
  if (!/^https?:\/\//.test(url))
    throw new UsageError(`"${url}" is neither a command (${COMMANDS.join(', ')}) nor an http(s) URL of a bind backend`, '');
  return {
    command: 'bind',
    flags: {
      ...bind('', v),
      url,
      loginTimeoutMs: duration('', 'login-timeout', v['login-timeout'], '10m'),
      browser: v['no-browser'] !== true,
      ...machine(v),
    },
  };
}

/**
 * `--client-secret <secret>` is refused, not merely unknown: a secret on the command line is in every user's `ps`
 * (/proc/<pid>/cmdline), in shell history and in CI logs that echo commands.
 */
function refuseLiteralSecret(argv: readonly string[]): void {
  if (argv.some((a) => /^--?client-secret(=|$)/.test(a)))
    throw new UsageError(
      '--client-secret is refused: a secret on the command line is readable by every user of this machine (ps, /proc/<pid>/cmdline) and lands in shell history and CI logs; give --client-secret-file FILE or --client-secret-env VARIABLE',
      '',
    );
}

function machine(v: Parsed['values']): { machine?: MachineFlags } {
  const s = (k: string) => (typeof v[k] === 'string' ? (v[k] as string) : undefined);
  const clientId = s('client-id');
  const file = s('client-secret-file');
  const env = s('client-secret-env');
  const apis = (Array.isArray(v.api) ? v.api : []).map(apiOf);
  const requests = s('file');
  const issuer = s('oidc-issuer');
  if (clientId === undefined) {
    const stray = [
      file && '--client-secret-file',
      env && '--client-secret-env',
      apis.length && '--api',
      requests && '-f',
      issuer && '--oidc-issuer',
    ]
      .filter(Boolean)
      .join(', ');
    if (stray)
      throw new UsageError(`${stray}: only with --client-id (a machine bind); a browser login picks the API on the provider's page`, '');
    return {};
  }
  if (!clientId.trim()) throw new UsageError('--client-id: is empty', '');
  if ((file === undefined) === (env === undefined))
    throw new UsageError(
      `--client-id ${clientId}: give its secret with exactly one of --client-secret-file FILE or --client-secret-env VARIABLE`,
      '',
    );
  if (issuer !== undefined && !/^https?:\/\//.test(issuer)) throw new UsageError(`--oidc-issuer: "${issuer}" is not an http(s) URL`, '');
  return {
    machine: {
      clientId,
      secret: file !== undefined ? { file } : { env: env! },
      apis,
      ...(requests !== undefined ? { file: requests } : {}),
      ...(issuer !== undefined ? { issuer } : {}),
    },
  };
}

/** `<resource>.<group>` (the binding's name); a resource without a dot is of the core group. */
function apiOf(name: string): { group: string; resource: string } {
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(name))
    throw new UsageError(`--api: "${name}" is not <resource>.<group>, e.g. postgresqlinstances.anynines.com`, '');
  const dot = name.indexOf('.');
  return dot < 0 ? { group: '', resource: name } : { group: name.slice(dot + 1), resource: name.slice(0, dot) };
}
