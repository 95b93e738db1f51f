/**
 * `npm run bare-machine -- --yes`: the check that the README's commands work on a new machine (issue 33). It removes
 * every Debian package the harness installs (harness/tools/programs.ts) but the toolchain every machine of this kind
 * comes with, then runs `npm run sandbox -- --short` — the Pod platform's start and the round trip — and shows that it
 * installs what it needs, with the time of each part. `--test` runs the README's test command (`npm test`) instead, which
 * must install what its suites need and pass. `--cold-cache` also starts from an empty tool cache (every Go tool and
 * image built again: about 70 minutes on 2 cores).
 *
 * It changes the machine (apt-get purge), so it asks for --yes; run it where nothing else needs those packages.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { debianVersions } from './debian';
import { PROGRAMS } from './programs';

/** What a new machine of the project's kind has already (env: machines/go.md), and Go's cgo toolchain needs. */
const KEPT = new Set(['iproute2', 'gcc', 'binutils', 'libc6-dev', 'ca-certificates', 'tzdata']);

const log = (line: string) => process.stderr.write(`[bare-machine] ${line}\n`);

function main(argv: readonly string[]): number {
  if (argv.includes('-h') || argv.includes('--help') || !argv.includes('--yes')) {
    process.stdout.write(
      'usage: npm run bare-machine -- --yes [--test] [--cold-cache]\n\n' +
        'Removes (apt-get purge) the Debian packages the harness installs, then runs `npm run sandbox -- --short` and prints\n' +
        'how long each part took. It changes this machine: --yes says you mean it.\n' +
        "  --test        run `npm test` (the README's test command) instead of the sandbox\n" +
        '  --cold-cache  also start from an empty tool cache (KLUTCH_KIT_CACHE in a new folder): every Go tool and image is built\n',
    );
    return argv.includes('--yes') || argv.includes('-h') || argv.includes('--help') ? 0 : 2;
  }
  const packages = [...new Set(Object.values(PROGRAMS).map((p) => p.package))].filter((p) => !KEPT.has(p));
  const installed = debianVersions(packages)
    .lines.split('\n')
    .filter(Boolean)
    .map((l) => l.split('=')[0]!);
  const rows: [string, number][] = [];
  const timed = (label: string, f: () => void) => {
    const started = Date.now();
    f();
    rows.push([label, (Date.now() - started) / 1000]);
  };
  if (installed.length > 0) {
    log(`removing ${installed.join(', ')}`);
    timed('apt-get purge', () => {
      const r = spawnSync('apt-get', ['purge', '-y', '--autoremove', ...installed], {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
      });
      if (r.status !== 0) throw new Error(`apt-get purge ${installed.join(' ')} failed (exit ${r.status})`);
    });
  }
  const env = { ...process.env };
  if (argv.includes('--cold-cache')) env.KLUTCH_KIT_CACHE = mkdtempSync(join(tmpdir(), 'klutch-kit-cold-cache-'));
  const test = argv.includes('--test');
  const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-bare-sandbox-'));
  const what = test ? 'npm test' : 'the sandbox';
  const command = test ? ['test'] : ['run', '--silent', 'sandbox', '--', '--short', '--dir', dir];
  log(`npm ${command.join(' ')}${env.KLUTCH_KIT_CACHE ? ` (cache ${env.KLUTCH_KIT_CACHE})` : ''}`);
  let status = 0;
  timed(`npm ${command.join(' ')}`, () => {
    status = spawnSync('npm', command, { stdio: 'inherit', env }).status ?? 1;
  });
  // Asked anew: debianVersions remembers its answers for the process, and the sandbox changed them.
  const back = installed.filter((p) => spawnSync('dpkg-query', ['-W', p], { stdio: 'ignore' }).status !== 0);
  process.stdout.write(`${rows.map(([l, t]) => `${t.toFixed(1).padStart(8)}s  ${l}`).join('\n')}\n`);
  if (status !== 0) {
    log(`${what} failed (exit ${status})${test ? '' : `; its logs are in ${dir}`}`);
    return 1;
  }
  if (back.length > 0) {
    log(
      `${what} did not install ${back.join(', ')}: it does not run them (${test ? 'the sandbox' : 'the tests'} may; drop one from programs.ts only if nothing does)`,
    );
  }
  log(`${test ? 'npm test passed' : 'the sandbox reached its round trip'} from a machine without ${installed.join(', ') || 'any of them'}`);
  return 0;
}

try {
  process.exitCode = main(process.argv.slice(2));
} catch (e) {
  log(`failed: ${e instanceof Error ? e.message : String(e)}`);
  process.exitCode = 1;
}
