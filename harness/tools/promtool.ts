/**
 * promtool, Prometheus's own checker, built from the Go module into the cache: `promtool check rules` loads the alert
 * and recording rules synth writes exactly as a Prometheus server would (PromQL parsed, durations, labels, templates).
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { cacheRoot } from './cache';
import { goBuild, wrapperHash, wrapperModule } from './go';

const PROMTOOL_VERSION = 'v0.316.0';
const moduleDir = wrapperModule('harness/tools/promtool');
/**
 * Prometheus's own tag for leaving out every service-discovery plugin (plugins/*.go): `check rules` reads no scrape
 * configuration. It leaves out 247 of 1,364 packages, among them the largest to compile: the cloud SDKs the plugins
 * bring (AWS EC2 and ECS, AWS SDK v1, Azure compute and network, DigitalOcean, Hetzner, ...).
 */
const TAGS = ['remove_all_sd'];

/** Path of promtool, building it first if needed (a cold build takes minutes and prints progress). */
export async function ensurePromtool(log?: (line: string) => void): Promise<string> {
  return goBuild({
    moduleDir,
    pkg: 'github.com/prometheus/prometheus/cmd/promtool',
    out: join(cacheRoot(), `promtool-${PROMTOOL_VERSION}-${wrapperHash(moduleDir)}-${TAGS.join('-')}`, 'promtool'),
    label: `promtool ${PROMTOOL_VERSION}`,
    ldflags: '-s -w',
    tags: TAGS,
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

/**
 * `promtool test rules <file>`: Prometheus's own rule engine evaluates the alerts over the file's input series and
 * compares what fires (labels and annotations, templates expanded) with the file's expectations; status 0 when all hold.
 */
export function testRules(promtool: string, file: string): { status: number; output: string } {
  const r = spawnSync(promtool, ['test', 'rules', file], { encoding: 'utf8' });
  if (r.error) throw r.error;
  return { status: r.status ?? 1, output: `${r.stdout}${r.stderr}` };
}
