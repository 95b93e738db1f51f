#!/usr/bin/env node
// `npm run bench [name...]`: runs bench/<name>/run.ts for each name (default: every bench), one after the other.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
const all = readdirSync(join(root, 'bench'), { withFileTypes: true })
  .filter((d) => d.isDirectory() && d.name !== 'results')
  .map((d) => d.name)
  .sort();
const names = process.argv.length > 2 ? process.argv.slice(2) : all;
let failed = 0;
for (const name of names) {
  const entry = ['run.ts', 'run.mjs'].map((f) => join(root, 'bench', name, f)).find((f) => existsSync(f));
  if (!entry) {
    console.error(`bench: no bench/${name}/run.ts; choose from ${all.join(', ')}`);
    failed++;
    continue;
  }
  console.log(`\n== bench/${name}`);
  const r = entry.endsWith('.ts')
    ? spawnSync(process.execPath, [join(root, 'scripts', 'run-ts.mjs'), entry], { cwd: root, stdio: 'inherit' })
    : spawnSync(process.execPath, [entry], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) failed++;
}
process.exit(failed ? 1 : 0);
