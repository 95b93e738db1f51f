/**
 * What both modes of bench/cnpg print and write: rows of p50/p99 over the claims' samples, the table, the load average
 * seen while the claims ran (the machine is shared: a number without its load cannot be compared), the JSON file.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { dirname } from 'node:path';
import { percentile } from '../measure';

export interface Row {
  readonly what: string;
  readonly n: number;
  readonly p50Ms: number;
  readonly p99Ms: number;
}

export const row = (what: string, xs: readonly number[]): Row => ({
  what,
  n: xs.length,
  p50Ms: percentile(xs, 50),
  p99Ms: percentile(xs, 99),
});

const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;

/** The rows as a fixed-width table, seconds with one decimal. */
export function table(rows: readonly Row[]): string {
  const width = Math.max(4, ...rows.map((r) => r.what.length));
  return [
    `${'what'.padEnd(width)} ${'n'.padStart(4)} ${'p50'.padStart(8)} ${'p99'.padStart(8)}`,
    ...rows.map((r) => `${r.what.padEnd(width)} ${String(r.n).padStart(4)} ${s(r.p50Ms).padStart(8)} ${s(r.p99Ms).padStart(8)}`),
  ].join('\n');
}

export interface LoadSummary {
  /** The 1-minute load average, sampled every `everyMs` while the claims ran. */
  readonly min: number;
  readonly p50: number;
  readonly max: number;
  readonly samples: number;
}

/** Samples the 1-minute load average every `everyMs` from now until `stop()`, which sums it up. */
export function sampleLoad(everyMs = 5_000): { stop(): LoadSummary } {
  const xs = [loadavg()[0]!];
  const timer = setInterval(() => xs.push(loadavg()[0]!), everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      xs.push(loadavg()[0]!);
      const r = (x: number) => Math.round(x * 10) / 10;
      return { min: r(Math.min(...xs)), p50: r(percentile(xs, 50)), max: r(percentile(xs, 100)), samples: xs.length };
    },
  };
}

export const loadLine = (l: LoadSummary) => `load average (1 min) while the claims ran: ${l.min}–${l.max}, median ${l.p50}`;

/** Writes `data` as JSON to `file` (bench/results/...), with the date first. */
export function writeResult(file: string, data: Record<string, unknown>): void {
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${JSON.stringify({ date: new Date().toISOString(), ...data }, null, 2)}\n`);
}
