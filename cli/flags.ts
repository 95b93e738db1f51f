/**
 * The command line of each command, with defaults applied once: one flag table per command (lib/flags.ts, the
 * mechanism every process shares), which also writes the flags of `--help` and is checked against
 * docs/kubectl-bind.md.
 */
import { DEFAULT_KONNECTOR_NAMESPACE } from '../konnector/deploy/konnector';
import { KONNECTOR_IMAGE } from '../lib/version';
import { durationFlag, parseFlags, UsageError as FlagUsageError, type Flag, type FlagTable } from '../lib/flags';
import { usageError } from './errors';

/** Where the app cluster is: every command. */
export const CLUSTER_FLAGS: readonly Flag[] = [
  { name: 'kubeconfig', arg: 'file', optional: true, help: "the app cluster's kubeconfig (default: $KUBECONFIG, else ~/.kube/config)" },
  { name: 'context', arg: 'name', optional: true, help: 'a context of that kubeconfig (default: its current context)' },
  {
    name: 'namespace',
    short: 'n',
    arg: 'ns',
    default: DEFAULT_KONNECTOR_NAMESPACE,
    help: 'namespace of the konnector, the kubeconfig Secrets and the bindings (any other serves only its own bindings)',
  },
];

/** `why`: the app cluster, and the claim's namespace as kubectl takes it (not the konnector's). */
export const WHY_FLAGS: readonly Flag[] = [
  ...CLUSTER_FLAGS.filter((f) => f.name !== 'namespace'),
  {
    name: 'namespace',
    short: 'n',
    arg: 'ns',
    default: "the context's namespace, else default",
    help: "the claim's namespace, as kubectl takes it",
  },
  {
    name: 'konnector-namespace',
    arg: 'ns',
    default: DEFAULT_KONNECTOR_NAMESPACE,
    help: "the konnector's namespace, where its bindings are read when this user may not list them cluster-wide",
  },
];

/** How to bind: `kubectl bind <url>` and `apiservice`. */
export const BIND_FLAGS: readonly Flag[] = [
  { name: 'skip-konnector', boolean: true, help: 'do not install or upgrade the konnector (nor grant it access)' },
  {
    name: 'konnector-image',
    arg: 'image',
    default: KONNECTOR_IMAGE,
    env: 'KUBECTL_BIND_KONNECTOR_IMAGE',
    help: "the konnector image to install (a mirror's, for every bind of a team: set the variable)",
  },
  {
    name: 'konnector-image-pull-secret',
    arg: 'name',
    optional: true,
    env: 'KUBECTL_BIND_KONNECTOR_IMAGE_PULL_SECRET',
    help: 'a dockerconfigjson Secret in the konnector namespace to pull its image with (a private mirror); kept when a later bind leaves it out',
  },
  { name: 'downgrade-konnector', boolean: true, help: "replace a newer konnector with this kubectl-bind's" },
  { name: 'accept-permission-claims', boolean: true, help: 'accept every permission claim without asking (for scripts)' },
  { name: 'dry-run', short: 'd', boolean: true, help: 'print what would be created, create nothing' },
  { name: 'output', short: 'o', arg: 'yaml|json', default: 'yaml', help: 'format of --dry-run' },
  { name: 'timeout', arg: 'duration', default: '10m', help: 'wait this long for the provider to export the API' },
  { name: 'wait', arg: 'duration', default: '2m', help: 'wait this long for the konnector to report the binding Ready (0: do not wait)' },
];

/** The browser login of `kubectl bind <url>`. */
export const LOGIN_FLAGS: readonly Flag[] = [
  { name: 'login-timeout', arg: 'duration', default: '10m', help: 'wait this long for the login in the browser' },
  { name: 'no-browser', boolean: true, help: 'only print the login URL, do not open a browser' },
];

