#!/usr/bin/env node
// Runs a TypeScript entry with plain node: bundles it with esbuild (packages stay external) into
// node_modules/.cache/klutch-kit and imports it. Used by `npm run bench`; tests run under vitest instead.
import { createHash } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build } from 'esbuild';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <entry.ts> [args...]');
  process.exit(2);
}
const abs = resolve(entry);
const outdir = join(root, 'node_modules', '.cache', 'klutch-kit');
mkdirSync(outdir, { recursive: true });
const outfile = join(outdir, `run-${createHash('sha256').update(abs).digest('hex').slice(0, 12)}.mjs`);
await build({ entryPoints: [abs], bundle: true, platform: 'node', format: 'esm', target: 'node20', packages: 'external', outfile, logLevel: 'error' });
process.argv = [process.argv[0], abs, ...args];
await import(pathToFileURL(outfile).href);
