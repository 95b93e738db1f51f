/** Durations on the command line, as kubectl writes them: `90s`, `10m`, `1m30s`, `2h`, `0`. */
import { parseGoDuration } from '../lib/duration';

/** Milliseconds of a duration; throws naming the flag and the accepted form. */
export function parseDuration(flag: string, text: string): number {
  const ms = parseGoDuration(text);
  if (ms === undefined) throw new Error(`${flag}: "${text}" is not a duration; write it like 90s, 10m or 1m30s`);
  return ms;
}

/** `9m05s`, `45s`: what a countdown shows. */
export function formatDuration(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const m = Math.floor(total / 60);
  const s = total % 60;
  return m ? `${m}m${String(s).padStart(2, '0')}s` : `${s}s`;
}