/** Machine binding: the OAuth2 client-credentials grant instead of a browser login. */
export const MACHINE_FLAGS: readonly Flag[] = [
  {
    name: 'client-id',
    arg: 'id',
    optional: true,
    help: "bind as this OAuth2 client (client-credentials grant at the backend's OpenID provider)",
  },
  { name: 'client-secret-file', arg: 'file', optional: true, help: 'read its secret from FILE (one trailing newline is dropped)' },
  {
    name: 'client-secret-env',
    arg: 'variable',
    optional: true,
    help: 'read its secret from this environment variable (there is no --client-secret: the command line is readable by every user)',
  },
  {
    name: 'api',
    arg: 'resource.group',
    multiple: true,
    optional: true,
    help: 'an API to bind, e.g. postgresqlinstances.anynines.com (repeatable)',
  },
  {
    name: 'file',
    short: 'f',
    arg: 'file',
    optional: true,
    help: 'bind the APIs of these APIServiceExportRequest(s) (the file apiservice -f takes)',
  },
  {
    name: 'oidc-issuer',
    arg: 'url',
    optional: true,
    help: "the OpenID provider the client secret goes to (required unless it is on the backend's own origin): a backend naming another is refused before the secret is sent",
  },
];

/** `kubectl bind apiservice`: the export request and the provider kubeconfig. */
export const APISERVICE_FLAGS: readonly Flag[] = [
  { name: 'file', short: 'f', arg: 'file', help: "the APIServiceExportRequest(s), YAML or JSON ('-' for stdin)" },
  {
    name: 'remote-kubeconfig-name',
    arg: 'name',
    optional: true,
    help: 'Secret in the app cluster holding the provider kubeconfig (key kubeconfig)',
  },
  { name: 'remote-kubeconfig-namespace', arg: 'ns', default: '--namespace', help: 'its namespace' },
  {
    name: 'remote-kubeconfig',
    arg: 'file',
    optional: true,
    help: 'the provider kubeconfig as a file instead (stored as a Secret kubeconfig-*)',
  },
  {
    name: 'remote-namespace',
    arg: 'ns',
    default: "the kubeconfig context's",
    help: "the consumer's namespace on the provider",
  },
];

export const LIST_FLAGS: readonly Flag[] = [
  { name: 'all-namespaces', short: 'A', boolean: true, help: 'bindings of every namespace' },
  {
    name: 'output',
    short: 'o',
    arg: 'yaml|json|name',
    optional: true,
    help: 'print the bindings themselves (one List document), or their names as kubectl does (apiservicebinding.<group>/<name>)',
  },
  { name: 'no-headers', boolean: true, help: 'print the table without its header line' },
];

export const REMOVE_FLAGS: readonly Flag[] = [
  { name: 'yes', short: 'y', boolean: true, help: 'do not ask for confirmation (needed when stdin is not a terminal)' },
  { name: 'timeout', arg: 'duration', default: '10m', help: 'wait this long for the objects to go' },
];

/** Each command's flag table; '' is `kubectl bind <url>`. */
export const COMMAND_FLAGS: Readonly<Record<'' | 'apiservice' | 'list' | 'remove' | 'why', FlagTable>> = {
  '': { flags: [...CLUSTER_FLAGS, ...BIND_FLAGS, ...LOGIN_FLAGS, ...MACHINE_FLAGS] },
  apiservice: { flags: [...APISERVICE_FLAGS, ...CLUSTER_FLAGS, ...BIND_FLAGS] },
  list: { flags: [...CLUSTER_FLAGS, ...LIST_FLAGS] },
  remove: { flags: [...CLUSTER_FLAGS, ...REMOVE_FLAGS] },
  why: { flags: WHY_FLAGS },
};

export interface ClusterFlags {
  readonly kubeconfig?: string;
  readonly context?: string;
  readonly namespace: string;
}

export interface BindFlags extends ClusterFlags {
  readonly skipKonnector: boolean;
  readonly konnectorImage?: string;
  readonly konnectorImagePullSecret?: string;
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
  readonly output?: 'yaml' | 'json' | 'name';
  readonly noHeaders: boolean;
}

export interface WhyFlags extends Omit<ClusterFlags, 'namespace'> {
  /** The claim's resource as kubectl takes it: plural, singular, kind or `<plural>.<group>`. */
  readonly resource: string;
  readonly name: string;
  /** The claim's namespace; unset: the kubeconfig context's, else `default`, as kubectl. */
  readonly namespace?: string;
  /** Where the bindings are read when the user may not list them cluster-wide (a namespace-scoped developer). */
  readonly konnectorNamespace: string;
}

export interface RemoveFlags extends ClusterFlags {
  readonly binding: string;
  readonly yes: boolean;
  readonly timeoutMs: number;
}

type Parsed = { values: Record<string, string | boolean | string[] | undefined>; positionals: readonly string[] };

/**
 * kubectl's spelling of a dry run: `--dry-run=client` is this plugin's `--dry-run` (it renders on the client);
 * `--dry-run=server` asks for what the plugin cannot do, and `--dry-run=none` for no dry run.
 */
