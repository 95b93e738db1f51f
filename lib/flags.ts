/**
 * The one flag mechanism of every process we ship (bind backend, konnector, composition function, kubectl-bind, the
 * sandbox): a table of flags per process. The table is parsed (strict: an unknown flag is a UsageError naming it),
 * writes `--help`, names each flag's environment variable, and is what the manuals' flag tables are checked against
 * (`test/support/docs.ts`). Validation of values stays with each process, which knows what a value means.
 *
 * Go's flag syntax is understood as Klutch's binaries take it: `--flag=true|false` for a boolean, and klog's `-v=2`.
 */
import { parseArgs } from 'node:util';
import { parseAddress } from './address';
import { parseGoDuration } from './duration';

/** A wrong command line: the message names the flag, and the process exits 2. */
export class UsageError extends Error {}

export interface Flag {
  readonly name: string;
  /** One-letter form (`-n`, klog's `-v`). */
  readonly short?: string;
  /** What the value is, in --help (`duration`, `host:port`); none for a boolean. */
  readonly arg?: string;
  readonly help: string;
  /** Shown in --help and checked in the manual; undefined means required, or no default where `optional`. */
  readonly default?: string;
  readonly optional?: boolean;
  /** A switch: `--flag`, `--flag=true|false`, `--no-flag`. */
  readonly boolean?: boolean;
  /** May be given more than once (`--api a --api b`). */
  readonly multiple?: boolean;
  /** The environment variable read when the flag is not given, where it is not the table's `<envPrefix>_<NAME>`. */
  readonly env?: string;
}

export interface FlagTable {
  /** Every flag, in --help order. `-h`/`--help` is added by the mechanism. */
  readonly flags: readonly Flag[];
  /** Each flag is also read from `<envPrefix>_<FLAG_NAME>` (the flag wins); none: only a flag's own `env`. */
  readonly envPrefix?: string;
}

/** The environment variable of a flag, if it has one: `BACKEND_OIDC_ISSUER_URL` for `--oidc-issuer-url`. */
export function envVariable(table: FlagTable, flag: Flag | string): string | undefined {
  const f = typeof flag === 'string' ? table.flags.find((x) => x.name === flag) : flag;
  if (!f) throw new Error(`no flag --${String(flag)} in the table`);
  return f.env ?? (table.envPrefix ? `${table.envPrefix}_${f.name.toUpperCase().replaceAll('-', '_')}` : undefined);
}

export interface ParsedFlags {
  /** `-h` or `--help` was given. */
  readonly help: boolean;
  /** `--version` was given (only where the parser was asked to take it). */
  readonly version: boolean;
  readonly positionals: readonly string[];
  /** A flag's value, else its environment variable's (empty counts as unset); a boolean as `true`/`false`. */
  value(name: string): string | undefined;
  /** Every value of a `multiple` flag, in order. */
  values(name: string): readonly string[];
  /** Whether the flag itself (not its variable) was given. */
  given(name: string): boolean;
}

/** Parses `argv` by `table`; `env` supplies the flags' variables. Throws UsageError on an unknown or malformed flag. */
export function parseFlags(
  table: FlagTable,
  argv: readonly string[],
  env: NodeJS.ProcessEnv = {},
  o: { readonly positionals?: boolean; readonly version?: boolean } = {},
): ParsedFlags {
  const byName = new Map(table.flags.map((f) => [f.name, f]));
  const { args, switches } = goSyntax(table, argv);
  let parsed: { values: Record<string, string | boolean | (string | boolean)[] | undefined>; positionals: string[] };
  try {
    parsed = parseArgs({
      args,
      options: {
        ...Object.fromEntries(
          table.flags.map((f) => [
            f.name,
            {
              type: f.boolean ? ('boolean' as const) : ('string' as const),
              ...(f.short ? { short: f.short } : {}),
              ...(f.multiple ? { multiple: true } : {}),
            },
          ]),
        ),
        help: { type: 'boolean', short: 'h' },
        ...(o.version ? { version: { type: 'boolean' as const } } : {}),
      },
      allowPositionals: o.positionals ?? false,
      strict: true,
    });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional[\s\S]*$/, ''), { cause: e });
  }
  const values = { ...parsed.values, ...switches };
  const fromEnv = (name: string): string | undefined => {
    const variable = envVariable(table, byName.get(name) ?? name);
    return variable ? env[variable] || undefined : undefined;
  };
  return {
    help: values.help === true,
    version: o.version === true && values.version === true,
    positionals: parsed.positionals,
    value(name) {
      if (!byName.has(name)) throw new Error(`no flag --${name} in the table`);
      const v = values[name];
      if (Array.isArray(v)) return v.length ? String(v[v.length - 1]) : fromEnv(name);
      // pflag takes `-v=2`; parseArgs leaves the `=` on a short option's value.
      if (typeof v === 'string') return byName.get(name)?.short && v.startsWith('=') ? v.slice(1) : v;
      if (typeof v === 'boolean') return String(v);
      return fromEnv(name);
    },
    values(name) {
      const v = values[name];
      return Array.isArray(v) ? v.map(String) : v === undefined ? [] : [String(v)];
    },
    given(name) {
      return values[name] !== undefined;
    },
  };
}

