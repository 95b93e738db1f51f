#!/usr/bin/env node
// Runs a TypeScript entry with plain node: bundles it (scripts/bundle.mjs, packages kept external) and imports it.
// Used by `npm run bench` and by test fixtures that must run in a process of their own; tests run under vitest.
import { createHash } from 'node:crypto';
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { bundle } from './bundle.mjs';
import { underNode24 } from './node-runtime.mjs';

// The sandbox, the benches and the tools run on Node 24, as the tests and the images do.
underNode24(import.meta.url);

const [entry, ...args] = process.argv.slice(2);
if (!entry) {
  console.error('usage: node scripts/run-ts.mjs <entry.ts> [args...]');
  process.exit(2);
}
const abs = resolve(entry);
let out;
try {
  out = await bundle({ name: `run-${createHash('sha256').update(abs).digest('hex').slice(0, 12)}`, entry: abs });
} catch (e) {
  console.error(`run-ts: ${e instanceof Error ? e.message : String(e)}`);
  process.exit(1);
}
process.argv = [process.argv[0], abs, ...args];
await import(pathToFileURL(out.file).href);