function kubectlDryRun(command: string, argv: readonly string[]): string[] {
  return argv.flatMap((a) => {
    const m = /^--dry-run=(client|server|none)$/.exec(a);
    if (!m) return [a];
    if (m[1] === 'server')
      throw usageError('--dry-run=server: the plugin renders what it would create on the client; give --dry-run=client', command);
    return m[1] === 'client' ? ['--dry-run'] : [];
  });
}

/** A command's flags by its table: booleans as true/undefined, strings, and the lists of repeatable flags. */
function parse(command: keyof typeof COMMAND_FLAGS, argv: readonly string[], env: NodeJS.ProcessEnv): Parsed {
  const table = COMMAND_FLAGS[command];
  try {
    // Only flags that name a variable read one (the tables have no prefix): the konnector image.
    const f = parseFlags(table, kubectlDryRun(command, argv), env, { positionals: true });
    const values: Parsed['values'] = Object.fromEntries(
      table.flags.map((x) => [
        x.name,
        x.multiple ? [...f.values(x.name)] : x.boolean ? (f.value(x.name) === 'true' ? true : undefined) : f.value(x.name),
      ]),
    );
    if (f.help) values.help = true;
    return { values, positionals: f.positionals };
  } catch (e) {
    if (e instanceof FlagUsageError) throw usageError(e.message, command);
    throw e;
  }
}

