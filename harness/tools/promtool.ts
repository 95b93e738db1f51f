/**
 * promtool, Prometheus's own checker, built from the Go module into the cache: `promtool check rules` loads the alert
 * and recording rules synth writes exactly as a Prometheus server would (PromQL parsed, durations, labels, templates).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

export const PROMTOOL_VERSION = 'v0.316.0';
const moduleDir = wrapperModule('harness/tools/promtool');

/** Path of promtool, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensurePromtool(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: 'github.com/prometheus/prometheus/cmd/promtool',
    out: join(cacheRoot(), `promtool-${PROMTOOL_VERSION}-${wrapperHash(moduleDir)}`, 'promtool'),
    label: `promtool ${PROMTOOL_VERSION}`,
    ldflags: '-s -w',
    minGo: '1.26.7',
    log,
  });
}

/** `promtool check rules <file>`: status 0 when Prometheus would load every rule. */
export function checkRules(promtool: string, file: string): { status: number; output: string } {
  const r = spawnSync(promtool, ['check', 'rules', file], { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status ?? 1, output: `${r.stdout}${r.stderr}` };
}