/**
 * Go's flag package takes `--flag=true|false` for a boolean, and `--no-flag` is the usual negation; parseArgs knows
 * neither (its own negation would also swallow a flag that is named `no-...`, like kubectl-bind's `--no-browser`).
 * Those forms are taken out here; the last one given of a switch wins.
 */
function goSyntax(table: FlagTable, argv: readonly string[]): { args: string[]; switches: Record<string, boolean> } {
  const names = new Set(table.flags.map((f) => f.name));
  const booleans = new Set(table.flags.filter((f) => f.boolean).map((f) => f.name));
  const switches: Record<string, boolean> = {};
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === '--') {
      args.push(...argv.slice(i));
      break;
    }
    const m = /^--?([a-z0-9-]+)=(true|false)$/.exec(a);
    const negated = /^--no-([a-z0-9-]+)$/.exec(a);
    if (m && booleans.has(m[1] as string)) switches[m[1] as string] = m[2] === 'true';
    else if (negated && booleans.has(negated[1] as string) && !names.has(a.slice(2))) switches[negated[1] as string] = false;
    else {
      const plain = /^--([a-z0-9-]+)$/.exec(a);
      if (plain && booleans.has(plain[1] as string)) delete switches[plain[1] as string];
      args.push(a);
    }
  }
  return { args, switches };
}

/**
 * The default `--help` says for a flag, for a parser to fall back to: the default is written once, in the table, so
 * the help, the manual's check and what the process runs with cannot disagree. No default is a programming error.
 */
export function flagDefault(table: FlagTable, name: string): string {
  const d = table.flags.find((f) => f.name === name)?.default;
  if (d === undefined) throw new Error(`no default for --${name} in the flag table`);
  return d;
}

/** A Go-style duration flag's value in milliseconds (`500ms`, `90s`, `2m30s`, `1h`); a UsageError names the flag. */
export function durationFlag(flag: string, value: string): number {
  const ms = parseGoDuration(value);
  if (ms === undefined) throw new UsageError(`--${flag}: "${value}" is not a duration such as 500ms, 90s, 10m, 2m30s or 1h`);
  return ms;
}

/** A whole-number flag's value (`min` or more); a UsageError names the flag. */
export function countFlag(flag: string, value: string, min = 1): number {
  if (!/^\d+$/.test(value) || Number(value) < min) throw new UsageError(`--${flag}: "${value}" is not a whole number of ${min} or more`);
  return Number(value);
}

/** A `true`/`false` flag's value (Go's `--flag=false`); a UsageError names the flag. */
export function switchFlag(flag: string, value: string): boolean {
  if (value !== 'true' && value !== 'false') throw new UsageError(`--${flag}: "${value}" is not true or false`);
  return value === 'true';
}

/** A flag Klutch's binaries take that became one of ours; a process logs each at start, naming the one to prefer. */
export interface MappedFlag {
  readonly flag: string;
  readonly became: string;
  readonly prefer: string;
}

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace'];

/**
 * `--log-level`, or klog's `-v` as Klutch's binaries take it (0-3 info, 4-5 debug, 6 or more trace; noted in
 * `mapped`); giving both is refused.
 */
export function logLevelFlag(level: string | undefined, verbosity: string | undefined, mapped: MappedFlag[], fallback = 'info'): string {
  if (verbosity === undefined) {
    const l = level ?? fallback;
    if (!LOG_LEVELS.includes(l)) throw new UsageError(`--log-level: "${l}" is not ${LOG_LEVELS.slice(0, -1).join(', ')} or trace`);
    return l;
  }
  if (level !== undefined) throw new UsageError('-v and --log-level: give one (--log-level)');
  if (!/^\d+$/.test(verbosity)) throw new UsageError(`-v: "${verbosity}" is not a klog verbosity (a whole number, e.g. -v=2)`);
  const made = Number(verbosity) >= 6 ? 'trace' : Number(verbosity) >= 4 ? 'debug' : 'info';
  mapped.push({ flag: `-v=${verbosity}`, became: `--log-level=${made}`, prefer: '--log-level' });
  return made;
}

/** A listen-address flag's host and port (`host:port`, `:8080`, `[::1]:8080`); a UsageError names the flag. */
export function addressFlag(flag: string, value: string): { host: string; port: number } {
  try {
    return parseAddress(value);
  } catch (e) {
    throw new UsageError(`--${flag}: ${(e as Error).message}`, { cause: e });
  }
}

/** The flags' part of --help: per flag its forms, what it does, its default and its variable. */
export function flagHelp(table: FlagTable | readonly Flag[]): string {
  const t: FlagTable = 'flags' in table ? table : { flags: table };
  return t.flags
    .map((f) => {
      const forms = `  ${f.short ? `-${f.short}, ` : ''}--${f.name}${f.boolean ? '' : ` <${f.arg ?? 'value'}>`}`;
      const def = f.default !== undefined ? ` (default: ${f.default})` : f.optional || f.boolean ? '' : ' (required)';
      const variable = envVariable(t, f);
      return `${forms}\n      ${f.help}${def}${variable ? `; env ${variable}` : ''}`;
    })
    .join('\n');
}

/** The flag table's own help line. */
export const HELP_FLAG = '  -h, --help\n      this help';
/** The help line of `--version`, for a process whose parser takes it (`parseFlags(..., { version: true })`). */
export const VERSION_FLAG = '      --version\n      print the release this is and exit';