function duration(command: string, flag: string, v: unknown, fallback: string): number {
  try {
    return durationFlag(flag, typeof v === 'string' ? v : fallback);
  } catch (e) {
    throw usageError((e as Error).message, command);
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
  if (v !== 'yaml' && v !== 'json') throw usageError(`--output: "${String(v)}" is not yaml or json`, command);
  return v;
}

function bind(command: string, v: Parsed['values']): BindFlags {
  if (typeof v.output === 'string' && !v['dry-run']) throw usageError('--output goes with --dry-run', command);
  return {
    ...cluster(v),
    skipKonnector: v['skip-konnector'] === true,
    ...(typeof v['konnector-image'] === 'string' ? { konnectorImage: v['konnector-image'] } : {}),
    ...(typeof v['konnector-image-pull-secret'] === 'string' ? { konnectorImagePullSecret: v['konnector-image-pull-secret'] } : {}),
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
  | { readonly command: 'version'; readonly output?: 'yaml' | 'json' }
  /** `__complete <words>`: what kubectl_complete-bind asks for (cli/completion.ts). */
  | { readonly command: 'complete'; readonly words: readonly string[] }
  | { readonly command: 'bind'; readonly flags: LoginFlags }
  | { readonly command: 'apiservice'; readonly flags: ApiServiceFlags }
  | { readonly command: 'list'; readonly flags: ListFlags }
  | { readonly command: 'remove'; readonly flags: RemoveFlags }
  | { readonly command: 'why'; readonly flags: WhyFlags };

export const COMMANDS = ['apiservice', 'list', 'remove', 'why'] as const;
/** The hidden command kubectl_complete-bind runs (Cobra's name for it): cli/completion.ts answers it. */
export const COMPLETE_COMMAND = '__complete';

export function parseCommand(argv: readonly string[], env: NodeJS.ProcessEnv = {}): Command {
  const [first, ...rest] = argv;
  if (first === 'help') return { command: 'help', topic: rest[0] ?? '', ok: true };
  if (first === COMPLETE_COMMAND) return { command: 'complete', words: rest };
  if (first === 'version' || first === '--version') {
    // As `kubectl version -o json`: -o|--output yaml|json, nothing else.
    const [flag, value, ...more] = rest;
    const inline = /^(?:-o|--output)=(.*)$/.exec(flag ?? '');
    if (!rest.length) return { command: 'version' };
    if (inline && !value) return { command: 'version', output: output('version', inline[1]) };
    if ((flag === '-o' || flag === '--output') && value !== undefined && !more.length)
      return { command: 'version', output: output('version', value) };
    throw usageError(`unexpected argument "${rest[0]}": kubectl bind version takes only -o yaml|json`, 'version');
  }
  if (first === 'apiservice') {
    const { values: v, positionals } = parse(first, rest, env);
    if (v.help) return { command: 'help', topic: first, ok: true };
    if (positionals.length) throw usageError(`unexpected argument "${positionals[0]}"`, first);
    if (typeof v.file !== 'string') throw usageError('-f <request.yaml> is required', first);
    if (typeof v['remote-kubeconfig-name'] !== 'string' && typeof v['remote-kubeconfig'] !== 'string')
      throw usageError('give the provider kubeconfig: --remote-kubeconfig-name <secret> or --remote-kubeconfig <file>', first);
    if (typeof v['remote-kubeconfig-name'] === 'string' && typeof v['remote-kubeconfig'] === 'string')
      throw usageError('give either --remote-kubeconfig-name or --remote-kubeconfig, not both', first);
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
    const { values: v, positionals } = parse(first, rest, env);
    if (v.help) return { command: 'help', topic: first, ok: true };
    if (positionals.length) throw usageError(`unexpected argument "${positionals[0]}"`, first);
    if (typeof v.output === 'string' && !['yaml', 'json', 'name'].includes(v.output))
      throw usageError(`--output: "${v.output}" is not yaml, json or name`, first);
    const o = v.output === 'name' ? 'name' : output(first, v.output);
    if (o && v['no-headers']) throw usageError('--no-headers goes with the table, not with -o', first);
    return {
      command: 'list',
      flags: {
        ...cluster(v),
        allNamespaces: v['all-namespaces'] === true,
        noHeaders: v['no-headers'] === true,
        ...(o ? { output: o } : {}),
      },
    };
  }
  if (first === 'remove') {
    const { values: v, positionals } = parse(first, rest, env);
    if (v.help) return { command: 'help', topic: first, ok: true };
    if (positionals.length !== 1) throw usageError('name exactly one binding: kubectl bind remove <resource>.<group>', first);
    return {
      command: 'remove',
      flags: { ...cluster(v), binding: positionals[0]!, yes: v.yes === true, timeoutMs: duration(first, 'timeout', v.timeout, '10m') },
    };
  }
  if (first === 'why') {
    const { values: v, positionals } = parse(first, rest, env);
    if (v.help) return { command: 'help', topic: first, ok: true };
    // As kubectl: <resource>/<name>, or <resource> <name>.
    const parts = positionals.length === 1 ? positionals[0]!.split('/') : positionals;
    const [resource, name] = parts;
    if (positionals.length > 2 || parts.length !== 2 || !resource || !name || name.includes('/'))
      throw usageError('name one claim: kubectl bind why <resource>/<name>, e.g. postgresqlinstance/orders', first);
    const { namespace: _konnectors, ...where } = cluster(v);
    return {
      command: 'why',
      flags: {
        ...where,
        resource,
        name,
        ...(typeof v.namespace === 'string' ? { namespace: v.namespace } : {}),
        konnectorNamespace: typeof v['konnector-namespace'] === 'string' ? v['konnector-namespace'] : DEFAULT_KONNECTOR_NAMESPACE,
      },
    };
  }
  refuseLiteralSecret(argv);
  const { values: v, positionals } = parse('', argv, env);
  if (v.help) return { command: 'help', topic: '', ok: true };
  if (positionals.length === 0) return { command: 'help', topic: '', ok: false };
  if (positionals.length > 1) throw usageError(`one URL, not ${positionals.length} arguments: ${positionals.join(' ')}`, '');
  const url = positionals[0]!;
  if (!/^https?:\/\//.test(url))
    throw usageError(
      `"${url}" is neither a command (${[...COMMANDS, 'version', 'help'].join(', ')}) nor an http(s) URL of a bind backend`,
      '',
    );
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
    throw usageError(
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
      throw usageError(`${stray}: only with --client-id (a machine bind); a browser login picks the API on the provider's page`, '');
    return {};
  }
  if (!clientId.trim()) throw usageError('--client-id: is empty', '');
  if ((file === undefined) === (env === undefined))
    throw usageError(
      `--client-id ${clientId}: give its secret with exactly one of --client-secret-file FILE or --client-secret-env VARIABLE`,
      '',
    );
  if (issuer !== undefined && !/^https?:\/\//.test(issuer)) throw usageError(`--oidc-issuer: "${issuer}" is not an http(s) URL`, '');
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
    throw usageError(`--api: "${name}" is not <resource>.<group>, e.g. postgresqlinstances.anynines.com`, '');
  const dot = name.indexOf('.');
  return dot < 0 ? { group: '', resource: name } : { group: name.slice(dot + 1), resource: name.slice(0, dot) };
}
