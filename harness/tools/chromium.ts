/**
 * Debian's Chromium for browser tests (Playwright drives it through playwright-core; Playwright's own browser
 * download cannot work on machines without general network access). Installed with apt-get when missing and the
 * process runs as root, like the Go binaries are built when missing; otherwise the error says what to install.
 * Checked once per process.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';

export const CHROMIUM = '/usr/bin/chromium';

/**
 * Flags for headless Chromium on a machine with a closed network: no sandbox (root), and none of the background
 * connections it would otherwise attempt (refused here, many at a time).
 */
export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

let ensured: Promise<string> | undefined;

function version(): string | undefined {
  if (!existsSync(CHROMIUM)) return undefined;
  const r = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8', timeout: 30_000 });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

/** The path of a working Chromium, installing Debian's package first when it is missing. */
export function ensureChromium(log: (line: string) => void = (l) => process.stderr.write(`[klutch-kit] ${l}\n`)): Promise<string> {
  ensured ??= (async () => {
    if (version()) return CHROMIUM;
    if (process.getuid?.() !== 0) {
      throw new Error(
        `Chromium is not installed (${CHROMIUM}) and this process is not root, so it cannot install it: run \`sudo apt-get install -y chromium\` (Debian's package) and start the tests again`,
      );
    }
    log("installing Debian's chromium for the browser tests (apt-get install -y chromium; about a minute)");
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    const install = () =>
      spawnSync('apt-get', ['install', '-y', '--no-install-recommends', 'chromium'], { env, encoding: 'utf8', timeout: 15 * 60_000 });
    let r = install();
    if (r.status !== 0) {
      log('apt-get install failed; updating the package lists and trying again');
      execFileSync('apt-get', ['update'], { env, stdio: 'ignore', timeout: 10 * 60_000 });
      r = install();
    }
    const v = version();
    if (r.status !== 0 || !v) {
      throw new Error(
        `cannot install Chromium with apt-get (exit ${r.status}): ${(r.stderr || r.stdout || '').trim().split('\n').slice(-5).join('\n')}`,
      );
    }
    log(`installed ${v}`);
    return CHROMIUM;
  })();
  return ensured;
}
