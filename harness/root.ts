/**
 * The repository root, found by walking up to the package.json named klutch-kit: right both from the source and
 * from a bundle of it (benches run bundled from node_modules/.cache, where a fixed `../..` points elsewhere).
 */
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export function repoRoot(from = dirname(fileURLToPath(import.meta.url))): string {
  for (let dir = from; ; dir = dirname(dir)) {
    const pkg = join(dir, 'package.json');
    if (existsSync(pkg) && (JSON.parse(readFileSync(pkg, 'utf8')) as { name?: string }).name === 'klutch-kit') return dir;
    if (dirname(dir) === dir) throw new Error(`no klutch-kit package.json above ${from}`);
  }
}
