/**
 * What the benches read of a process and of their samples, written once: resident and peak memory and CPU time from
 * Linux /proc (0 where the process is gone), and the nearest-rank percentile.
 */
import { readFileSync } from 'node:fs';

/** A memory figure of `/proc/<pid>/status` in MiB: `VmRSS` (resident now) or `VmHWM` (peak resident). */
export function memMiB(pid: number, field: 'VmRSS' | 'VmHWM' = 'VmRSS'): number {
  try {
    const m = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : 0;
  } catch {
    return 0;
  }
}

/** CPU time (user + system) a process has used, in seconds (`/proc/<pid>/stat`, clock ticks of 10 ms). */
export function cpuSeconds(pid: number): number {
  try {
    const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  } catch {
    return 0;
  }
}

/** The nearest-rank p-th percentile of `xs` (NaN for none). */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))] ?? NaN;
}
