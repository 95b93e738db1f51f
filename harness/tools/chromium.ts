/**
 * Debian's Chromium for browser tests (Playwright drives it through playwright-core; Playwright's own browser
 * download cannot work on machines without general network access). Installed with apt-get when missing, like the Go
 * binaries are built when missing; checked once per process.
 */
import { spawnSync } from 'node:child_process';
import { ensurePrograms } from './programs';

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

/** The path of a working Chromium, installing Debian's package first when it is missing (harness/tools/programs.ts). */
export function ensureChromium(log: (line: string) => void = (l) => process.stderr.write(`[klutch-kit] ${l}\n`)): Promise<string> {
  ensured ??= (async () => {
    const { chromium } = await ensurePrograms(['chromium'], log);
    const r = spawnSync(chromium, ['--version'], { encoding: 'utf8', timeout: 30_000 });
    if (r.status !== 0)
      throw new Error(`${chromium} --version failed (exit ${r.status ?? r.signal}): ${(r.stderr || r.stdout || '').trim()}`);
    return chromium;
  })();
  return ensured;
}
