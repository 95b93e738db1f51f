#!/usr/bin/env node
// `npm test`: installs the npm dependencies when they are missing or older than package-lock.json, runs every vitest project, and ends with the
// plain line `N passed, N failed` that CI reads. The tools the tests need (crank, the Kubernetes binaries) are built
// by the vitest global setups, once, and cached.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { underNode24 } from './node-runtime.mjs';

// The tests run on Node 24, as the images do, whatever Node started npm (the machines ship Node 20, past its end).
underNode24(import.meta.url);

const root = join(dirname(fileURLToPath(import.meta.url)), '..');
// npm's record of what node_modules holds is written after each install: a lockfile newer than it (a pull, a
// checkout that changed the dependencies) means node_modules is stale.
const installed = join(root, 'node_modules', '.package-lock.json');
const stale =
  !existsSync(join(root, 'node_modules', '.bin', 'vitest')) ||
  !existsSync(installed) ||
  statSync(join(root, 'package-lock.json')).mtimeMs > statSync(installed).mtimeMs;
if (stale) {
  console.error('[klutch-kit] installing npm dependencies (npm ci): node_modules is missing or older than package-lock.json ...');
  const ci = spawnSync('npm', ['ci', '--no-audit', '--no-fund'], { cwd: root, stdio: 'inherit' });
  if (ci.status !== 0) process.exit(ci.status ?? 1);
}

const dir = mkdtempSync(join(tmpdir(), 'klutch-kit-test-'));
const report = join(dir, 'report.json');
const args = ['vitest', 'run', '--reporter=default', '--reporter=json', `--outputFile.json=${report}`, ...process.argv.slice(2)];
const run = spawnSync('npx', args, { cwd: root, stdio: 'inherit' });

let passed = 0;
let failed = 0;
try {
  const r = JSON.parse(readFileSync(report, 'utf8'));
  passed = r.numPassedTests;
  failed = r.numFailedTests;
  // A test file that failed to load, or a failing global setup, has no failed test but must still count.
  failed += r.testResults.filter((f) => f.status === 'failed' && f.assertionResults.every((a) => a.status !== 'failed')).length;
} catch {
  failed += 1;
}
// KLUTCH_KIT_TEST_REPORT=<file>: keep vitest's JSON report (each file's start time and duration: what bounds the run).
if (process.env.KLUTCH_KIT_TEST_REPORT && existsSync(report)) copyFileSync(report, process.env.KLUTCH_KIT_TEST_REPORT);
rmSync(dir, { recursive: true, force: true });
if (run.status !== 0 && failed === 0) failed = 1;
console.log(`${passed} passed, ${failed} failed`);
process.exit(run.status === 0 && failed === 0 ? 0 : 1);
