import { describe, expect, it } from 'vitest';
import {
  addressFlag,
  countFlag,
  durationFlag,
  envVariable,
  flagDefault,
  flagHelp,
  logLevelFlag,
  parseFlags,
  switchFlag,
  UsageError,
  type FlagTable,
  type MappedFlag,
} from './flags';

const TABLE: FlagTable = {
  envPrefix: 'DEMO',
  flags: [
    { name: 'listen-address', arg: 'host:port', default: '0.0.0.0:8080', help: 'where to listen' },
    { name: 'leader-election', boolean: true, default: 'true', help: 'elect a leader' },
    { name: 'certs', arg: 'dir', env: 'CERTS_DIR', optional: true, help: 'certificates' },
    { name: 'token', arg: 'secret', help: 'required token' },
    { name: 'api', arg: 'resource.group', multiple: true, optional: true, help: 'repeatable' },
    { name: 'v', short: 'v', arg: 'n', optional: true, help: "klog's verbosity" },
  ],
};

describe('parseFlags', () => {
  it('reads a flag, else its environment variable (prefix or its own); the flag wins', () => {
    const env = { DEMO_LISTEN_ADDRESS: ':1', CERTS_DIR: '/certs', DEMO_TOKEN: '' };
    expect(parseFlags(TABLE, [], env).value('listen-address')).toBe(':1');
    expect(parseFlags(TABLE, ['--listen-address=:2'], env).value('listen-address')).toBe(':2');
    expect(parseFlags(TABLE, [], env).value('certs')).toBe('/certs');
    // An empty variable is unset, as in Kubernetes env from an empty Secret key.
    expect(parseFlags(TABLE, [], env).value('token')).toBeUndefined();
    expect(parseFlags(TABLE, [], env).given('listen-address')).toBe(false);
  });

  it("takes Go's --flag=true|false and --no-flag for a boolean", () => {
    expect(parseFlags(TABLE, ['--leader-election=false']).value('leader-election')).toBe('false');
    expect(parseFlags(TABLE, ['--leader-election=true']).value('leader-election')).toBe('true');
    expect(parseFlags(TABLE, ['--no-leader-election']).value('leader-election')).toBe('false');
    expect(parseFlags(TABLE, [], { DEMO_LEADER_ELECTION: 'false' }).value('leader-election')).toBe('false');
  });

  it("takes klog's -v=2, -v 2 and --v=2", () => {
    for (const argv of [['-v=2'], ['-v', '2'], ['--v=2'], ['-v2']]) expect(parseFlags(TABLE, argv).value('v'), argv.join(' ')).toBe('2');
  });

  it('collects a repeatable flag', () => {
    expect(parseFlags(TABLE, ['--api', 'a.x', '--api=b.y']).values('api')).toEqual(['a.x', 'b.y']);
  });

  it('answers -h and --help; positionals only where allowed', () => {
    expect(parseFlags(TABLE, ['-h']).help).toBe(true);
    expect(parseFlags(TABLE, ['https://x', '--help'], {}, { positionals: true })).toMatchObject({ help: true, positionals: ['https://x'] });
    expect(() => parseFlags(TABLE, ['https://x'])).toThrow(UsageError);
  });

  it('refuses an unknown flag or a missing value, naming it, with the parser error as the cause', () => {
    expect(() => parseFlags(TABLE, ['--nope'])).toThrow("Unknown option '--nope'");
    let err: unknown;
    try {
      parseFlags(TABLE, ['--token']);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(UsageError);
    expect((err as Error).message).toContain('--token');
    expect((err as Error).cause).toBeInstanceOf(Error);
  });
});

describe('flagDefault', () => {
  it('is the default --help says, and a programming error for a flag without one', () => {
    expect(flagDefault(TABLE, 'listen-address')).toBe('0.0.0.0:8080');
    expect(() => flagDefault(TABLE, 'certs')).toThrow('no default for --certs in the flag table');
  });
});

describe('durationFlag', () => {
  it('reads Go durations and refuses anything else, naming the flag', () => {
    expect(durationFlag('timeout', '2m30s')).toBe(150_000);
    expect(durationFlag('timeout', '500ms')).toBe(500);
    expect(() => durationFlag('timeout', '10 minutes')).toThrow(
      new UsageError('--timeout: "10 minutes" is not a duration such as 500ms, 90s, 10m, 2m30s or 1h'),
    );
  });
});

describe('the value readers every process shares', () => {
  it('reads counts and switches, naming the flag and the value it refuses', () => {
    expect(countFlag('workers', '4')).toBe(4);
    expect(countFlag('max', '0', 0)).toBe(0);
    expect(() => countFlag('workers', '0')).toThrow(new UsageError('--workers: "0" is not a whole number of 1 or more'));
    expect(() => countFlag('workers', '1.5')).toThrow('--workers: "1.5" is not a whole number of 1 or more');
    expect([switchFlag('leader-elect', 'true'), switchFlag('leader-elect', 'false')]).toEqual([true, false]);
    expect(() => switchFlag('leader-elect', 'yes')).toThrow('--leader-elect: "yes" is not true or false');
  });

  it("reads --log-level, or klog's -v as Klutch's binaries take it, and notes the mapping", () => {
    const mapped: MappedFlag[] = [];
    expect(logLevelFlag(undefined, undefined, mapped)).toBe('info');
    expect(logLevelFlag('debug', undefined, mapped)).toBe('debug');
    expect([logLevelFlag(undefined, '2', mapped), logLevelFlag(undefined, '4', mapped), logLevelFlag(undefined, '6', mapped)]).toEqual([
      'info',
      'debug',
      'trace',
    ]);
    expect(mapped.map((m) => `${m.flag} ${m.became}`)).toEqual([
      '-v=2 --log-level=info',
      '-v=4 --log-level=debug',
      '-v=6 --log-level=trace',
    ]);
    expect(() => logLevelFlag('debug', '2', [])).toThrow('-v and --log-level: give one (--log-level)');
    expect(() => logLevelFlag(undefined, 'loud', [])).toThrow('-v: "loud" is not a klog verbosity (a whole number, e.g. -v=2)');
    expect(() => logLevelFlag('loud', undefined, [])).toThrow('--log-level: "loud" is not fatal, error, warn, info, debug or trace');
  });
});

describe('flagHelp', () => {
  it('writes each flag with its argument, default or required, and variable', () => {
    const help = flagHelp(TABLE);
    expect(help).toContain('  --listen-address <host:port>\n      where to listen (default: 0.0.0.0:8080); env DEMO_LISTEN_ADDRESS');
    expect(help).toContain('  --token <secret>\n      required token (required); env DEMO_TOKEN');
    expect(help).toContain('  -v, --v <n>');
    expect(help).toContain('env CERTS_DIR');
    expect(envVariable({ flags: TABLE.flags }, 'token')).toBeUndefined();
  });
});

describe('addressFlag', () => {
  it('reads host:port the way every process takes its listen addresses, and names the flag when it is not one', () => {
    expect(addressFlag('probe-address', ':8080')).toEqual({ host: '0.0.0.0', port: 8080 });
    expect(addressFlag('address', '[::1]:9443')).toEqual({ host: '::1', port: 9443 });
    expect(addressFlag('listen-address', '127.0.0.1:0')).toEqual({ host: '127.0.0.1', port: 0 });
    for (const bad of ['nonsense', '1.2.3.4:99999', '::1:8080']) {
      expect(() => addressFlag('listen-address', bad)).toThrow(UsageError);
      expect(() => addressFlag('listen-address', bad)).toThrow(`--listen-address: "${bad}" is not host:port`);
    }
  });
});
